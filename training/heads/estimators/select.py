"""Choosing a head: few inputs, each keeping the sign it has alone, judged on held-out datasets.

A head is a reading of a text of several sentences and a short list of inputs (the GLEU score,
feature columns), combined linearly. It is chosen by forward selection on held-out figures:

- Every single input is judged first, each oriented by the sign of its own correlation with
  people on the training units only (so a held-out unit never sets its own sign).
- The head starts from the best single input. An input is added only where the held-out
  criterion (mean rho + mean per-input tau) rises with a 95% interval above zero: a paired
  bootstrap over the inputs (groups) of every held-out file, both heads' predictions fixed.
- With a scramble check (`ScrambleCheck`), a head must also score real sentences above their
  shuffles: inputs that do not (alone or together) are never its start nor an addition.
- A fit is a ridge with non-negative weights on inputs standardised and turned by their signs,
  so an input keeps the sign it has alone: two correlated inputs with opposite weights cancel
  inside the training range and not outside it.

Units held out are datasets within a genre (a genre head: every dataset of the genre held out
in turn) or whole genres (a general head: every genre held out in turn, datasets weighing the
same within a genre, genres the same in the criterion). scikit-learn's cross-validation has no
"leave one genre out with nested means" splitter that reports per-file rank correlations, and
no forward selection with a bootstrap stopping rule, so both are written here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from scorer.evidence.ranks import spearman
from scorer.heads import GLEU_INPUT, Head
from scorer.readings import SAID_AGAIN
from training.heads.data.checks import ScrambleCheck
from training.heads.data.judged import HeadFile
from training.heads.estimators import kinds
from training.heads.estimators.ridge import fit_ridge
from training.heads.metrics.figures import (
    Judgement,
    group_taus,
    judge,
    means,
    members,
    nanmean,
    orient,
    unit_weights,
)

__all__ = [
    "Fitted",
    "LinearKind",
    "Selection",
    "beats",
    "fit_head",
    "forward_select",
    "held_out",
    "select_head",
]

ALPHA = 1.0  # ridge strength on standardised inputs; a few inputs over thousands of rows


@dataclass(frozen=True)
class Fitted:
    """A linear head: prediction = X @ coef + intercept over `inputs` in their own units."""

    reading: str
    inputs: tuple[str, ...]
    coef: np.ndarray
    intercept: float
    signs: tuple[float, ...]  # each input's own sign on the fit files
    # The fixed weight taken off per unit of the text's share said again (`said_again`): 0 where
    # the head scores what a text says again at or below the text without it.
    penalty: float = 0.0

    def predict(self, file: HeadFile) -> np.ndarray:
        return self.scores(file.columns)

    def scores(self, columns) -> np.ndarray:
        """Its scores of texts from their columns ({reading: {input: one value a text}})."""
        cols = columns[self.reading]
        X = np.column_stack([cols[c] for c in self.inputs])
        out = X @ self.coef + self.intercept
        return out - self.penalty * cols[SAID_AGAIN] if self.penalty else out

    def head(self, files: Sequence[HeadFile], *, label: str = "") -> Head:
        """The head as a card holds it: the GLEU score first (weight 0 when the head does not
        read it), each input capped on the side where it raises the score at the edge of the
        range it took on `files` (the GLEU score open: a text below every judged one reads
        lower), the weight on what is said again last, fixed and unbounded."""
        inputs = [GLEU_INPUT, *[c for c in self.inputs if c != GLEU_INPUT]]
        weight = dict(zip(self.inputs, self.coef.tolist(), strict=True))
        coef = [weight.get(c, 0.0) for c in inputs]
        low, high = [], []
        for c, w in zip(inputs, coef, strict=True):
            values = np.concatenate([f.columns[self.reading][c] for f in files])
            low.append(float(values.min()) if w < 0 else -np.inf)
            high.append(float(values.max()) if w > 0 else np.inf)
        if coef[0] != 0:
            low[0], high[0] = -np.inf, np.inf
        head = Head(inputs, coef, self.intercept, self.reading, (low, high), label=label)
        return head.with_weight(SAID_AGAIN, -self.penalty) if self.penalty else head


def fit_head(files: Sequence[HeadFile], reading: str, inputs: Sequence[str]) -> Fitted:
    """Non-negative ridge on standardised, sign-turned inputs (each dataset and genre weighing
    the same), returned in the inputs' own units (`training.heads.estimators.ridge.fit_ridge`). A
    weight the fit sets to 0 stays 0."""
    signs = np.array([orient(files, reading, c) for c in inputs])
    X = np.vstack([np.column_stack([f.columns[reading][c] for c in inputs]) for f in files])
    y = np.concatenate([f.target for f in files])
    coef, intercept = fit_ridge(X, y, unit_weights(files), [ALPHA], signs=signs, positive=True)
    return Fitted(reading, tuple(inputs), coef[0], float(intercept[0]), tuple(signs.tolist()))


class LinearKind:
    """A kind of candidate (`training.heads.estimators.kinds`): `inputs` under `reading`, combined
    linearly. One input is its sign on the fit files (`sign_`), more a non-negative ridge
    (`head_`, `fit_head`)."""

    def __init__(self, reading: str, inputs: Sequence[str], check: ScrambleCheck | None = None):
        self.reading = reading
        self.inputs = tuple(inputs)
        self.check = check

    def fit(self, files: Sequence[HeadFile]) -> LinearKind:
        if len(self.inputs) == 1:  # one input: its sign on the training units is the whole fit
            sign = orient(files, self.reading, self.inputs[0])
            self.head_ = Fitted(self.reading, self.inputs, np.array([sign]), 0.0, (sign,))
        else:
            self.head_ = fit_head(files, self.reading, self.inputs)
        if self.check is not None:  # as it would ship: with its weight on what is said again
            self.head_ = self.check.settle(self.head_)
        return self

    def predict(self, file: HeadFile) -> np.ndarray:
        return self.head_.predict(file)


def held_out(
    files: Sequence[HeadFile],
    reading: str,
    inputs: Sequence[str],
    by_genre: bool,
    check: ScrambleCheck | None = None,
) -> dict[str, np.ndarray]:
    """{file: predictions of the head fitted without the file's unit (its dataset, or with
    `by_genre` its genre)}: `LinearKind` held out (`training.heads.estimators.kinds.held_out`), each
    fit with its weight on what is said again where `check` holds the said-again check."""
    return kinds.held_out(LinearKind(reading, inputs, check), files, by_genre)


def bootstrap_gain(
    new: Mapping[str, np.ndarray],
    old: Mapping[str, np.ndarray],
    files: Sequence[HeadFile],
    by_genre: bool,
    *,
    n_samples: int = 200,
    seed: int = 12345,
) -> tuple[float, float]:
    """95% percentile interval of criterion(new) - criterion(old): the groups of every file
    resampled with replacement, the same draw for both heads."""
    rng = np.random.default_rng(seed)
    genres = {f.name: f.genre for f in files} if by_genre else None
    prepared = [
        (f, members(f), group_taus(new[f.name], f), group_taus(old[f.name], f)) for f in files
    ]
    gains = np.empty(n_samples)
    for b in range(n_samples):
        per_new, per_old = {}, {}
        for f, groups, tau_new, tau_old in prepared:
            pick = rng.integers(0, len(groups), len(groups))
            rows = np.concatenate([groups[k] for k in pick])
            per_new[f.name] = (spearman(new[f.name][rows], f.human[rows]), nanmean(tau_new[pick]))
            per_old[f.name] = (spearman(old[f.name][rows], f.human[rows]), nanmean(tau_old[pick]))
        rn, tn = means(per_new, genres)
        ro, to = means(per_old, genres)
        gains[b] = (rn + np.nan_to_num(tn)) - (ro + np.nan_to_num(to))
    low, high = np.percentile(gains, [2.5, 97.5])
    return float(low), float(high)


@dataclass
class Step:
    inputs: tuple[str, ...]
    judgement: Judgement
    gain_interval: tuple[float, float] | None  # of the criterion against the step before


@dataclass
class Selection:
    reading: str
    steps: list[Step]  # empty when no input passes the scramble check
    singles: dict[str, Judgement]  # input -> its held-out figures alone
    scrambles: dict[tuple[str, ...], float] = field(default_factory=dict)  # checked heads

    @property
    def inputs(self) -> tuple[str, ...]:
        return self.steps[-1].inputs

    @property
    def judgement(self) -> Judgement:
        return self.steps[-1].judgement


def forward_select(
    files: Sequence[HeadFile],
    reading: str,
    candidates: Sequence[str],
    *,
    by_genre: bool,
    max_inputs: int = 4,
    n_samples: int = 200,
    seed: int = 12345,
    progress=None,
    check: ScrambleCheck | None = None,
) -> Selection:
    """The best single input, then inputs added one at a time while the held-out criterion
    rises with a bootstrap interval above zero (module docstring); with `check`, only heads
    that pass it (fitted on every file) are candidates."""
    singles = {}
    preds_of = {}
    scrambles: dict[tuple[str, ...], float] = {}

    def passes(inputs: tuple[str, ...]) -> bool:
        if check is None:
            return True
        if inputs not in scrambles:
            scrambles[inputs] = check.accuracy(fit_head(files, reading, inputs))  # settled
        return scrambles[inputs] >= check.floor

    for c in candidates:
        preds_of[(c,)] = held_out(files, reading, [c], by_genre, check)
        singles[c] = judge(preds_of[(c,)], files, by_genre)
        passes((c,))
        if progress is not None:
            progress.update(1)
    ranked = sorted(singles, key=lambda c: -np.nan_to_num(singles[c].criterion, nan=-9))
    eligible = [c for c in ranked if passes((c,))]
    if not eligible:
        return Selection(reading, [], singles, scrambles)
    best = eligible[0]
    steps = [Step((best,), singles[best], None)]
    current = preds_of[(best,)]
    while len(steps[-1].inputs) < max_inputs:
        tried = {}
        for c in candidates:
            if c in steps[-1].inputs:
                continue
            inputs = (*steps[-1].inputs, c)
            preds = held_out(files, reading, inputs, by_genre, check)
            tried[inputs] = (judge(preds, files, by_genre), preds)
        order = sorted(tried, key=lambda k: -np.nan_to_num(tried[k][0].criterion, nan=-9))
        order = [k for k in order if tried[k][0].criterion > steps[-1].judgement.criterion]
        inputs = next((k for k in order if passes(k)), None)
        if inputs is None:
            break
        judgement, preds = tried[inputs]
        if not judgement.criterion > steps[-1].judgement.criterion:
            break
        low, high = bootstrap_gain(preds, current, files, by_genre, n_samples=n_samples, seed=seed)
        if low <= 0:
            break
        steps.append(Step(inputs, judgement, (low, high)))
        current = preds
    return Selection(reading, steps, singles, scrambles)


def select_head(
    files: Sequence[HeadFile],
    readings: Sequence[str],
    candidates: Mapping[str, Sequence[str]],
    *,
    by_genre: bool,
    max_inputs: int = 4,
    n_samples: int = 200,
    seed: int = 12345,
    progress=None,
    check: ScrambleCheck | None = None,
) -> tuple[Selection | None, dict[str, Selection]]:
    """The best `forward_select` over `readings` (by the held-out criterion), and each
    reading's selection. `candidates`: reading -> its candidate inputs."""
    by_reading = {
        r: forward_select(
            files,
            r,
            candidates[r],
            by_genre=by_genre,
            max_inputs=max_inputs,
            n_samples=n_samples,
            seed=seed,
            progress=progress,
            check=check,
        )
        for r in readings
    }
    found = [s for s in by_reading.values() if s.steps]
    if not found:
        return None, by_reading
    best = max(found, key=lambda s: np.nan_to_num(s.judgement.criterion, nan=-9))
    return best, by_reading


def beats(a: Judgement, b: Judgement) -> bool:
    """`a` above `b` on both held-out means (tau counts only where both have one)."""
    tau_ok = math.isnan(a.tau) or math.isnan(b.tau) or a.tau > b.tau
    return a.rho > b.rho and tau_ok
