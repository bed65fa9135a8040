"""The ridge every linear and learned head is fitted with, and the rule that picks its alpha.

`fit_ridge`: scikit-learn's `StandardScaler` and `Ridge` on weighted rows (each dataset and
genre weighing the same, `training.heads.metrics.figures.unit_weights`), one fit for every alpha (an
alpha a target, the targets the same ratings: one Gram matrix for all), returned in the
columns' own units so that a head is served as NumPy arithmetic from its card.

`within_one_se`: the alphas whose held-out figure is within one standard error of the best
alpha's, the error of the paired per-unit differences (files or folds); the strongest of them
is chosen, as in scikit-learn's `GridSearchCV` example of a `refit` rule: the best point
over-fits the development files.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = ["ALPHAS", "fit_ridge", "within_one_se"]

# Ridge strengths tried by the learned heads and the residual ridges, per 1,000 weighted rows
# (scaled with the rows of each fit).
ALPHAS = (10.0, 30.0, 100.0, 300.0, 1000.0, 3000.0, 10000.0, 30000.0)


def fit_ridge(
    X: np.ndarray,
    y: np.ndarray,
    weights: np.ndarray,
    alphas: Sequence[float],
    *,
    signs: np.ndarray | None = None,
    positive: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """(coef (alphas, columns), intercept (alphas,)): a ridge on the standardised columns of
    `X` (weighted mean and standard deviation; a constant column keeps scale 1), each column
    turned by its sign in `signs` first (with `positive`, so that every weight takes the sign
    given), then unscaled: prediction = X @ coef[k] + intercept[k]."""
    from sklearn.linear_model import Ridge
    from sklearn.preprocessing import StandardScaler

    with np.errstate(invalid="ignore"):  # a column constant on these rows: scale 1 below
        scaler = StandardScaler().fit(X, sample_weight=weights)
    scale = np.where(scaler.scale_ > 0, scaler.scale_, 1.0)
    Z = (X - scaler.mean_) / scale
    if signs is not None:
        Z = Z * signs
    targets = np.tile(np.asarray(y, dtype=float)[:, None], len(alphas))
    ridge = Ridge(alpha=np.asarray(alphas, dtype=float), positive=positive)
    ridge.fit(Z, targets, sample_weight=weights)
    coef = np.atleast_2d(ridge.coef_)
    if signs is not None:
        coef = coef * signs
    coef = coef / scale
    bias = np.atleast_1d(ridge.intercept_)  # each alpha's intercept from its own row's dot
    return coef, np.array([bias[k] - coef[k] @ scaler.mean_ for k in range(len(coef))])


def within_one_se(alphas: Sequence[float], gaps: np.ndarray, paired: np.ndarray) -> list[float]:
    """Those of `alphas` whose gap to the best (`gaps[k]`: its figure minus the best alpha's, 0
    for the best) is at most one standard error below 0, the error of its paired per-unit gaps
    (`paired[k]`, a row of one per file or fold; one unit: no error). `max` of them is the
    strongest, the one chosen."""
    paired = np.atleast_2d(np.asarray(paired, dtype=float))
    n_units = paired.shape[1]
    spread = paired.std(axis=1, ddof=1) if n_units > 1 else np.zeros(len(alphas))
    se = spread / math.sqrt(max(n_units, 1))
    return [float(a) for a, gap, e in zip(alphas, gaps, se, strict=True) if gap + e >= 0]
