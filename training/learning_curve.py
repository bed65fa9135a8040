"""How many judgements a calibration needs: held-out agreement against the number trained on.

For each of `draws` seeds, 30% of every dataset's inputs (groups: outputs of one input stay
together) are held out; from the rest, inputs are drawn in a random order until they hold at
least 50, 100, 200, 400, 800 judgements (sizes above what every seed has left are skipped; the
whole remainder is the last point). The regressor and inputs the calibration chose
(`training.second_stage`, the same candidate `fluency calibrate` fits; not a fixed ridge) are
fitted on each draw, with targets z-normalised within each dataset's draw, and judged on the
held-out inputs by Spearman's rho over outputs and the mean per-input Kendall tau
(`scorer.evidence.agreement.per_group_kendall`), each the mean over datasets. The GLEU score
alone, uncalibrated, judged on the same held-out parts, is the reference. Draws grow by adding
inputs (the draw of 100 holds the draw of 50), so one seed's points share their noise.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from features.errors import InputError
from training.second_stage import Choice, JudgedFile, design, fit_choice, inputs_of, judged_file

__all__ = ["SIZES", "Curve", "Point", "bundle_curve", "learning_curve", "plot", "table"]

SIZES = (50, 100, 200, 400, 800)


@dataclass(frozen=True)
class Point:
    n: int | None  # judgements trained on; None for the uncalibrated GLEU score
    rho: tuple[float, ...]  # one per draw
    tau: tuple[float, ...]


@dataclass(frozen=True)
class Curve:
    points: list[Point]
    reference: Point  # the GLEU score alone on the same held-out parts
    label: str  # "regressor [inputs]"
    n_held: tuple[int, ...]  # held-out outputs, per draw
    n_available: int  # judgements left to draw from, the fewest over draws
    held_out: float  # the share of each dataset's inputs held out


def _judge(preds: Sequence[np.ndarray], held: Sequence[JudgedFile]) -> tuple[float, float]:
    from scipy.stats import spearmanr

    from scorer.evidence.agreement import per_group_kendall

    rho = [float(spearmanr(p, h.human).statistic) for p, h in zip(preds, held, strict=True)]
    tau = [
        per_group_kendall(p, h.human, h.groups).mean_tau for p, h in zip(preds, held, strict=True)
    ]
    return _mean(rho), _mean(tau)


def _mean(values: Sequence[float]) -> float:
    values = [v for v in values if np.isfinite(v)]
    return float(np.mean(values)) if values else float("nan")


def _fit_predict(
    regressor: str,
    input_set: str,
    train: Sequence[JudgedFile],
    held: Sequence[JudgedFile],
    columns: Sequence[str],
) -> list[np.ndarray]:
    """The chosen candidate fitted on `train` as `fluency calibrate` fits it, then its
    predictions for each held-out part."""
    model = fit_choice(Choice(regressor, input_set, {}, {}, ""), train, columns)
    readings = inputs_of((), input_set)[1:]
    return [model.predict(design([h], columns, readings)) for h in held]


def _split(files: Sequence[JudgedFile], rng, held_out: float):
    """(held-out part of each file, the other inputs as (file index, row indices) in a random
    order)."""
    held, pool = [], []
    for k, f in enumerate(files):
        inputs = list(dict.fromkeys(f.groups))
        if len(inputs) < 2:
            raise InputError(f"{f.name} has one input: nothing to hold out for a learning curve")
        order = rng.permutation(len(inputs))
        n_held = min(len(inputs) - 1, max(1, round(held_out * len(inputs))))
        out = {inputs[i] for i in order[:n_held]}
        rows: dict[str, list[int]] = {}
        for i, g in enumerate(f.groups):
            rows.setdefault(g, []).append(i)
        held.append(f.subset([i for i in range(len(f.groups)) if f.groups[i] in out], f.name))
        pool += [(k, rows[inputs[i]]) for i in order[n_held:]]
    return held, [pool[i] for i in rng.permutation(len(pool))]


def _draw(files: Sequence[JudgedFile], pool, n: int) -> list[JudgedFile]:
    """Whole inputs from the front of `pool` until they hold at least `n` judgements."""
    chosen: dict[int, list[int]] = {}
    total = 0
    for k, rows in pool:
        if total >= n:
            break
        chosen.setdefault(k, []).extend(rows)
        total += len(rows)
    return [files[k].subset(sorted(rows), files[k].name) for k, rows in sorted(chosen.items())]


def learning_curve(
    files: Sequence[JudgedFile],
    columns: Sequence[str],
    *,
    regressor: str,
    input_set: str,
    sizes: Sequence[int] = SIZES,
    draws: int = 5,
    held_out: float = 0.3,
    seed: int = 0,
) -> Curve:
    """Held-out rho and per-input tau of (`regressor`, `input_set`) trained on each size, per
    draw, and of the GLEU score alone (see the module's docstring)."""
    if draws < 1:
        raise InputError(f"draws must be at least 1, got {draws}")
    splits = [_split(files, np.random.default_rng(seed + d), held_out) for d in range(draws)]
    available = min(sum(len(rows) for _, rows in pool) for _, pool in splits)
    ns = [n for n in sorted(set(sizes)) if n <= available]
    if not ns or available >= 1.25 * ns[-1]:
        ns.append(available)
    rho: dict[int, list[float]] = {n: [] for n in ns}
    tau: dict[int, list[float]] = {n: [] for n in ns}
    ref_rho, ref_tau = [], []
    for held, pool in splits:
        r, t = _judge([h.gleu for h in held], held)
        ref_rho.append(r)
        ref_tau.append(t)
        for n in ns:
            train = _draw(files, pool, n)
            r, t = _judge(_fit_predict(regressor, input_set, train, held, columns), held)
            rho[n].append(r)
            tau[n].append(t)
    return Curve(
        points=[Point(n, tuple(rho[n]), tuple(tau[n])) for n in ns],
        reference=Point(None, tuple(ref_rho), tuple(ref_tau)),
        label=f"{regressor} [{input_set}]",
        n_held=tuple(sum(len(h.texts) for h in held) for held, _ in splits),
        n_available=available,
        held_out=held_out,
    )


def bundle_curve(
    scorer,
    datasets: Sequence,
    section: dict,
    *,
    n_jobs: int = 1,
    cache_dir=None,
    draws: int = 5,
) -> Curve:
    """The learning curve of the calibration `fluency calibrate` chose (`section`, the card's
    `calibration`), over the datasets it was fitted on (`scorer.evidence.benchmark_data.
    JudgedFile`, as read), scored by the GLEU stage `scorer` under the chosen reading."""

    files = [
        judged_file(scorer, d, n_jobs=n_jobs, cache_dir=cache_dir, aggregate=section["aggregate"])
        for d in datasets
    ]
    return learning_curve(
        files,
        list(scorer.card["feature_columns"]),
        regressor=section["regressor"],
        input_set=section["input_set"],
        draws=draws,
    )


def _cell(values: Sequence[float], sign: str = "") -> str:
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if not v.size:
        return "–"
    return f"{np.median(v):{sign}.3f} [{v.min():{sign}.3f}, {v.max():{sign}.3f}]"


def table(curve: Curve) -> str:
    """The curve as a Markdown table: median [min, max] over draws, of each figure and of its
    difference from the GLEU score alone on the same draw's held-out part (the held-out parts
    differ between draws; the difference does not carry that noise)."""
    lines = [
        "| judgements | held-out Spearman rho | rho - GLEU alone "
        "| held-out per-input Kendall tau | tau - GLEU alone |",
        "|---:|---|---|---|---|",
    ]
    ref = curve.reference
    for p in curve.points:
        d_rho = np.subtract(p.rho, ref.rho)
        d_tau = np.subtract(p.tau, ref.tau)
        lines.append(
            f"| {p.n} | {_cell(p.rho)} | {_cell(d_rho, '+')} | {_cell(p.tau)} "
            f"| {_cell(d_tau, '+')} |"
        )
    lines.append(f"| GLEU alone | {_cell(ref.rho)} | | {_cell(ref.tau)} | |")
    return "\n".join(lines)


def plot(curve: Curve, path, *, title: str = "") -> None:
    """Median lines and min-max bands over draws, rho and tau side by side, the GLEU score
    alone as a dashed line with its band; written to `path` (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ns = np.array([p.n for p in curve.points], dtype=float)
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6), sharex=True)
    for ax, what, name in (
        (axes[0], "rho", "Spearman rho (held-out outputs)"),
        (axes[1], "tau", "mean per-input Kendall tau"),
    ):
        values = np.array([getattr(p, what) for p in curve.points], dtype=float)
        ref = np.array(getattr(curve.reference, what), dtype=float)
        if not np.isfinite(values).any():
            ax.text(
                0.5,
                0.5,
                "no held-out input has\ntwo outputs scored apart",
                ha="center",
                va="center",
                transform=ax.transAxes,
            )
        else:
            ax.fill_between(ns, np.nanmin(values, 1), np.nanmax(values, 1), alpha=0.25)
            ax.plot(ns, np.nanmedian(values, 1), marker="o", label=curve.label)
            ax.axhspan(np.nanmin(ref), np.nanmax(ref), color="0.5", alpha=0.15)
            ax.axhline(np.nanmedian(ref), color="0.3", linestyle="--", label="GLEU alone")
            ax.legend(fontsize=8, loc="lower right")
        ax.set_xscale("log")
        ax.set_xticks(ns, [str(int(n)) for n in ns])
        ax.minorticks_off()
        ax.set_xlabel("judgements trained on")
        ax.set_title(name, fontsize=10)
        ax.grid(alpha=0.3)
    draws = len(curve.reference.rho)
    fig.suptitle(
        (title + "\n" if title else "")
        + f"median and range over {draws} draws; held out: {curve.held_out:.0%} of inputs",
        fontsize=9,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
