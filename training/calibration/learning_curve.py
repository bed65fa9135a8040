"""How many ratings a head of one's own needs, against the heads it starts from:
`python -m training.calibration.learning_curve`, its tables written from the curves that
`training.calibration.curves` computes.

For each judgement file and each size (25, 50, 100, 200 outputs), `draws` seeded draws of whole
inputs (groups) taken in a random order until they hold that many outputs. On each draw a head
is calibrated as `fluency calibrate` calibrates it (`training.calibration.start.calibrate_from`: the
shipped head for the file's genre unless the drawn ratings show better), then judged on the file's
other inputs beside the shipped heads and minus the length, all on the same outputs: Spearman's rho
over outputs, the mean per-input Kendall tau (`training.heads.metrics.figures.group_taus`) and,
where the outputs name six or more systems, the system-level pairwise accuracy
(`scorer.evidence.system_level`). Each figure is a mean over draws. A draw of one seed is the front
of one order of the inputs, so the draw of 50 holds the draw of 25.

The comparison is fair to the shipped heads: each shipped head that was fitted on the file is
refitted without it (`training.calibration.shipped_held_out`: its own inputs and reading, weights
fitted on its other files), and the calibration starts from those held-out heads. The shipped heads
as shipped, which have seen every rating of the file, stay beside them as in-sample columns.
The gain of the calibrated head over the held-out head of the file's genre (its general head
where it has none) gets a 95% interval: the held-out inputs of each draw resampled, the gain in
rho averaged over draws.

A size is skipped where fewer than 50 outputs or 2 inputs would be left to judge on. Rows are
read as `python -m training.heads` reads them (the same outputs of large files, from the row
cache, `features.rows.default_cache_dir`):

    python -m training.calibration.learning_curve --model default --dev ../shared/dev --jobs 1 \\
        --out build/learning_curve.md --plot docs/calibrate_curves.png
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

import numpy as np

from training.calibration.curve_plot import CALIBRATED, FIGURES, GENERAL, GENRE, START, plot
from training.calibration.curves import (
    SIZES,
    Draw,
    FileCurve,
    curves,
)
from training.heads import MINUS_LENGTH, READING_MODES, ScrambleCheck

__all__ = ["draw_options", "load_curves", "main", "table", "wins"]

MARGIN = 0.01  # "at least the held-out head": within this much of its mean rho
BEYOND = ", and above the held-out head beyond the interval"


def _fmt(v: float) -> str:
    return "–" if math.isnan(v) else f"{v:.3f}"


def table(found: Sequence[FileCurve]) -> str:
    """Markdown: per file and size, each column's mean over draws of rho / tau (/ system-level
    accuracy, where the file has it), how many outputs it was judged on, the calibrated head's
    gain in rho over the head it started from with its 95% interval, and in how many draws it
    left that head."""
    order = (CALIBRATED, START, GENRE, GENERAL, MINUS_LENGTH)
    header = ["file", "genre", "ratings", "judged on", *order, "gain in rho [95%]", "switched"]
    lines = [
        "mean over draws of Spearman rho / per-input Kendall tau / system-level pairwise "
        "accuracy (files naming 6+ systems), on each file's inputs not drawn; "
        f"{START}: the head the calibration started from, refitted without the file",
        "",
        "| " + " | ".join(header) + " |",
        "|---|---|---:|---:|" + "---|" * (len(header) - 4),
    ]
    for c in found:
        figures = FIGURES if c.no_systems is None else FIGURES[:2]
        for n, draws in c.draws.items():
            cells = [c.name, c.genre, str(n), f"{np.mean([d.n_held for d in draws]):.0f}"]
            for column in order:
                if column not in c.columns:
                    cells.append("–")
                    continue
                cells.append(" / ".join(_fmt(c.mean(n, column, f)) for f in figures))
            gain = c.mean(n, CALIBRATED, "rho") - c.mean(n, START, "rho")
            low, high = c.gain_interval(n)
            cells.append(f"{gain:+.3f} [{low:+.3f}, {high:+.3f}]")
            cells.append(f"{sum(d.switched for d in draws)} of {len(draws)}")
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def wins(found: Sequence[FileCurve], figure: str = "rho") -> str:
    """Markdown: per size, on how many files the calibrated head's mean `figure` is at least
    the held-out head it started from less `MARGIN`, above it beyond the gain's interval (rho),
    and at least each in-sample shipped head less `MARGIN` (a file counts where both figures
    exist)."""
    lines = [
        f"files where the calibrated head's mean {figure} is at least each column's less "
        f"{MARGIN}{BEYOND if figure == 'rho' else ''}",
        "",
        f"| ratings | at least the {START} | above it beyond the interval | at least the "
        f"{GENRE} | at least the {GENERAL} |",
        "|---:|---|---|---|---|",
    ]
    for n in sorted({n for c in found for n in c.draws}):
        cells = []
        for column in (START, "beyond", GENRE, GENERAL):
            above = total = 0
            for c in found:
                if n not in c.draws:
                    continue
                mine = c.mean(n, CALIBRATED, figure)
                if column == "beyond":
                    if figure != "rho":
                        continue
                    total += 1
                    above += c.gain_interval(n)[0] > 0
                    continue
                theirs = c.mean(n, column, figure) if column in c.columns else math.nan
                if math.isnan(mine) or math.isnan(theirs):
                    continue
                total += 1
                above += mine >= theirs - MARGIN
            cells.append(f"{above} of {total}" if total else "–")
        lines.append(f"| {n} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    from scorer.bundles import load_configured_all
    from scorer.config import from_env
    from training.heads import add_rows_options, read_head_files, read_scrambles

    ap = argparse.ArgumentParser(
        prog="python -m training.calibration.learning_curve",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--model", default="default", help="the bundle whose heads are compared")
    add_rows_options(ap, jobs=1, files_help="only these files of --dev (names)")
    ap.add_argument("--sizes", type=int, nargs="+", default=list(SIZES), help="ratings drawn")
    ap.add_argument("--draws", type=int, default=5, help="draws a size")
    ap.add_argument("--aggregate", action="append", choices=READING_MODES, help="readings tried")
    ap.add_argument("--scrambles", default="", help="real text for the scramble check")
    ap.add_argument("--floor", type=float, default=0.95, help="share of shuffles scored lower")
    ap.add_argument("--samples", type=int, default=1000, help="bootstrap samples of a choice")
    ap.add_argument("--max-inputs", type=int, default=2, help="fitted columns added at most")
    ap.add_argument("--out", help="write the Markdown tables here as well")
    ap.add_argument("--plot", help="write the plot here (PNG)")
    ap.add_argument("--json", help="write every draw here")
    ap.add_argument(
        "--load",
        nargs="+",
        metavar="JSON",
        help="draw nothing: read the curves these --json files hold (runs over parts of the "
        "files, say) and write their tables and plot",
    )
    args = ap.parse_args(argv)
    if args.load:
        found = sorted((c for p in args.load for c in load_curves(p)), key=lambda c: c.name)
        return _write(found, args)
    (scorer,) = load_configured_all([args.model], from_env())
    readings = args.aggregate or list(READING_MODES)
    # Every file is read, the curves drawn for those named: a head is refitted without a file
    # on the other files it was fitted on.
    files = read_head_files(scorer, args, readings, every=True, heads=True)
    check = read_scrambles(scorer, args, readings)
    only = [Path(f).stem for f in args.files] or None
    found = curves(
        files, scorer.card, readings, sizes=args.sizes, only=only, **draw_options(args, check)
    )
    return _write(found, args)


def draw_options(args: argparse.Namespace, check: ScrambleCheck | None) -> dict:
    """The options of `curves` that `--draws`, `--seed`, `--max-inputs` and `--samples` set,
    and the scramble check: the same in this command and `fluency calibrate --learning-curve`."""
    return {
        "draws": args.draws,
        "seed": args.seed,
        "check": check,
        "max_inputs": args.max_inputs,
        "n_samples": args.samples,
    }


def _write(found: Sequence[FileCurve], args: argparse.Namespace) -> int:
    text = "\n\n".join([table(found), wins(found, "rho"), wins(found, "tau")])
    print(text)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text + "\n")
    if args.plot:
        Path(args.plot).parent.mkdir(parents=True, exist_ok=True)
        plot(found, args.plot)
    if args.json and not args.load:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps([asdict(c) for c in found], indent=1) + "\n")
    return 0


def load_curves(path: str | Path) -> list[FileCurve]:
    """The curves a `--json` file holds."""
    out = []
    for c in json.loads(Path(path).read_text()):
        draws = {
            int(n): [
                Draw(
                    **{
                        **d,
                        "figures": {k: tuple(v) for k, v in d["figures"].items()},
                        "gains": tuple(d["gains"]),
                    }
                )
                for d in ds
            ]
            for n, ds in c["draws"].items()
        }
        out.append(FileCurve(**{**c, "columns": tuple(c["columns"]), "draws": draws}))
    return out


if __name__ == "__main__":
    raise SystemExit(main())
