"""How many ratings a head of one's own needs, against the heads it starts from:
`python -m training.calibration.learning_curve`.

For each judgement file and each size (25, 50, 100, 200 outputs), `draws` seeded draws of whole
inputs (groups) taken in a random order until they hold that many outputs. On each draw a head
is calibrated as `fluency calibrate` calibrates it (`training.calibration.start.calibrate_from`: the
shipped head for the file's genre unless the drawn ratings show better), then judged on the file's
other inputs beside the shipped heads and minus the length, all on the same outputs: Spearman's rho
over outputs, the mean per-input Kendall tau (`heads_select.group_taus`) and, where the outputs
name six or more systems, the system-level pairwise accuracy (`scorer.evidence.system_level`).
Each figure is a mean over draws. A draw of one seed is the front of one order of the inputs,
so the draw of 50 holds the draw of 25.

The comparison is fair to the shipped heads: each shipped head that was fitted on the file is
refitted without it (`training.calibration.shipped_held_out`: its own inputs and reading, weights
fitted on its other files), and the calibration starts from those held-out heads. The shipped heads
as shipped, which have seen every rating of the file, stay beside them as in-sample columns.
The gain of the calibrated head over the held-out head of the file's genre (its general head
where it has none) gets a 95% interval: the held-out inputs of each draw resampled, the gain in
rho averaged over draws.

A size is skipped where fewer than 50 outputs or 2 inputs would be left to judge on. Rows are
read as `python -m training.heads` reads them (the same outputs of large files, from the row
cache, `features.rows.default_cache_dir`):

    python -m training.calibration.learning_curve --model default --dev ../shared/dev --jobs 1 \\
        --out build/learning_curve.md --plot docs/calibrate_curves.png
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from features.errors import InputError
from training.calibration.curve_plot import CALIBRATED, FIGURES, GENERAL, GENRE, START, plot
from training.calibration.start import calibrate_from, named_readings
from training.heads.choose import FOLDS, subset
from training.heads.files import MINUS_LENGTH, READINGS
from training.heads.linear import Linear
from training.heads.select import HeadFile, ScrambleCheck, group_taus, members, spearman

__all__ = [
    "CALIBRATE_SIZES",
    "SIZES",
    "Draw",
    "FileCurve",
    "curves",
    "draw_options",
    "file_curve",
    "load_curves",
    "main",
    "plot",
    "shipped_columns",
    "table",
    "wins",
]

SIZES = (25, 50, 100, 200)
CALIBRATE_SIZES = (25, 50, 100, 200, 400, 800)
MIN_HELD = 50
MARGIN = 0.01  # "at least the held-out head": within this much of its mean rho
GAIN_SAMPLES = 200
BEYOND = ", and above the held-out head beyond the interval"


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
    genre, each applied as the service applies it (`scorer.calibration.load_head_section`: the
    inputs under its reading, clipped to the card's range, then its weights). A head whose
    reading the file was not read under is left out."""
    from scorer.calibration import load_head_section

    heads = card.get("heads") or {}
    heads = {GENERAL: heads.get("general") or card.get("calibration"), GENRE: heads.get(file.genre)}
    out = {}
    for column, head in heads.items():
        if not head or head.get("aggregate") not in file.columns:
            continue
        stage = load_head_section(card.get("name", ""), card, head, what=column)
        X = np.column_stack([file.columns[head["aggregate"]][c] for c in stage.inputs])
        if stage.clip is not None:
            X = np.clip(X, *stage.clip)
        out[column] = np.asarray(stage.model.predict(X), dtype=float)
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
    from training.calibration.switch import rhos

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
    start: Linear,
    named: Sequence[Linear],
    references: Mapping[str, np.ndarray],
    readings: Sequence[str] = READINGS,
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
    readings: Sequence[str] = READINGS,
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


def _fmt(v: float) -> str:
    return "–" if math.isnan(v) else f"{v:.3f}"


def table(found: Sequence[FileCurve]) -> str:
    """Markdown: per file and size, each column's mean over draws of rho / tau (/ system-level
    accuracy, where the file has it), how many outputs it was judged on, the calibrated head's
    gain in rho over the head it started from with its 95% interval, and in how many draws it
    left that head."""
    order = (CALIBRATED, START, GENRE, GENERAL, MINUS_LENGTH)
    header = ["file", "genre", "ratings", "judged on", *order, "gain in rho [95%]", "switched"]
    lines = [
        "mean over draws of Spearman rho / per-input Kendall tau / system-level pairwise "
        "accuracy (files naming 6+ systems), on each file's inputs not drawn; "
        f"{START}: the head the calibration started from, refitted without the file",
        "",
        "| " + " | ".join(header) + " |",
        "|---|---|---:|---:|" + "---|" * (len(header) - 4),
    ]
    for c in found:
        figures = FIGURES if c.no_systems is None else FIGURES[:2]
        for n, draws in c.draws.items():
            cells = [c.name, c.genre, str(n), f"{np.mean([d.n_held for d in draws]):.0f}"]
            for column in order:
                if column not in c.columns:
                    cells.append("–")
                    continue
                cells.append(" / ".join(_fmt(c.mean(n, column, f)) for f in figures))
            gain = c.mean(n, CALIBRATED, "rho") - c.mean(n, START, "rho")
            low, high = c.gain_interval(n)
            cells.append(f"{gain:+.3f} [{low:+.3f}, {high:+.3f}]")
            cells.append(f"{sum(d.switched for d in draws)} of {len(draws)}")
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def wins(found: Sequence[FileCurve], figure: str = "rho") -> str:
    """Markdown: per size, on how many files the calibrated head's mean `figure` is at least
    the held-out head it started from less `MARGIN`, above it beyond the gain's interval (rho),
    and at least each in-sample shipped head less `MARGIN` (a file counts where both figures
    exist)."""
    lines = [
        f"files where the calibrated head's mean {figure} is at least each column's less "
        f"{MARGIN}{BEYOND if figure == 'rho' else ''}",
        "",
        f"| ratings | at least the {START} | above it beyond the interval | at least the "
        f"{GENRE} | at least the {GENERAL} |",
        "|---:|---|---|---|---|",
    ]
    for n in sorted({n for c in found for n in c.draws}):
        cells = []
        for column in (START, "beyond", GENRE, GENERAL):
            above = total = 0
            for c in found:
                if n not in c.draws:
                    continue
                mine = c.mean(n, CALIBRATED, figure)
                if column == "beyond":
                    if figure != "rho":
                        continue
                    total += 1
                    above += c.gain_interval(n)[0] > 0
                    continue
                theirs = c.mean(n, column, figure) if column in c.columns else math.nan
                if math.isnan(mine) or math.isnan(theirs):
                    continue
                total += 1
                above += mine >= theirs - MARGIN
            cells.append(f"{above} of {total}" if total else "–")
        lines.append(f"| {n} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    from scorer.bundles import load_configured_all
    from scorer.config import from_env
    from training.heads.files import add_rows_options, read_head_files, read_scrambles

    ap = argparse.ArgumentParser(
        prog="python -m training.calibration.learning_curve",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--model", default="default", help="the bundle whose heads are compared")
    add_rows_options(ap, jobs=1, files_help="only these files of --dev (names)")
    ap.add_argument("--sizes", type=int, nargs="+", default=list(SIZES), help="ratings drawn")
    ap.add_argument("--draws", type=int, default=5, help="draws a size")
    ap.add_argument("--aggregate", action="append", choices=READINGS, help="readings tried")
    ap.add_argument("--scrambles", default="", help="real text for the scramble check")
    ap.add_argument("--floor", type=float, default=0.95, help="share of shuffles scored lower")
    ap.add_argument("--samples", type=int, default=1000, help="bootstrap samples of a choice")
    ap.add_argument("--max-inputs", type=int, default=2, help="fitted columns added at most")
    ap.add_argument("--out", help="write the Markdown tables here as well")
    ap.add_argument("--plot", help="write the plot here (PNG)")
    ap.add_argument("--json", help="write every draw here")
    ap.add_argument(
        "--load",
        nargs="+",
        metavar="JSON",
        help="draw nothing: read the curves these --json files hold (runs over parts of the "
        "files, say) and write their tables and plot",
    )
    args = ap.parse_args(argv)
    if args.load:
        found = sorted((c for p in args.load for c in load_curves(p)), key=lambda c: c.name)
        return _write(found, args)
    (scorer,) = load_configured_all([args.model], from_env())
    readings = args.aggregate or list(READINGS)
    # Every file is read, the curves drawn for those named: a head is refitted without a file
    # on the other files it was fitted on.
    files = read_head_files(scorer, args, readings, every=True, heads=True)
    check = read_scrambles(scorer, args, readings)
    only = [Path(f).stem for f in args.files] or None
    found = curves(
        files, scorer.card, readings, sizes=args.sizes, only=only, **draw_options(args, check)
    )
    return _write(found, args)


def draw_options(args: argparse.Namespace, check: ScrambleCheck | None) -> dict:
    """The options of `curves` that `--draws`, `--seed`, `--max-inputs` and `--samples` set,
    and the scramble check: the same in this command and `fluency calibrate --learning-curve`."""
    return {
        "draws": args.draws,
        "seed": args.seed,
        "check": check,
        "max_inputs": args.max_inputs,
        "n_samples": args.samples,
    }


def _write(found: Sequence[FileCurve], args: argparse.Namespace) -> int:
    text = "\n\n".join([table(found), wins(found, "rho"), wins(found, "tau")])
    print(text)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text + "\n")
    if args.plot:
        Path(args.plot).parent.mkdir(parents=True, exist_ok=True)
        plot(found, args.plot)
    if args.json and not args.load:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps([asdict(c) for c in found], indent=1) + "\n")
    return 0


def load_curves(path: str | Path) -> list[FileCurve]:
    """The curves a `--json` file holds."""
    out = []
    for c in json.loads(Path(path).read_text()):
        draws = {
            int(n): [
                Draw(
                    **{
                        **d,
                        "figures": {k: tuple(v) for k, v in d["figures"].items()},
                        "gains": tuple(d["gains"]),
                    }
                )
                for d in ds
            ]
            for n, ds in c["draws"].items()
        }
        out.append(FileCurve(**{**c, "columns": tuple(c["columns"]), "draws": draws}))
    return out


if __name__ == "__main__":
    raise SystemExit(main())
