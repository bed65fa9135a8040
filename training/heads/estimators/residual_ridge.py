"""A ridge on many columns fitted to what the head in hand leaves of a user's ratings: the last
rounds of `fluency calibrate` (`training.calibration.start`). Two of them, each one candidate:

- the feature columns the head in hand does not read (every tier), each held to the range it
  took in the fit;
- on the neural tier, SmolLM2's states (`neural_states.v1`, the columns only a learned head
  reads), open.

The head in hand (the shipped head, or what the earlier rounds made of it) is put on the user's
scale by a positive slope and an intercept, and a ridge on the standardised columns is fitted
to the rest, the residual. A strong ridge gives the head in hand back, so the fit is shrunk
toward it; starting from the shipped learned head, toward that head. Each dataset weighs the
same (`training.heads.metrics.figures.unit_weights`).

The alpha (per 1,000 weighted rows, as `training.heads.learned.ridge` counts it) is chosen on the
user's folds of whole inputs: the strongest whose held-out criterion (mean rho + per-input
tau) is, paired fold by fold, within one standard error of the best alpha's. As a candidate
it is judged in folds of whole inputs with the alpha chosen again inside each training part,
so no output is scored by a fit, or an alpha, that saw its input.

scikit-learn's `RidgeCV` chooses its alpha by squared error on rows, not by the rank criterion
on inputs the rounds are judged by; the folds here are `training.heads.estimators.fitted`'s, one
`Ridge` fit a fold serving every alpha (an alpha a target).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from scorer.contributions import GROUPS
from scorer.heads import Head
from training.heads.data.judged import HeadFile, subset
from training.heads.estimators.fitted import BASE, fold_parts
from training.heads.estimators.ridge import ALPHAS, fit_ridge, within_one_se
from training.heads.metrics.draws import point_means
from training.heads.metrics.figures import unit_weights

__all__ = [
    "ALPHAS",
    "FEATURES",
    "RESIDUAL_RIDGE",
    "STATES",
    "ResidualRidge",
    "RestFit",
    "choose_alpha",
    "fit_rest",
    "predict_rest",
    "state_columns",
]

STATES = "SmolLM2's states"
FEATURES = "the feature columns"
RESIDUAL_RIDGE = "residual ridge"  # `Head.kind` of the head these rounds write


def state_columns(file: HeadFile, reading: str) -> tuple[str, ...]:
    """The columns under `reading` that only a learned head reads (`GROUPS`): SmolLM2's states."""
    return tuple(c for c in file.columns.get(reading, {}) if c.startswith(tuple(GROUPS)))


@dataclass(frozen=True)
class RestFit:
    """prediction = slope * head in hand + clip(columns) @ coef + intercept, one per alpha."""

    slope: float
    coef: np.ndarray  # (alphas, columns), in the columns' own units
    intercept: np.ndarray  # (alphas,)
    low: np.ndarray  # each column held to [low, high] (-inf, inf: open)
    high: np.ndarray


def fit_rest(
    files: Sequence[HeadFile], reading: str, columns: Sequence[str], alphas, *, clip: bool = False
) -> RestFit:
    """The head in hand (`BASE`) put on the ratings' scale by a positive slope, then a ridge on
    `columns` for each of `alphas` fitted to what it leaves
    (`training.heads.estimators.ridge.fit_ridge`)."""
    from sklearn.linear_model import LinearRegression

    x = np.concatenate([f.columns[reading][BASE] for f in files])
    X = np.vstack([np.column_stack([f.columns[reading][c] for c in columns]) for f in files])
    low = X.min(axis=0) if clip else np.full(X.shape[1], -np.inf)
    high = X.max(axis=0) if clip else np.full(X.shape[1], np.inf)
    y = np.concatenate([f.target for f in files])
    w = unit_weights(files)
    line = LinearRegression(positive=True).fit(x[:, None], y, sample_weight=w)
    slope = float(line.coef_[0])
    rest = y - slope * x - float(line.intercept_)
    strengths = np.asarray(alphas, dtype=float) * len(y) / 1000.0
    coef, intercept = fit_ridge(X, rest, w, strengths)
    return RestFit(slope, coef, intercept + float(line.intercept_), low, high)


def predict_rest(fit: RestFit, file: HeadFile, reading: str, columns: Sequence[str]) -> np.ndarray:
    """(outputs, alphas) predictions."""
    X = np.clip(np.column_stack([file.columns[reading][c] for c in columns]), fit.low, fit.high)
    return fit.slope * file.columns[reading][BASE][:, None] + X @ fit.coef.T + fit.intercept


def _out_of_fold(
    parts, files: Sequence[HeadFile], reading: str, columns: Sequence[str], alphas, clip: bool
) -> dict[str, np.ndarray]:
    """{file: (outputs, alphas) predictions, each by a fit without the output's fold}, over
    the folds `parts` (`training.heads.estimators.fitted.fold_parts`)."""
    out = {f.name: np.zeros((len(f.human), len(alphas))) for f in files}
    for train, held in parts:
        fit = fit_rest(train, reading, columns, alphas, clip=clip)
        for f in files:
            out[f.name][held[f.name]] = predict_rest(fit, subset(f, held[f.name]), reading, columns)
    return out


def _criteria(files: Sequence[HeadFile], preds: dict[str, np.ndarray]) -> np.ndarray:
    heads = [
        {f.name: preds[f.name][:, a] for f in files} for a in range(preds[files[0].name].shape[1])
    ]
    rho, tau = point_means(heads, files)
    return rho + np.nan_to_num(tau)


def choose_alpha(
    files: Sequence[HeadFile],
    reading: str,
    columns: Sequence[str],
    *,
    folds: int,
    seed: int,
    alphas: Sequence[float] = ALPHAS,
    clip: bool = False,
) -> float:
    """The strongest alpha whose criterion on the folds (module docstring) is within one
    standard error of the best alpha's; the strongest of all where the files cannot be folded."""
    alphas = sorted(alphas)
    parts = fold_parts(files, folds, seed)
    if parts is None:
        return float(alphas[-1])
    preds = _out_of_fold(parts, files, reading, columns, alphas, clip)
    per_fold = []
    for _, held in parts:
        part = [subset(f, held[f.name]) for f in files]
        part = [p for p in part if len(p.human) > 1]
        if part:
            per_fold.append(_criteria(part, {p.name: preds[p.name][held[p.name]] for p in part}))
    whole = _criteria(files, preds)
    best = int(np.nanargmax(np.nan_to_num(whole, nan=-np.inf)))
    F = np.nan_to_num(np.array(per_fold))
    paired = np.ascontiguousarray((F - F[:, [best]]).T)  # a row per alpha, a column per fold
    return max(within_one_se(alphas, whole - whole[best], paired))


@dataclass(frozen=True)
class ResidualRidge:
    """The candidate: `base` (the head in hand) plus a ridge on `columns` (`what` names them),
    all under `reading`; with `clip`, each column held to the range it took in the fit."""

    reading: str
    base: Head
    columns: tuple[str, ...]
    what: str = STATES
    clip: bool = False
    alpha: float | None = None  # fixed (chosen elsewhere, held out); None: on the folds

    @property
    def label(self) -> str:
        return f"{self.base.label} + a ridge on {self.what}"

    def _alpha(self, files: Sequence[HeadFile], folds: int, seed: int) -> float:
        if self.alpha is not None:
            return float(self.alpha)
        return choose_alpha(
            files, self.reading, self.columns, folds=folds, seed=seed, clip=self.clip
        )

    def cross_validated(
        self, files: Sequence[HeadFile], folds: int, seed: int
    ) -> dict[str, np.ndarray] | None:
        """{file: each output scored by a fit (and an alpha) chosen without its input's fold};
        `files` hold the head in hand as `training.heads.estimators.fitted.BASE` (`with_base`)."""
        parts = fold_parts(files, folds, seed)
        if parts is None:
            return None
        out = {f.name: np.zeros(len(f.human)) for f in files}
        for train, held in parts:
            alpha = self._alpha(train, folds, seed)
            fit = fit_rest(train, self.reading, self.columns, [alpha], clip=self.clip)
            for f in files:
                rows = held[f.name]
                found = predict_rest(fit, subset(f, rows), self.reading, self.columns)
                out[f.name][rows] = found[:, 0]
        return out

    def fit(self, files: Sequence[HeadFile], folds: int, seed: int) -> Head:
        """Fitted on every output, alpha chosen on the folds: one `Head` over the head in
        hand's inputs (its clips kept) and the columns (their own clips), a column the head in
        hand reads already taking the sum of both weights where neither clips it."""
        alpha = self._alpha(files, folds, seed)
        fit = fit_rest(files, self.reading, self.columns, [alpha], clip=self.clip)
        b = self.base
        weights = dict(zip(b.inputs, fit.slope * b.coef, strict=True))
        low = dict(zip(b.inputs, b.low, strict=True))
        high = dict(zip(b.inputs, b.high, strict=True))
        for c, w, lo, hi in zip(self.columns, fit.coef[0], fit.low, fit.high, strict=True):
            if c in weights:
                if np.isfinite([low[c], high[c], lo, hi]).any():
                    raise ValueError(f"{b.label} or the ridge clips {c}: their weights cannot add")
                weights[c] += float(w)
                continue
            weights[c], low[c], high[c] = float(w), lo, hi
        inputs = tuple(weights)
        return Head(
            inputs,
            [weights[c] for c in inputs],
            fit.slope * b.intercept + float(fit.intercept[0]),
            self.reading,
            ([low[c] for c in inputs], [high[c] for c in inputs]),
            label=f"{self.label} (alpha {alpha:g} per 1,000 rows)",
            kind=RESIDUAL_RIDGE,
        )
