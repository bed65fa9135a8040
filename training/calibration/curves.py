"""The learning curve computed: for each judgement file and size, seeded draws of whole inputs,
a head calibrated on each draw as `fluency calibrate` calibrates it
(`training.calibration.start.calibrate_from`) and judged on the file's other inputs beside the
shipped heads (refitted without the file: `training.calibration.shipped_held_out`) and minus
the length (`FileCurve`, a `Draw` each). `training.calibration.learning_curve` is the command
and its tables.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from features.errors import InputError
from scorer.evidence.ranks import spearman
from scorer.heads import Head
from training.calibration.curve_plot import CALIBRATED, FIGURES, GENERAL, GENRE, START
from training.calibration.start import calibrate_from, named_readings
from training.heads import (
    FOLDS,
    MINUS_LENGTH,
    READING_MODES,
    HeadFile,
    ScrambleCheck,
    group_taus,
    members,
    subset,
)

__all__ = [
    "CALIBRATE_SIZES",
    "SIZES",
    "Draw",
    "FileCurve",
    "curves",
    "file_curve",
    "shipped_columns",
]


SIZES = (25, 50, 100, 200)
CALIBRATE_SIZES = (25, 50, 100, 200, 400, 800)
MIN_HELD = 50
GAIN_SAMPLES = 200


@dataclass(frozen=True)
class Draw:
    n: int  # outputs the head was calibrated on
    n_held: int  # outputs it was judged on
    head: str  # the head written
    switched: bool  # it left the head it started from
    figures: dict[str, tuple[float, float, float]]  # column -> (rho, tau, system accuracy)
    gains: tuple[float, ...]  # rho(calibrated) - rho(start) on draws of the held-out inputs


@dataclass(frozen=True)
class FileCurve:
    name: str
    genre: str
    start: str  # the head the calibration started from
    columns: tuple[str, ...]  # CALIBRATED, START, the in-sample heads, minus the length
    draws: dict[int, list[Draw]]  # size -> its draws, for the sizes the file holds
    no_systems: str | None  # why it has no system-level figure (None: it has one)

    def mean(self, n: int, column: str, figure: str) -> float:
        k = FIGURES.index(figure)
        values = [d.figures[column][k] for d in self.draws[n] if column in d.figures]
        values = [v for v in values if not math.isnan(v)]
        return float(np.mean(values)) if values else math.nan

    def gain_interval(self, n: int) -> tuple[float, float]:
        """95% interval of the mean over draws of the calibrated head's gain in rho over the
        head it started from (each draw's held-out inputs resampled, sample k of every draw
        averaged)."""
        g = np.array([d.gains for d in self.draws[n]], dtype=float).mean(axis=0)
        g = g[np.isfinite(g)]
        if not len(g):
            return math.nan, math.nan
        low, high = np.percentile(g, [2.5, 97.5])
        return float(low), float(high)


def shipped_columns(card: Mapping, file: HeadFile) -> dict[str, np.ndarray]:
    """{column: values over `file`} of the bundle's general head and its head for the file's
    genre, each applied as the service applies it (`scorer.heads.read_head`: the
    inputs under its reading, clipped to the card's range, then its weights). A head whose
    reading the file was not read under is left out."""
    from scorer.heads import card_heads, read_head

    sections = card_heads(card)
    sections = {GENERAL: sections.get("general"), GENRE: sections.get(file.genre)}
    out = {}
    for column, section in sections.items():
        if not section:
            continue
        head = read_head(card.get("name", ""), card, section, what=column)
        if head.reading in file.columns:
            out[column] = head.predict(file.columns)
    return out


def _judge(
    columns: Mapping[str, np.ndarray], held: HeadFile, by_system: bool
) -> dict[str, tuple[float, float, float]]:
    draws = None
    if by_system:
        from scorer.evidence.system_level import SystemDraws

        draws = SystemDraws(held.human, held.systems, held.groups, n_samples=0)
    out = {}
    for name, values in columns.items():
        taus = group_taus(values, held)
        tau = float(np.nanmean(taus)) if np.isfinite(taus).any() else math.nan
        system = draws.point(values)[0] if draws is not None else math.nan
        out[name] = (spearman(values, held.human), tau, system)
    return out


def _gains(mine: np.ndarray, theirs: np.ndarray, held: HeadFile, seed) -> tuple[float, ...]:
    """rho(mine) - rho(theirs) on `GAIN_SAMPLES` draws of the held-out inputs."""
    from training.heads import rhos

    rng = np.random.default_rng(seed)
    groups = members(held)
    both = np.column_stack([mine, theirs])
    out = []
    for _ in range(GAIN_SAMPLES):
        rows = np.concatenate([groups[k] for k in rng.integers(0, len(groups), len(groups))])
        a, b = rhos(both[rows], held.human[rows])
        out.append(round(float(a - b), 5))
    return tuple(out)


def file_curve(
    file: HeadFile,
    start: Head,
    named: Sequence[Head],
    references: Mapping[str, np.ndarray],
    readings: Sequence[str] = READING_MODES,
    *,
    sizes: Sequence[int] = SIZES,
    draws: int = 5,
    seed: int = 12345,
    folds: int = FOLDS,
    check: ScrambleCheck | None = None,
    max_inputs: int = 2,
    n_samples: int = 1000,
    min_held: int = MIN_HELD,
) -> FileCurve:
    """The learning curve of one file (module doc): calibrated from `start` among `named`
    (`training.calibration.start.calibrate_from`), judged beside `start` and `references` ({column:
    values over the file})."""
    from scorer.evidence.genres import NOT_SYSTEMS
    from scorer.evidence.system_level import skip_reason

    if draws < 1:
        raise InputError(f"draws must be at least 1, got {draws}")
    no_systems = skip_reason(file.systems, not_a_generator=NOT_SYSTEMS.get(file.name))
    inputs = list(dict.fromkeys(file.groups))
    owned: dict[str, list[int]] = {g: [] for g in inputs}
    for i, g in enumerate(file.groups):
        owned[g].append(i)
    start_values = start.predict(file.columns)
    out: dict[int, list[Draw]] = {}
    for d in range(draws):
        order = np.random.default_rng([seed, d]).permutation(len(inputs))
        cumulative = np.cumsum([len(owned[inputs[k]]) for k in order])
        for n in sorted(set(sizes)):
            k = int(np.searchsorted(cumulative, n)) + 1  # inputs drawn to hold n outputs
            if k >= len(inputs) - 1 or len(file.human) - cumulative[k - 1] < min_held:
                continue
            train_rows = np.sort([i for j in order[:k] for i in owned[inputs[j]]])
            held_rows = np.sort([i for j in order[k:] for i in owned[inputs[j]]])
            train, held = subset(file, train_rows), subset(file, held_rows)
            outcome = calibrate_from(
                [train],
                start,
                named,
                readings,
                folds=folds,
                max_inputs=max_inputs,
                check=check,
                n_samples=n_samples,
                seed=seed,
            )
            mine = outcome.head.predict(held.columns)
            columns = {CALIBRATED: mine, START: start_values[held_rows]}
            columns |= {c: v[held_rows] for c, v in references.items()}
            columns[MINUS_LENGTH] = held.baselines[MINUS_LENGTH]
            figures = _judge(columns, held, no_systems is None)
            gains = _gains(mine, columns[START], held, [seed, d, n])
            out.setdefault(n, []).append(
                Draw(
                    len(train_rows),
                    len(held_rows),
                    outcome.head.label,
                    not outcome.kept,
                    figures,
                    gains,
                )
            )
    names = (CALIBRATED, START, *references, MINUS_LENGTH)
    return FileCurve(
        file.name, file.genre, start.label, names, dict(sorted(out.items())), no_systems
    )


def curves(
    files: Sequence[HeadFile],
    card: Mapping,
    readings: Sequence[str] = READING_MODES,
    *,
    only: Sequence[str] | None = None,
    held_out: bool = True,
    start_from: str | None = None,
    **options,
) -> list[FileCurve]:
    """`file_curve` of each file (of `only`, where given), calibrated from the heads of the
    bundle whose card is `card`: with `held_out`, each refitted without the file where it was
    fitted on it (`training.calibration.shipped_held_out`), the shipped heads beside them in-sample;
    without, as shipped, from the head `start_from` names where it names one."""
    from tqdm import tqdm

    from training.calibration.shipped_held_out import held_out_heads, starting_head
    from training.calibration.start import start_head

    found = []
    for f in tqdm([f for f in files if only is None or f.name in only], desc="learning curves",
                  unit=" file"):  # fmt: skip
        if held_out:
            heads = held_out_heads(card, files, f.name)
            picked = starting_head(heads, f.genre)
            if picked is None:
                raise InputError(f"{card.get('name')} has no head to start {f.name} from")
            start = picked[1]
            references = shipped_columns(card, f)
        else:
            heads = None
            start = start_head(card, f.genre, start_from)[1]
            references = {}
        named = named_readings(card, readings, f.columns, heads=heads)
        found.append(file_curve(f, start, named, references, readings, **options))
    return found
