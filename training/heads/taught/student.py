"""The student: a ridge on the default tier's own columns, under one reading, fitted to the
teacher's scores of many texts (`training.heads.taught.teacher`), served as an ordinary linear head.

Its inputs are every column the default's linear heads may read (the GLEU score, each
extractor's columns, the derived ones), standardised on the texts it learns from, each clipped
to the range those texts span, so that no text can push one column beyond what the teacher was
asked about. The texts are weighted so that each genre of the development outputs and the
corpus's sentences weigh the same. Its alpha is chosen by how well it reproduces the teacher on
a whole set of texts left out (`fit_student`): that choice never sees a human rating, so it
cannot tune itself to the development files' raters.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from scorer.heads import Head

__all__ = ["ALPHAS", "Student", "fit_student", "student_inputs"]

ALPHAS = (0.1, 1.0, 10.0, 100.0, 1000.0, 10000.0)  # per 1,000 weighted texts


def student_inputs(columns: Mapping[str, np.ndarray]) -> list[str]:
    """The columns of a whole reading a linear head may read: not a group of a learned head's
    (states), not a text reading of what is said again (that weight is fixed apart)."""
    from scorer.contributions import group_of
    from scorer.readings import TEXT_READINGS

    return [c for c in columns if group_of(c) is None and c not in TEXT_READINGS]


@dataclass(frozen=True)
class Student:
    """A fitted student: its head (raw units, clipped), alpha, and how closely it reproduces the
    teacher on a set of texts it left out (`fidelity`: the mean R^2 over sets left out)."""

    head: Head
    alpha: float
    fidelity: float
    n_texts: int

    def predict(self, columns: Mapping[str, Mapping[str, np.ndarray]]) -> np.ndarray:
        """Its scores of texts from their columns by reading ({reading: {input: values}})."""
        return self.head.predict(columns)


def fit_student(
    columns: Sequence[Mapping[str, np.ndarray]],
    targets: Sequence[np.ndarray],
    weights: Sequence[float],
    inputs: Sequence[str],
    alphas: Sequence[float] = ALPHAS,
    reading: str = "whole",
) -> Student:
    """The student reading `reading` on text sets (`columns[k]` under it, `targets[k]` the
    teacher's scores of them,
    each set weighing `weights[k]` in all, shared by its texts). Its alpha: each set left out in
    turn, the strongest whose mean R^2 on the set left out is within one standard error (over
    sets, paired) of the best alpha's (`training.heads.estimators.ridge.within_one_se`)."""
    from sklearn.linear_model import Ridge
    from sklearn.preprocessing import StandardScaler

    from training.heads.estimators.ridge import within_one_se

    blocks = [np.column_stack([c[i] for i in inputs]).astype(np.float64) for c in columns]
    ys = [np.asarray(t, dtype=np.float64) for t in targets]
    ws = [np.full(len(t), wk / max(len(t), 1)) for t, wk in zip(ys, weights, strict=True)]
    keep = [np.isfinite(X).all(axis=1) & np.isfinite(y) for X, y in zip(blocks, ys, strict=True)]
    blocks = [X[k] for X, k in zip(blocks, keep, strict=True)]
    ys = [y[k] for y, k in zip(ys, keep, strict=True)]
    ws = [w[k] for w, k in zip(ws, keep, strict=True)]
    X, y, w = np.vstack(blocks), np.concatenate(ys), np.concatenate(ws)
    scale = len(w) / w.sum()
    scaler = StandardScaler().fit(X, sample_weight=w)
    Z = scaler.transform(X)
    starts = np.cumsum([0, *[len(b) for b in ys]])
    r2 = np.zeros((len(alphas), len(ys)))
    for j in range(len(ys)):
        out = np.zeros(len(y), dtype=bool)
        out[starts[j] : starts[j + 1]] = True
        n_in = float((w[~out] * scale).sum())
        for k, alpha in enumerate(alphas):
            ridge = Ridge(alpha=alpha * n_in / 1000.0)
            ridge.fit(Z[~out], y[~out], sample_weight=w[~out] * scale)
            r2[k, j] = _r2(ys[j], ridge.predict(Z[out]), ws[j])
    best = int(np.argmax(r2.mean(axis=1)))
    paired = r2 - r2[best]
    chosen = max(within_one_se(list(alphas), paired.mean(axis=1), paired))
    k = list(alphas).index(chosen)
    ridge = Ridge(alpha=chosen * float((w * scale).sum()) / 1000.0)
    ridge.fit(Z, y, sample_weight=w * scale)
    coef = ridge.coef_ / scaler.scale_
    coef[scaler.scale_ == 0] = 0.0
    intercept = float(ridge.intercept_ - np.dot(coef, scaler.mean_))
    head = Head(tuple(inputs), coef, intercept, reading, (X.min(axis=0), X.max(axis=0)))
    return Student(head, float(chosen), float(r2[k].mean()), len(y))


def _r2(y: np.ndarray, pred: np.ndarray, w: np.ndarray) -> float:
    """Weighted R^2 of `pred` against `y`."""
    mean = np.average(y, weights=w)
    total = float(np.sum(w * (y - mean) ** 2))
    return 1.0 - float(np.sum(w * (y - pred) ** 2)) / total if total > 0 else float("nan")
