"""The criterion (mean Spearman rho + mean per-input Kendall tau) of many heads at once, on the
judged outputs and on bootstrap draws of their inputs: what `training.calibration.switch` and
`training.heads.estimators.residual_ridge` read.

scikit-learn has no paired, grouped bootstrap of rank correlations; SciPy's `bootstrap` takes
one statistic at a time, so the draws are made here and every candidate's ranks taken at once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from training.heads.data.judged import HeadFile
from training.heads.metrics.figures import Judgement, group_taus, members

__all__ = ["criteria", "judgements", "point_means", "ranks", "rhos"]


def ranks(X: np.ndarray) -> np.ndarray:
    """Average ranks (1-based, ties sharing their mean rank) down each column of `X`, as
    `scipy.stats.rankdata(X, axis=0)` gives them, in one pass over every column: a bootstrap
    ranks hundreds of candidates a draw, a thousand draws."""
    X = np.asarray(X, dtype=float)
    if X.ndim == 1:
        return ranks(X[:, None])[:, 0]
    n, m = X.shape
    order = np.argsort(X, axis=0, kind="stable")
    S = np.take_along_axis(X, order, axis=0)
    new = np.ones((n, m), dtype=bool)
    new[1:] = S[1:] != S[:-1]
    tie = np.cumsum(new.T.ravel()) - 1  # tie groups, numbered down each column in turn
    position = np.tile(np.arange(1.0, n + 1), m)
    mean = (np.bincount(tie, position) / np.bincount(tie))[tie].reshape(m, n).T
    out = np.empty_like(mean)
    np.put_along_axis(out, order, mean, axis=0)
    return out


def rhos(preds: np.ndarray, human: np.ndarray) -> np.ndarray:
    """Spearman's rho of each column of `preds` with `human`: 0 for a constant column (it
    orders nothing), NaN for all when `human` is constant."""
    r = ranks(preds)
    h = ranks(human)
    r -= r.mean(axis=0)
    h -= h.mean()
    norm = np.sqrt((r**2).sum(axis=0)) * np.sqrt((h**2).sum())
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = (r * h[:, None]).sum(axis=0) / norm
    if not np.any(h):
        return np.full(preds.shape[1], np.nan)
    return np.where(np.sqrt((r**2).sum(axis=0)) > 0, rho, 0.0)


def _tau_means(taus: np.ndarray, pick: np.ndarray | None = None) -> np.ndarray:
    """The mean over rows (inputs, `pick` of them with repeats; or files) of each column, NaN
    left out (NaN where every row is)."""
    t = taus if pick is None else taus[pick]
    ok = np.isfinite(t)
    n = ok.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, np.where(ok, t, 0.0).sum(axis=0) / n, np.nan)


def _means(per_rho: list[np.ndarray], per_tau: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(mean rho over files, mean tau over files), NaN left out."""
    return _tau_means(np.vstack(per_rho)), _tau_means(np.vstack(per_tau))


def _combine(per_rho: list[np.ndarray], per_tau: list[np.ndarray]) -> np.ndarray:
    """Mean rho over files + mean tau over files (tau counted where any file has one)."""
    rho, tau = _means(per_rho, per_tau)  # rho NaN where people rated every output alike
    return rho + np.nan_to_num(tau)


def _point(prepared) -> tuple[list[np.ndarray], list[np.ndarray]]:
    return [rhos(P, f.human) for f, P, _, _ in prepared], [_tau_means(T) for _, _, T, _ in prepared]


def _prepared(preds: Sequence[Mapping[str, np.ndarray]], files: Sequence[HeadFile]) -> list:
    """Per file: (file, its heads' values a column, their taus per input a column, None)."""
    prepared = []
    for f in files:
        P = np.column_stack([np.asarray(p[f.name], dtype=float) for p in preds])
        T = np.column_stack([group_taus(P[:, k], f) for k in range(P.shape[1])])
        prepared.append((f, P, T, None))
    return prepared


def point_means(
    preds: Sequence[Mapping[str, np.ndarray]], files: Sequence[HeadFile]
) -> tuple[np.ndarray, np.ndarray]:
    """(mean rho, mean per-input tau) of each head over `files`, as `criteria` sums them."""
    return _means(*_point(_prepared(preds, files)))


def judgements(
    preds: Sequence[Mapping[str, np.ndarray]], files: Sequence[HeadFile]
) -> list[Judgement]:
    """Each head's figures over `files` (files weighing the same) as the record every head is
    chosen on holds them (`training.heads.metrics.figures.Judgement`): per file rho and mean
    per-input tau, and their means, whose criterion is `criteria`'s point to the bit."""
    per_rho, per_tau = _point(_prepared(preds, files))
    rho, tau = _means(per_rho, per_tau)
    return [
        Judgement(
            {
                f.name: (float(r[k]), float(t[k]))
                for f, r, t in zip(files, per_rho, per_tau, strict=True)
            },
            float(rho[k]),
            float(tau[k]),
        )
        for k in range(len(preds))
    ]


def criteria(
    preds: Sequence[Mapping[str, np.ndarray]],
    files: Sequence[HeadFile],
    *,
    n_samples: int = 0,
    seed: int = 12345,
) -> tuple[np.ndarray, np.ndarray]:
    """(criterion of each head, (n_samples, heads) criteria on draws of each file's inputs).
    `preds[k]`: {file name: head k's values over the file's outputs}."""
    rng = np.random.default_rng(seed)
    prepared = [(f, P, T, members(f)) for f, P, T, _ in _prepared(preds, files)]
    point = _combine(*_point(prepared))
    samples = np.empty((n_samples, len(preds)))
    for b in range(n_samples):
        per_rho, per_tau = [], []
        for f, P, T, groups in prepared:
            pick = rng.integers(0, len(groups), len(groups))
            rows = np.concatenate([groups[k] for k in pick])
            per_rho.append(rhos(P[rows], f.human[rows]))
            per_tau.append(_tau_means(T, pick))
        samples[b] = _combine(per_rho, per_tau)
    return point, samples
