"""`InputRanker`: a second stage fitted on what a reranker needs: the order of one input's outputs.

People who rate outputs side by side (RankME, MQM per segment) say more reliably which of two
outputs of one input is better than how good either is on an absolute scale, and a reranker only
ever compares outputs of one input. So: for pairs of outputs of the same input that people
scored apart, a logistic regression on the difference of their standardised inputs learns
P(i better than j) = sigmoid(w . (x_i - x_j)) (the pairwise reduction of RankNet and the
ranking SVM, Joachims 2002, with a log loss). w . x is then mapped affinely onto the z-normalised
human scores (least squares), so the score still reads "standard deviations above the average
judged output" and files without inputs in common can share one scale.

scikit-learn has no ranking estimator; this is the standard reduction over its
`LogisticRegression`. Files with one output per input have no within-input pairs: pairs are
then drawn across the whole file. `across` > 0 asks for both objectives at once: that share of
the pairs is drawn across inputs of one dataset (what people say of outputs of different
inputs), the rest within inputs.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

__all__ = ["InputRanker", "dataset_pairs", "input_pairs"]


def input_pairs(
    y: np.ndarray, groups: Sequence[Hashable] | None, *, max_pairs: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """(i, j) with y_i != y_j, both in one group (every such pair, or `max_pairs` drawn at
    random when there are more); with no groups, or none of size 2, drawn across all rows."""
    rng = np.random.default_rng(seed)
    i_all, j_all = [], []
    if groups is not None:
        ids: dict[Hashable, list[int]] = {}
        for k, g in enumerate(groups):
            ids.setdefault(g, []).append(k)
        for members in ids.values():
            if len(members) > 1:
                m = np.asarray(members)
                a, b = np.triu_indices(len(m), 1)
                i_all.append(m[a])
                j_all.append(m[b])
    if i_all:
        i, j = np.concatenate(i_all), np.concatenate(j_all)
    else:
        n = len(y)
        i = rng.integers(0, n, max_pairs * 3)
        j = rng.integers(0, n, max_pairs * 3)
    return _scored_apart(y, i, j, max_pairs, rng)


def _scored_apart(y, i, j, limit: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """The pairs people scored apart (y_i != y_j), `limit` of them drawn at random if more."""
    keep = y[i] != y[j]
    i, j = i[keep], j[keep]
    if len(i) > limit:
        pick = rng.choice(len(i), limit, replace=False)
        i, j = i[pick], j[pick]
    return i, j


def dataset_pairs(
    y: np.ndarray, datasets: Sequence[Hashable], *, n_pairs: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """About `n_pairs` pairs (i, j) with y_i != y_j drawn at random inside each dataset, each
    dataset drawing a share proportional to its size (the fit's weights even the datasets)."""
    rng = np.random.default_rng(seed + 1)
    ids: dict[Hashable, list[int]] = {}
    for k, d in enumerate(datasets):
        ids.setdefault(d, []).append(k)
    i_all, j_all = [], []
    for members in ids.values():
        m = np.asarray(members)
        want = max(1, round(n_pairs * len(m) / len(y)))
        i_all.append(m[rng.integers(0, len(m), want * 2)])
        j_all.append(m[rng.integers(0, len(m), want * 2)])
    return _scored_apart(y, np.concatenate(i_all), np.concatenate(j_all), n_pairs, rng)


class InputRanker:
    """Pairwise logistic ranking within inputs, then an affine map onto the human scale.

    `fit(X, y, groups)`: `groups` names each row's input (rows of different files must not
    share a name). `predict(X)` is NumPy only, so a served bundle needs no scikit-learn call.
    """

    def __init__(
        self,
        C: float = 1.0,
        max_pairs: int = 200_000,
        random_state: int = 12345,
        across: float = 0.0,
    ):
        self.C = C
        self.max_pairs = max_pairs
        self.random_state = random_state
        self.across = across

    def get_params(self, deep: bool = True) -> dict:
        return {
            "C": self.C,
            "max_pairs": self.max_pairs,
            "random_state": self.random_state,
            "across": self.across,
        }

    def set_params(self, **params) -> InputRanker:
        for key, value in params.items():
            setattr(self, key, value)
        return self

    def fit(
        self,
        X,
        y,
        groups: Sequence[Hashable] | None = None,
        sample_weight=None,
        datasets: Sequence[Hashable] | None = None,
    ) -> InputRanker:
        """`sample_weight` weighs each row; a pair weighs what its first output does (both
        outputs of a pair come from one dataset). `datasets` names each row's dataset, for
        the pairs drawn across inputs (`across`; default: all rows one dataset)."""
        from sklearn.linear_model import LogisticRegression

        X, y = np.asarray(X, dtype=float), np.asarray(y, dtype=float)
        w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
        self.mean_ = X.mean(axis=0)
        scale = X.std(axis=0)
        self.scale_ = np.where(scale > 0, scale, 1.0)
        Z = (X - self.mean_) / self.scale_
        across = float(getattr(self, "across", 0.0))  # bundles pickled before it have none
        within = round(self.max_pairs * (1 - across))
        i, j = input_pairs(y, groups, max_pairs=within, seed=self.random_state)
        if across > 0:
            n = max(len(i) * across / (1 - across), 1) if across < 1 else self.max_pairs
            ds = datasets if datasets is not None else np.zeros(len(y))
            a, b = dataset_pairs(y, ds, n_pairs=int(n), seed=self.random_state)
            i, j = np.concatenate([i, a]), np.concatenate([j, b])
        if not len(i):
            raise ValueError("InputRanker needs outputs that people scored apart")
        diff = Z[i] - Z[j]
        sign = np.sign(y[i] - y[j])
        flip = np.random.default_rng(self.random_state).random(len(sign)) < 0.5
        diff[flip], sign[flip] = -diff[flip], -sign[flip]  # both classes, balanced
        model = LogisticRegression(C=self.C, fit_intercept=False, max_iter=1000)
        model.fit(diff, sign, sample_weight=w[i])
        self.coef_ = model.coef_.ravel()
        raw = Z @ self.coef_
        if np.ptp(raw) > 0:  # polyfit weighs unsquared residuals: the square root of w
            slope, intercept = np.polyfit(raw, y, 1, w=np.sqrt(w))
        else:
            slope, intercept = 0.0, float(np.average(y, weights=w))
        self.slope_, self.intercept_ = float(slope), float(intercept)
        self.n_pairs_ = len(i)
        return self

    def predict(self, X) -> np.ndarray:
        Z = (np.asarray(X, dtype=float) - self.mean_) / self.scale_
        return self.slope_ * (Z @ self.coef_) + self.intercept_

    def __repr__(self) -> str:
        across = float(getattr(self, "across", 0.0))
        return f"InputRanker(C={self.C:g}" + (f", across={across:g})" if across else ")")
