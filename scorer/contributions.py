"""Which features moved a score, and by how much: the model's own arithmetic, read back.

The shipped model is linear after scaling: score = b + sum_i w_i * (x_i - mean_i) / scale_i
(`RankSVM`, or an `SVC` with a linear kernel). Each term is feature i's contribution, and with
the intercept b (the score of a text whose every feature sits at the training mean) they add
up to the score exactly: a feature below its mean with a positive weight pulls the score down.

A non-linear model (an RBF `SVC`, `RankSVM(kernel="rbf")`) has no such decomposition. There the
contribution of feature i is an occlusion estimate, f(z) - f(z with z_i = 0): how much the score
changes when that feature alone is put back to its training mean. The terms need not add up;
`residual` says by how much they miss, and `method` says which reading was used.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["Contribution", "Contributions", "contributions", "linear_weights"]


@dataclass(frozen=True)
class Contribution:
    feature: str  # "<extractor>/<name>"
    value: float  # this text's value
    typical: float  # the training mean (real and generated texts alike)
    contribution: float  # signed: what this feature adds to the score


@dataclass(frozen=True)
class Contributions:
    method: str  # "linear" (exact) or "occlusion" (an approximation)
    exact: bool  # True: intercept + sum of contributions == score
    intercept: float  # score of a text at the training mean (every z_i = 0)
    features: list[Contribution]  # every feature, largest |contribution| first
    residual: float  # score - intercept - sum of contributions (0 for a linear model)

    def top(self, n: int) -> tuple[list[Contribution], float]:
        """The `n` largest contributions and the sum of the others."""
        return self.features[:n], float(sum(c.contribution for c in self.features[n:]))


def linear_weights(svm) -> tuple[np.ndarray, float] | None:
    """(w, b) with decision_function(z) = z @ w + b, or None when the model is not linear."""
    if getattr(svm, "map_", None) is not None:  # RankSVM on a kernel approximation
        return None
    try:
        coef = np.asarray(svm.coef_, dtype=float)
    except AttributeError:  # SVC with a non-linear kernel: coef_ is refused
        return None
    intercept = np.atleast_1d(np.asarray(svm.intercept_, dtype=float))
    if coef.ndim == 2 and coef.shape[0] != 1:  # several classes: no single score
        return None
    return coef.ravel(), float(intercept[0])


def contributions(pipeline, rows: Sequence[Mapping[str, float]]) -> list[Contributions]:
    """Contributions for feature rows (as the pipeline's extract step yields them), read from
    the fitted `vectorize`, `scale` and last (SVM) steps."""
    if not rows:
        return []
    steps = pipeline.named_steps
    names = list(steps["vectorize"].get_feature_names_out())
    X = np.asarray(steps["vectorize"].transform(list(rows)), dtype=float)
    scaler = steps["scale"]
    Z = np.asarray(scaler.transform(X), dtype=float)
    mean = getattr(scaler, "mean_", None)
    mean = np.zeros(len(names)) if mean is None else np.asarray(mean, dtype=float)
    svm = pipeline.steps[-1][1]
    scores = np.asarray(svm.decision_function(Z), dtype=float).ravel()
    linear = linear_weights(svm)
    if linear is not None:
        w, b = linear
        terms = Z * w
        intercept = np.full(len(Z), b)
        method = "linear"
    else:
        terms = np.empty_like(Z)
        for i in range(Z.shape[1]):
            put_back = Z.copy()
            put_back[:, i] = 0.0
            terms[:, i] = scores - np.asarray(svm.decision_function(put_back)).ravel()
        intercept = np.full(
            len(Z), float(np.ravel(svm.decision_function(np.zeros((1, len(names)))))[0])
        )
        method = "occlusion"
    out = []
    for k in range(len(Z)):
        order = np.argsort(-np.abs(terms[k]), kind="stable")
        items = [
            Contribution(names[i], float(X[k, i]), float(mean[i]), float(terms[k, i]))
            for i in order
        ]
        residual = float(scores[k] - intercept[k] - terms[k].sum())
        out.append(Contributions(method, linear is not None, float(intercept[k]), items, residual))
    return out
