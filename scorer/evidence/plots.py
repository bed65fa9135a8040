"""Figures for the evidence (matplotlib, PNG, no display needed).

`plot_regression`: metric against human score with the least-squares line, like Bangalore et
al. (2000), Figures 3-4. `plot_system_means`: mean score per system with a t confidence
interval, like Mutton et al. (2007), Table 6, drawn.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from scipy import stats

from scorer.errors import InputError

__all__ = ["mean_ci", "plot_regression", "plot_system_means"]


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")  # files only: no display on servers or in CI
    import matplotlib.pyplot as plt

    return plt


def mean_ci(values: Sequence[float], confidence: float = 0.95) -> tuple[float, float, float]:
    """(mean, low, high): Student t interval of the mean; one value gives a zero-width one."""
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        raise InputError("no values: cannot take a mean")
    mean = float(x.mean())
    if x.size < 2:
        return mean, mean, mean
    half = float(stats.sem(x) * stats.t.ppf(0.5 + confidence / 2, x.size - 1))
    return mean, mean - half, mean + half


def plot_regression(
    metric: Sequence[float],
    human: Sequence[float],
    out: str | Path,
    *,
    xlabel: str = "metric",
    ylabel: str = "human score",
    title: str | None = None,
) -> Path:
    x, y = np.asarray(metric, dtype=float), np.asarray(human, dtype=float)
    if x.shape != y.shape or x.size < 2:
        raise InputError(f"need two equal-length score lists of 2 or more; got {x.size}, {y.size}")
    plt = _pyplot()
    fit = stats.linregress(x, y)
    fig, ax = plt.subplots(figsize=(5, 4), dpi=100)
    ax.scatter(x, y, s=8, alpha=0.5)
    grid = np.linspace(x.min(), x.max(), 50)
    ax.plot(
        grid,
        fit.intercept + fit.slope * grid,
        color="C3",
        label=f"y = {fit.slope:.3g}x + {fit.intercept:.3g}, r = {fit.rvalue:.3f}",
    )
    ax.set(xlabel=xlabel, ylabel=ylabel, title=title or f"{ylabel} against {xlabel}")
    ax.legend(loc="best", fontsize="small")
    fig.tight_layout()
    path = Path(out)
    fig.savefig(path, format="png")
    plt.close(fig)
    return path


def plot_system_means(
    values: Mapping[str, Sequence[float]],
    out: str | Path,
    *,
    ylabel: str = "mean score",
    confidence: float = 0.95,
) -> Path:
    if not values:
        raise InputError("no systems to plot")
    plt = _pyplot()
    names = sorted(values, key=lambda s: mean_ci(values[s])[0], reverse=True)
    cis = [mean_ci(values[s], confidence) for s in names]
    means = np.array([c[0] for c in cis])
    err = np.array([[c[0] - c[1] for c in cis], [c[2] - c[0] for c in cis]])
    fig, ax = plt.subplots(figsize=(max(4, 0.6 * len(names) + 2), 4), dpi=100)
    ax.errorbar(range(len(names)), means, yerr=err, fmt="o", capsize=4)
    ax.set_xticks(range(len(names)), names, rotation=45, ha="right")
    ax.set(ylabel=ylabel, title=f"{ylabel} per system ({confidence:.0%} CI)")
    fig.tight_layout()
    path = Path(out)
    fig.savefig(path, format="png")
    plt.close(fig)
    return path
