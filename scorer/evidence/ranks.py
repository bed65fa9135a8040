"""Spearman's rho, the one rank correlation every figure here reports: Pearson's r of average
ranks (ties share their mean rank, `scipy.stats.rankdata`), NaN where either side is constant
or holds a NaN, as `scipy.stats.spearmanr` gives it.

SciPy is imported when first called: `fluency score` imports the system-level module for its
argument parser, and `scipy.stats` is about a second of a process's start-up.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["spearman"]


def spearman(x: np.ndarray, y: np.ndarray) -> float | np.ndarray:
    """Spearman's rho of `x` and `y`; for 2-D inputs, of each row of `x` with the same row of
    `y` (an array, NaN where a row is constant), as bootstraps need it: a thousand resamples
    ranked at once, not one `spearmanr` call each.

    One vector goes through `np.corrcoef`, as `spearmanr` does; rows through the same sums
    written out for every row at once, which may differ from it in the last bit."""
    from scipy.stats import rankdata

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.ndim == 1:
        rx, ry = rankdata(x), rankdata(y)
        if np.ptp(rx) == 0 or np.ptp(ry) == 0:
            return math.nan
        return float(np.corrcoef(rx, ry)[0, 1])
    if not len(x):
        return np.zeros(0)
    rx, ry = rankdata(x, axis=1), rankdata(y, axis=1)
    rx -= rx.mean(1, keepdims=True)
    ry -= ry.mean(1, keepdims=True)
    den = np.sqrt((rx**2).sum(1) * (ry**2).sum(1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (rx * ry).sum(1) / den, math.nan)
