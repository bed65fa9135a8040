"""Leaving a starting head only on evidence: the paired bootstrap of every candidate's gain over
the head a user starts from, and the rule that reads it.

A user who calibrates has a head already (the bundle's, for the genre) and a few ratings. On
100 ratings a head chosen afresh among a hundred inputs is chosen by noise, so the starting head
stays unless a candidate's gain in the criterion (mean Spearman rho + mean per-input Kendall
tau, as `training.heads.select` judges heads) is above zero at 95%, for every candidate tried
at once:

- The user's inputs (groups; without groups, outputs) are resampled with replacement, the same
  draw for the starting head and every candidate, so each draw gives each candidate's gain.
- Each candidate's bound is its gain less a multiple of its bootstrap standard error, the
  multiple the 97.5% quantile of the largest standardised deviation over the candidates (a
  single-step max-t bound, Romano & Wolf 2005): the bounds hold for all candidates together,
  so trying more of them does not make a switch by chance likelier, and candidates that move
  together (the GLEU score under three readings) cost less than independent ones would.
- The rule (`switch_to`) takes the candidate of the largest gain among those whose bound is
  above zero, or none.

scikit-learn has no paired, grouped bootstrap of rank correlations; SciPy's `bootstrap` takes
one statistic at a time, so the draws are made here and every candidate's ranks taken at once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from training.heads.select import HeadFile, group_taus, members

__all__ = ["LEVEL", "Evidence", "criteria", "evidence", "ranks", "rhos", "switch_to"]

LEVEL = 0.95


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


def point_means(
    preds: Sequence[Mapping[str, np.ndarray]], files: Sequence[HeadFile]
) -> tuple[np.ndarray, np.ndarray]:
    """(mean rho, mean per-input tau) of each head over `files`, as `criteria` sums them."""
    prepared = []
    for f in files:
        P = np.column_stack([np.asarray(p[f.name], dtype=float) for p in preds])
        T = np.column_stack([group_taus(P[:, k], f) for k in range(P.shape[1])])
        prepared.append((f, P, T, None))
    return _means(*_point(prepared))


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
    prepared = []
    for f in files:
        P = np.column_stack([np.asarray(p[f.name], dtype=float) for p in preds])
        T = np.column_stack([group_taus(P[:, k], f) for k in range(P.shape[1])])
        prepared.append((f, P, T, members(f)))
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


@dataclass(frozen=True)
class Evidence:
    """Each candidate's gain in the criterion over the starting head, and its bound."""

    labels: tuple[str, ...]
    start: float  # the starting head's criterion
    point: np.ndarray  # each candidate's criterion
    rho: np.ndarray  # its mean rho
    tau: np.ndarray  # its mean per-input tau (NaN: no input has two outputs rated apart)
    gain: np.ndarray  # point - start
    low: np.ndarray  # simultaneous lower bound of the gain (`switch_to`)
    chosen: int | None  # the candidate the rule takes, or None: the start stays

    def row(self, k: int) -> dict:
        return {
            "label": self.labels[k],
            "criterion": round(float(self.point[k]), 4),
            "rho": None if not np.isfinite(self.rho[k]) else round(float(self.rho[k]), 4),
            "tau": None if not np.isfinite(self.tau[k]) else round(float(self.tau[k]), 4),
            "gain": round(float(self.gain[k]), 4),
            "gain_low": None if not np.isfinite(self.low[k]) else round(float(self.low[k]), 4),
        }

    def ranked(self) -> list[int]:
        """Candidates by gain, largest first (NaN last)."""
        return sorted(range(len(self.labels)), key=lambda k: -np.nan_to_num(self.gain[k], nan=-9))


def switch_to(
    gain: np.ndarray, sampled: np.ndarray, *, level: float = LEVEL
) -> tuple[int | None, np.ndarray]:
    """(the candidate to switch to, or None; every candidate's lower bound).

    `gain`: each candidate's gain over the starting head on the user's data; `sampled`: the
    gains on bootstrap draws, one row a draw. A candidate qualifies where its simultaneous
    lower bound at `level` (module docstring) is above zero; of those, the largest gain wins.
    A candidate whose gain does not vary over draws is bounded by its gain."""
    gain = np.asarray(gain, dtype=float)
    sampled = np.asarray(sampled, dtype=float)
    sampled = sampled[np.isfinite(sampled).all(axis=1)] if sampled.size else sampled
    if not len(gain):
        return None, np.zeros(0)
    if not len(sampled):
        return None, np.full(len(gain), -np.inf)
    se = sampled.std(axis=0)
    varies = se > 1e-12
    low = np.where(np.isfinite(gain), gain, -np.inf)
    if varies.any():
        z = (sampled[:, varies] - gain[varies]) / se[varies]
        c = float(np.quantile(z.max(axis=1), 1 - (1 - level) / 2))
        low[varies] = gain[varies] - max(c, 0.0) * se[varies]
    ok = np.flatnonzero(low > 0)
    if not len(ok):
        return None, low
    return int(ok[np.argmax(gain[ok])]), low


def evidence(
    start: Mapping[str, np.ndarray],
    candidates: Mapping[str, Mapping[str, np.ndarray]],
    files: Sequence[HeadFile],
    *,
    n_samples: int = 1000,
    seed: int = 12345,
    level: float = LEVEL,
) -> Evidence:
    """Every candidate's gain over `start` (both {file: values}) on the same draws of the
    user's inputs, and the rule's choice (`switch_to`)."""
    labels = tuple(candidates)
    heads = [start, *candidates.values()]
    point, sampled = criteria(heads, files, n_samples=n_samples, seed=seed)
    rho, tau = point_means(heads, files)
    gain = point[1:] - point[0]
    chosen, low = switch_to(gain, sampled[:, 1:] - sampled[:, :1], level=level)
    return Evidence(labels, float(point[0]), point[1:], rho[1:], tau[1:], gain, low, chosen)
