"""Which metrics explain human scores? Ordinary least squares with statsmodels.

Foster (2008, section 5) regresses human preference on every automatic metric, then keeps the
significant ones by stepwise selection; Bangalore et al. (2000, section 4) regress normalised
human judgements on simple tree accuracy and the substitution count, then rescale the fitted
model so that a perfect sentence scores 1. Both are here.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import statsmodels.api as sm

from scorer.errors import InputError

__all__ = ["BangaloreModel", "OlsResult", "bangalore_model", "fit_ols", "stepwise"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class OlsResult:
    """A fitted linear model; `coefficients` and `p_values` include "const"."""

    predictors: tuple[str, ...]
    coefficients: dict[str, float]
    p_values: dict[str, float]
    r_squared: float
    adj_r_squared: float
    f_p_value: float
    n: int

    def predict(self, predictors: Mapping[str, Sequence[float]]) -> np.ndarray:
        out = np.full(len(next(iter(predictors.values()))), self.coefficients["const"])
        for name in self.predictors:
            out = out + self.coefficients[name] * np.asarray(predictors[name], dtype=float)
        return out


def _design(
    y: Sequence[float], predictors: Mapping[str, Sequence[float]], names: Sequence[str]
) -> tuple[np.ndarray, np.ndarray]:
    target = np.asarray(y, dtype=float)
    missing = [n for n in names if n not in predictors]
    if missing:
        raise InputError(f"unknown predictor(s) {missing}; have {sorted(predictors)}")
    cols = [np.asarray(predictors[n], dtype=float) for n in names]
    for name, col in zip(names, cols, strict=True):
        if col.shape != target.shape:
            raise InputError(f"predictor {name!r} has {col.size} values for {target.size} scores")
    if not all(np.isfinite(c).all() for c in [target, *cols]):
        raise InputError("regression inputs contain NaN or infinity")
    if target.size <= len(names) + 1:
        raise InputError(f"{target.size} observations cannot fit {len(names)} predictors")
    x = np.column_stack(cols) if cols else np.empty((target.size, 0))
    return target, sm.add_constant(x, has_constant="add")


def fit_ols(y: Sequence[float], predictors: Mapping[str, Sequence[float]], names=None) -> OlsResult:
    """OLS of `y` on the named predictors (all of them when `names` is None), plus a constant."""
    names = tuple(predictors) if names is None else tuple(names)
    target, x = _design(y, predictors, names)
    fit = sm.OLS(target, x).fit()
    labels = ("const", *names)
    return OlsResult(
        names,
        dict(zip(labels, map(float, fit.params), strict=True)),
        dict(zip(labels, map(float, fit.pvalues), strict=True)),
        float(fit.rsquared),
        float(fit.rsquared_adj),
        float(fit.f_pvalue) if names else float("nan"),
        int(target.size),
    )


def stepwise(
    y: Sequence[float],
    predictors: Mapping[str, Sequence[float]],
    *,
    p_enter: float = 0.05,
    p_remove: float = 0.10,
    max_steps: int = 100,
) -> tuple[OlsResult, list[str]]:
    """Bidirectional stepwise selection on p-values, starting from the full model as Foster did.

    Each step drops the least significant predictor while its p > `p_remove`, otherwise adds the
    most significant excluded one with p < `p_enter`; it stops when neither applies. `p_enter`
    < `p_remove` keeps it from cycling. Returns the final fit and the steps taken ("-x", "+y").
    """
    if not p_enter < p_remove:
        raise InputError(f"p_enter ({p_enter}) must be below p_remove ({p_remove})")
    chosen, steps = list(predictors), []
    for _ in range(max_steps):
        fit = fit_ols(y, predictors, chosen)
        worst = max(chosen, key=lambda n: fit.p_values[n], default=None)
        if worst is not None and fit.p_values[worst] > p_remove:
            chosen.remove(worst)
            steps.append(f"-{worst}")
            continue
        trials = {
            n: fit_ols(y, predictors, [*chosen, n]).p_values[n]
            for n in predictors
            if n not in chosen
        }
        best = min(trials, key=trials.get, default=None)
        if best is not None and trials[best] < p_enter:
            chosen.append(best)
            steps.append(f"+{best}")
            continue
        break
    log.info("stepwise: %s -> %s", " ".join(steps) or "no change", chosen)
    return fit_ols(y, predictors, chosen), steps


@dataclass(frozen=True)
class BangaloreModel:
    """human ~ a * simple tree accuracy + b * substitutions (+ c * length) + const, and the
    accuracy metric it suggests: the fit without length, divided by a perfect sentence's value
    (accuracy 1, no substitutions), so a perfect sentence scores 1 (Bangalore et al. 2000, 4.2)."""

    with_length: OlsResult
    without_length: OlsResult

    @property
    def perfect(self) -> float:
        c = self.without_length.coefficients
        return c["const"] + c["simple_tree_accuracy"]

    def metric(
        self, simple_tree_accuracy: Sequence[float], substitutions: Sequence[float]
    ) -> np.ndarray:
        if self.perfect == 0:
            raise InputError("the fitted model gives a perfect sentence 0: it cannot be rescaled")
        raw = self.without_length.predict(
            {"simple_tree_accuracy": simple_tree_accuracy, "substitutions": substitutions}
        )
        return raw / self.perfect


def bangalore_model(
    human: Sequence[float],
    simple_tree_accuracy: Sequence[float],
    substitutions: Sequence[float],
    length: Sequence[float],
) -> BangaloreModel:
    """Fit both of Bangalore's models from the counts `features.accuracy` reports per segment
    (`simple_tree_accuracy`, `simple_tree_S`, `hyp_len`)."""
    predictors = {
        "simple_tree_accuracy": simple_tree_accuracy,
        "substitutions": substitutions,
        "length": length,
    }
    return BangaloreModel(
        fit_ols(human, predictors),
        fit_ols(human, predictors, ["simple_tree_accuracy", "substitutions"]),
    )
