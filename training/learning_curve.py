"""How many ratings a head of one's own needs: `python -m training.learning_curve`.

For each judgement file and each size (25, 50, 100, 200 outputs), `draws` seeded draws of whole
inputs (groups) taken in a random order until they hold that many outputs. On each draw a head
is chosen and fitted as `fluency calibrate` chooses it (`training.choose.choose`: folds of the
drawn inputs held out in turn), then judged on the file's other inputs beside the bundle's
shipped heads (its general head, and its head for the file's genre where it has one) and minus
the length, all on the same outputs: Spearman's rho over outputs, the mean per-input Kendall tau
(`heads_select.group_taus`) and, where the outputs name six or more systems, the system-level
pairwise accuracy (`scorer.evidence.system_level`). Each figure is a mean over draws. A draw of
one seed is the front of one order of the inputs, so the draw of 50 holds the draw of 25.

A size is skipped where fewer than 50 outputs or 2 inputs would be left to judge on. A draw whose
head does not ship (`training.heads.decide`: not above minus the length) is judged with the head
the selection chose anyway and counted: `fluency calibrate` would have written none. The shipped
heads were chosen and fitted on the development files, each of these among them: beside a head
fitted on 25 of a file's ratings they have seen all of them.

Rows are read as `python -m training.heads` reads them (the same outputs of large files, from
the row cache, `features.rows.default_cache_dir`):

    python -m training.learning_curve --model default --dev ../shared/dev --jobs 1 \\
        --out build/learning_curve.md --plot docs/calibrate_curves.png
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from features.errors import InputError
from training.choose import FOLDS, choose, subset
from training.heads import MINUS_LENGTH, READINGS
from training.heads_select import HeadFile, ScrambleCheck, group_taus, spearman

__all__ = [
    "CALIBRATE_SIZES",
    "SIZES",
    "Draw",
    "FileCurve",
    "curves",
    "file_curve",
    "main",
    "plot",
    "shipped_columns",
    "table",
    "wins",
]

SIZES = (25, 50, 100, 200)
CALIBRATE_SIZES = (25, 50, 100, 200, 400, 800)
MIN_HELD = 50
CALIBRATED, GENERAL, GENRE = "calibrated", "general head", "genre head"
FIGURES = ("rho", "tau", "system")


@dataclass(frozen=True)
class Draw:
    n: int  # outputs the head was chosen and fitted on
    n_held: int  # outputs it was judged on
    head: str  # the head chosen ("none": too few inputs, or none passed the scramble check)
    shipped: bool  # `fluency calibrate` would have written it
    figures: dict[str, tuple[float, float, float]]  # column -> (rho, tau, system accuracy)


@dataclass(frozen=True)
class FileCurve:
    name: str
    genre: str
    columns: tuple[str, ...]  # CALIBRATED first, then the shipped heads, then minus the length
    draws: dict[int, list[Draw]]  # size -> its draws, for the sizes the file holds
    no_systems: str | None  # why it has no system-level figure (None: it has one)

    def mean(self, n: int, column: str, figure: str) -> float:
        k = FIGURES.index(figure)
        values = [d.figures[column][k] for d in self.draws[n] if column in d.figures]
        values = [v for v in values if not math.isnan(v)]
        return float(np.mean(values)) if values else math.nan


def shipped_columns(card: Mapping, file: HeadFile) -> dict[str, np.ndarray]:
    """{column: values over `file`} of the bundle's general head and its head for the file's
    genre, each applied as the service applies it (`scorer.calibration.load_head_section`: the
    inputs under its reading, clipped to the card's range, then its weights). A head whose
    reading the file was not read under is left out."""
    from scorer.calibration import load_head_section

    heads = card.get("heads") or {}
    heads = {GENERAL: heads.get("general") or card.get("calibration"), GENRE: heads.get(file.genre)}
    out = {}
    for column, head in heads.items():
        if not head or head.get("aggregate") not in file.columns:
            continue
        stage = load_head_section(card.get("name", ""), card, head, what=column)
        X = np.column_stack([file.columns[head["aggregate"]][c] for c in stage.inputs])
        if stage.clip is not None:
            X = np.clip(X, *stage.clip)
        out[column] = np.asarray(stage.model.predict(X), dtype=float)
    return out


def _judge(
    columns: Mapping[str, np.ndarray], held: HeadFile, by_system: bool
) -> dict[str, tuple[float, float, float]]:
    draws = None
    if by_system:
        from scorer.evidence.system_level import SystemDraws

        draws = SystemDraws(held.human, held.systems, held.groups, n_samples=0)
    out = {}
    for name, values in columns.items():
        taus = group_taus(values, held)
        tau = float(np.nanmean(taus)) if np.isfinite(taus).any() else math.nan
        system = draws.point(values)[0] if draws is not None else math.nan
        out[name] = (spearman(values, held.human), tau, system)
    return out


def file_curve(
    file: HeadFile,
    references: Mapping[str, np.ndarray],
    readings: Sequence[str] = READINGS,
    *,
    sizes: Sequence[int] = SIZES,
    draws: int = 5,
    seed: int = 12345,
    folds: int = FOLDS,
    check: ScrambleCheck | None = None,
    max_inputs: int = 4,
    n_samples: int = 200,
    min_held: int = MIN_HELD,
) -> FileCurve:
    """The learning curve of one file (module doc); `references`: {column: values over the
    file} judged beside the calibrated head."""
    from scorer.evidence.genres import NOT_SYSTEMS
    from scorer.evidence.system_level import skip_reason

    if draws < 1:
        raise InputError(f"draws must be at least 1, got {draws}")
    no_systems = skip_reason(file.systems, not_a_generator=NOT_SYSTEMS.get(file.name))
    inputs = list(dict.fromkeys(file.groups))
    members: dict[str, list[int]] = {g: [] for g in inputs}
    for i, g in enumerate(file.groups):
        members[g].append(i)
    out: dict[int, list[Draw]] = {}
    for d in range(draws):
        order = np.random.default_rng([seed, d]).permutation(len(inputs))
        cumulative = np.cumsum([len(members[inputs[k]]) for k in order])
        for n in sorted(set(sizes)):
            k = int(np.searchsorted(cumulative, n)) + 1  # inputs drawn to hold n outputs
            if k >= len(inputs) - 1 or len(file.human) - cumulative[k - 1] < min_held:
                continue
            train_rows = np.sort([i for j in order[:k] for i in members[inputs[j]]])
            held_rows = np.sort([i for j in order[k:] for i in members[inputs[j]]])
            train, held = subset(file, train_rows), subset(file, held_rows)
            columns: dict[str, np.ndarray] = {}
            head, shipped = "none (one input)", False
            if k >= 2:
                choice = choose(
                    [train],
                    readings,
                    folds=min(folds, k),
                    check=check,
                    max_inputs=max_inputs,
                    n_samples=n_samples,
                    seed=seed,
                )
                head, shipped = choice.label, choice.ships
                if choice.fitted is not None:
                    columns[CALIBRATED] = choice.fitted.predict(held)
            columns |= {c: v[held_rows] for c, v in references.items()}
            columns[MINUS_LENGTH] = held.baselines[MINUS_LENGTH]
            figures = _judge(columns, held, no_systems is None)
            out.setdefault(n, []).append(
                Draw(len(train_rows), len(held_rows), head, shipped, figures)
            )
    names = (CALIBRATED, *references, MINUS_LENGTH)
    return FileCurve(file.name, file.genre, names, dict(sorted(out.items())), no_systems)


def curves(
    files: Sequence[HeadFile],
    card: Mapping,
    readings: Sequence[str] = READINGS,
    **options,
) -> list[FileCurve]:
    """`file_curve` of each file, beside the heads of the bundle whose card is `card`."""
    from tqdm import tqdm

    return [
        file_curve(f, shipped_columns(card, f), readings, **options)
        for f in tqdm(files, desc="learning curves", unit=" file")
    ]


def _fmt(v: float) -> str:
    return "–" if math.isnan(v) else f"{v:.3f}"


def table(found: Sequence[FileCurve]) -> str:
    """Markdown: per file and size, each column's mean over draws of rho / tau (/ system-level
    accuracy, where the file has it), how many outputs it was judged on, and how many draws'
    heads `fluency calibrate` would have written."""
    header = ["file", "genre", "ratings", "judged on", CALIBRATED, GENERAL, GENRE, "minus length"]
    lines = [
        "mean over draws of Spearman rho / per-input Kendall tau / system-level pairwise "
        "accuracy (files naming 6+ systems), on each file's inputs not drawn",
        "",
        "| " + " | ".join([*header, "head written"]) + " |",
        "|---|---|---:|---:|---|---|---|---|---|",
    ]
    for c in found:
        figures = FIGURES if c.no_systems is None else FIGURES[:2]
        for n, draws in c.draws.items():
            cells = [c.name, c.genre, str(n), f"{np.mean([d.n_held for d in draws]):.0f}"]
            for column in (CALIBRATED, GENERAL, GENRE, MINUS_LENGTH):
                if column not in c.columns:
                    cells.append("–")
                    continue
                cells.append(" / ".join(_fmt(c.mean(n, column, f)) for f in figures))
            cells.append(f"{sum(d.shipped for d in draws)} of {len(draws)}")
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def wins(found: Sequence[FileCurve], figure: str = "rho") -> str:
    """Markdown: per size, on how many files the calibrated head's mean is above each other
    column's (a file counts where both figures exist)."""
    others = (GENERAL, GENRE, MINUS_LENGTH)
    lines = [
        f"files where the calibrated head's mean {figure} is above each column's",
        "",
        "| ratings | " + " | ".join(others) + " | all of them |",
        "|---:|---|---|---|---|",
    ]
    sizes = sorted({n for c in found for n in c.draws})
    for n in sizes:
        cells = []
        every, n_every = 0, 0
        for column in (*others, None):
            above = total = 0
            for c in found:
                if n not in c.draws:
                    continue
                mine = c.mean(n, CALIBRATED, figure)
                theirs = [c.mean(n, o, figure) for o in ([column] if column else others)]
                theirs = [t for t in theirs if not math.isnan(t)]
                if math.isnan(mine) or not theirs:
                    continue
                total += 1
                above += mine > max(theirs)
            if column is None:
                every, n_every = above, total
            else:
                cells.append(f"{above} of {total}")
        lines.append(f"| {n} | " + " | ".join(cells) + f" | {every} of {n_every} |")
    return "\n".join(lines)


def plot(found: Sequence[FileCurve], path: str | Path) -> None:
    """Per file, the mean over draws of rho (upper block) and tau (lower block) against the
    ratings a head was fitted on (the calibrated head's range over draws shaded), the shipped
    heads and minus the length judged on the same outputs; written to `path` (PNG)."""
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
        GENERAL: {"color": "C1", "linestyle": "--"},
        GENRE: {"color": "C2", "linestyle": "-."},
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


def main(argv: Sequence[str] | None = None) -> int:
    from features.rows import default_cache_dir
    from scorer.bundles import load_configured_all
    from scorer.config import from_env
    from scorer.evidence.benchmark_run import judgement_files
    from scorer.evidence.genres import GENRES, genres_of
    from training.heads import head_files, scramble_check

    ap = argparse.ArgumentParser(
        prog="python -m training.learning_curve",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--model", default="default", help="the bundle whose heads are compared")
    ap.add_argument("--dev", default="../shared/dev", help="folder of *.jsonl judgement files")
    ap.add_argument("--files", nargs="*", default=(), help="only these files of --dev (names)")
    ap.add_argument("--sizes", type=int, nargs="+", default=list(SIZES), help="ratings drawn")
    ap.add_argument("--draws", type=int, default=5, help="draws a size")
    ap.add_argument("--aggregate", action="append", choices=READINGS, help="readings tried")
    ap.add_argument("--max-outputs", type=int, default=1500, help="as training.heads")
    ap.add_argument("--max-words", type=int, default=40000, help="as training.heads")
    ap.add_argument("--scrambles", default="", help="real text for the scramble check")
    ap.add_argument("--floor", type=float, default=0.95, help="share of shuffles scored lower")
    ap.add_argument("--samples", type=int, default=200, help="bootstrap samples of a choice")
    ap.add_argument("--seed", type=int, default=12345)
    ap.add_argument("--jobs", type=int, default=1, help="feature worker processes")
    ap.add_argument("--out", help="write the Markdown tables here as well")
    ap.add_argument("--plot", help="write the plot here (PNG)")
    ap.add_argument("--json", help="write every draw here")
    args = ap.parse_args(argv)
    (scorer,) = load_configured_all([args.model], from_env())
    names = [f if f.endswith(".jsonl") or Path(f).is_file() else f"{f}.jsonl" for f in args.files]
    paths = judgement_files(args.dev, names)
    genres = genres_of([p.stem for p in paths], GENRES)
    readings = args.aggregate or list(READINGS)
    cut = {"max_outputs": args.max_outputs, "max_words": args.max_words, "seed": args.seed}
    files = head_files(
        scorer, paths, genres, readings, cache_dir=default_cache_dir(), n_jobs=args.jobs, **cut
    )
    check = None
    if args.scrambles:
        check = scramble_check(
            scorer,
            args.scrambles,
            readings,
            floor=args.floor,
            seed=args.seed,
            cache_dir=default_cache_dir(),
            n_jobs=args.jobs,
        )
    found = curves(
        files,
        scorer.card,
        readings,
        sizes=args.sizes,
        draws=args.draws,
        seed=args.seed,
        check=check,
        n_samples=args.samples,
    )
    text = "\n\n".join([table(found), wins(found, "rho"), wins(found, "tau")])
    print(text)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text + "\n")
    if args.plot:
        Path(args.plot).parent.mkdir(parents=True, exist_ok=True)
        plot(found, args.plot)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps([asdict(c) for c in found], indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
