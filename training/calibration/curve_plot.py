"""The learning curve's figure (`python -m training.calibration.learning_curve --plot`, `fluency
calibrate --learning-curve`): per file, rho and tau against the ratings a head was fitted on."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from features.errors import InputError
from training.heads import MINUS_LENGTH

__all__ = ["CALIBRATED", "FIGURES", "GENERAL", "GENRE", "START", "plot"]

CALIBRATED, START = "calibrated", "shipped head, held out"  # the columns of a curve
GENERAL, GENRE = "general head, in-sample", "genre head, in-sample"
FIGURES = ("rho", "tau", "system")


def plot(found: Sequence, path: str | Path) -> None:
    """Per file (`found`: `training.calibration.curves.FileCurve`s), the mean over draws of
    rho (upper block) and tau (lower block) against the ratings a head was fitted on (the
    calibrated head's range over draws shaded), the shipped heads and minus the length judged
    on the same outputs; written to `path` (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    shown = [c for c in found if c.draws]
    if not shown:
        raise InputError("no file holds a size of the curve: nothing to plot")
    ncols = min(6, len(shown))
    nrows = math.ceil(len(shown) / ncols)
    width = max(2.9 * ncols + 0.5, 6.5)
    fig = plt.figure(figsize=(width, 2.4 * nrows * 2 + 1.2), layout="constrained")
    styles = {
        CALIBRATED: {"color": "C0", "marker": "o"},
        START: {"color": "C3", "marker": "s", "markersize": 3},
        GENRE: {"color": "C2", "linestyle": "-."},
        GENERAL: {"color": "C1", "linestyle": "--"},
        MINUS_LENGTH: {"color": "0.45", "linestyle": ":"},
    }
    for block, (figure, label) in zip(
        fig.subfigures(2, 1),
        (("rho", "Spearman rho"), ("tau", "mean per-input Kendall tau")),
        strict=True,
    ):
        axes = np.atleast_1d(block.subplots(nrows, ncols, squeeze=False)).ravel()
        for ax, c in zip(axes, shown, strict=False):
            ns = np.array(list(c.draws), dtype=float)
            drawn = False
            for column in c.columns:
                ys = np.array([c.mean(int(n), column, figure) for n in ns])
                if np.isfinite(ys).any():
                    ax.plot(ns, ys, label=column, **styles.get(column, {}))
                    drawn = True
            if not drawn:
                ax.text(0.5, 0.5, "no input with two\noutputs rated apart", ha="center",
                        va="center", transform=ax.transAxes, fontsize=8)  # fmt: skip
            k = FIGURES.index(figure)
            per_draw = [[d.figures.get(CALIBRATED, (math.nan,) * 3)[k] for d in c.draws[int(n)]]
                        for n in ns]  # fmt: skip
            low = [np.nanmin(v) if np.isfinite(v).any() else np.nan for v in per_draw]
            high = [np.nanmax(v) if np.isfinite(v).any() else np.nan for v in per_draw]
            ax.fill_between(ns, low, high, color="C0", alpha=0.15)
            ax.set_xscale("log")
            ax.set_xticks(ns, [str(int(n)) for n in ns])
            ax.minorticks_off()
            ax.set_title(c.name, fontsize=9)
            ax.tick_params(labelsize=7)
            ax.grid(alpha=0.3)
        for ax in axes[len(shown) :]:
            ax.set_visible(False)
        present = [k for k in styles if any(k in c.columns for c in shown)]
        proxies = [Line2D([], [], label=k, **styles[k]) for k in present]
        axes[0].legend(handles=proxies, fontsize=6, loc="best")
        block.suptitle(
            f"{label} on the inputs not drawn, against the ratings fitted on\n"
            "(mean over draws; shaded: the calibrated head's range over draws)",
            fontsize=10,
        )
    fig.savefig(path, dpi=100)
    plt.close(fig)
