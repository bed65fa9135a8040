"""`fluency calibrate`: a head for one's own raters, starting from the bundle's head for the
genre and leaving it only where the ratings show better (`training.calibration.start`), written into
a copy of a bundle under a genre name, so that `--genre NAME` and `"genre": NAME` serve it.

With a hundred ratings, a head chosen afresh among a hundred inputs and readings is chosen by
noise (`docs/calibrate.md`). So the head starts as the bundle's head for the genre named (its
general head where it has none; `--from` names another) and switches to a named reading (every
other head, minus the length, each summed log-probability, the GLEU score under each reading),
then to a fitted single column or a column added to it, only where a paired bootstrap over the
user's inputs puts the gain in mean rho + per-input tau above zero at 95% for every candidate
tried at once (`training.calibration.switch`). A head is always written: the starting head itself,
when nothing beats it.
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from training.calibration.report import card_report, regressor, report
from training.calibration.start import Outcome, calibrate_from, named_readings, start_head
from training.heads import (
    FOLDS,
    MINUS_LENGTH,
    READING_MODES,
    HeadFile,
    ScrambleCheck,
    add_rows_options,
    read_scrambles,
    text_columns,
    write_card,
)

__all__ = ["add_commands", "calibrate", "head_file", "write_bundle"]

MAX_ADDED = 2  # fitted columns a head takes at most beyond the named reading it starts from


def head_file(
    scorer,
    judged,
    genre: str,
    readings: Sequence[str] = READING_MODES,
    *,
    cache_dir: str | Path | None = None,
    n_jobs: int = 1,
) -> HeadFile:
    """A judged table (`training.judged.table`) as `HeadFile`: its texts read under each of
    `readings` as `training.heads.data.files.text_columns` reads them, and minus the length."""
    columns = text_columns(
        scorer, judged.texts, readings, cache_dir=cache_dir, n_jobs=n_jobs, heads=True
    )
    n_tokens = columns.pop("length")["n_tokens"]
    return HeadFile(
        judged.name,
        genre,
        np.asarray(judged.human, dtype=float),
        [str(g) for g in judged.groups],
        columns,
        {MINUS_LENGTH: -n_tokens},
        list(judged.systems),
    )


def write_bundle(
    source: str | Path,
    out: str | Path,
    genre: str,
    head: Mapping,
    decision: Mapping,
    *,
    summary: str | None = None,
) -> Path:
    """A copy of the bundle folder `source` at `out` (or `source` itself), its card's `heads`
    holding `head` under `genre` beside the heads it had ("general" replaces its general head)
    and `heads_report` the decision, as `training.heads.report.cards.write_card` writes shipped
    heads."""
    from scorer.bundle import CARD_FILE

    src, out = Path(source), Path(out)
    if src.resolve() != out.resolve():
        shutil.copytree(src, out, dirs_exist_ok=True)
    card = json.loads((out / CARD_FILE).read_text())
    card["name"] = out.name
    (out / CARD_FILE).write_text(json.dumps(card, indent=2, sort_keys=True) + "\n")
    heads = {**(card.get("heads") or {}), genre: dict(head)}
    # Without a scramble check there is no share to report
    # (`training.heads.report.cards.heads_markdown`).
    mine = {k: v for k, v in decision.items() if not (k == "scrambles" and v is None)}
    report = {**(card.get("heads_report") or {}), genre: mine}
    write_card(out, heads, report)
    if summary:
        card = json.loads((out / CARD_FILE).read_text())
        card["summary"] = summary
        (out / CARD_FILE).write_text(json.dumps(card, indent=2, sort_keys=True) + "\n")
    return out


def calibrate(
    scorer,
    source: str | Path,
    judgements: Sequence,
    out: str | Path,
    *,
    genre: str,
    start: str | None = None,
    readings: Sequence[str] = READING_MODES,
    folds: int = FOLDS,
    check: ScrambleCheck | None = None,
    max_inputs: int = MAX_ADDED,
    n_samples: int = 1000,
    seed: int = 12345,
    n_jobs: int = 1,
    cache_dir: str | Path | None = None,
    command: str = "",
    summary: str | None = None,
) -> tuple[Outcome, list[HeadFile]]:
    """The head for `judgements` (judged tables, `training.judged.table.read_tables`) scored
    by the GLEU stage of `scorer` (the bundle in the folder `source`): the bundle's head for
    `genre` (or the one `start` names) unless the ratings show better
    (`training.calibration.start`), always written into the bundle at `out` under `genre`
    (`write_bundle`). Returns what was found and the files it was found on."""
    files = [
        head_file(scorer, j, genre, readings, cache_dir=cache_dir, n_jobs=n_jobs)
        for j in judgements
    ]
    card = {**scorer.card, "name": Path(source).name}
    started_from, head = start_head(card, genre, start)
    named = named_readings(card, readings, files[0].columns)
    outcome = calibrate_from(
        files,
        head,
        named,
        readings,
        started_from=started_from,
        folds=folds,
        max_inputs=max_inputs,
        check=check,
        n_samples=n_samples,
        seed=seed,
    )
    decision = card_report(outcome, files, check)
    section = outcome.head.to_section(
        genre,
        target="the human score, z-normalised within each dataset",
        regressor=regressor(outcome),
        started_from=outcome.started_from,
        held_out=decision["held_out"],
        selection=decision,
        files={f.name: len(f.human) for f in files},
        command=command,
    )
    write_bundle(source, out, genre, section, decision, summary=summary)
    return outcome, files


def _command(args: argparse.Namespace) -> str:
    """The command line that makes this head, for its card (options at their default left out)."""
    words = ["fluency", "calibrate"]
    if args.model:
        words += ["--model", args.model]
    words += ["--judgements", *map(str, args.judgements)]
    for flag, value, default in (
        ("--text-column", args.text_column, "text"),
        ("--group-column", args.group_column, None),
        ("--dataset-column", args.dataset_column, None),
        ("--genre", args.genre, None),
        ("--from", args.start, None),
        ("--scrambles", args.scrambles, ""),
        ("--said-again", args.said_again, 0),
        ("--folds", args.folds, FOLDS),
        ("--max-inputs", args.max_inputs, MAX_ADDED),
        ("--samples", args.samples, 1000),
        ("--summary", args.summary, None),
    ):
        if value != default:
            words += [flag, str(value)]
    for flag, values in (("--score-column", args.score_column), ("--aggregate", args.aggregate)):
        for v in values or ():
            words += [flag, v]
    return " ".join(shlex.quote(w) for w in [*words, "--out", str(args.out)])


def cmd_calibrate(args: argparse.Namespace, config: dict) -> int:
    from scorer.bundle import bundle_folder
    from scorer.evidence.cli import parse_fields
    from scorer.scoring import load_configured
    from training.judged.table import read_tables

    stems = [Path(p).stem for p in args.judgements]
    score_column = parse_fields(args.score_column or ["score"], stems, flag="--score-column")
    datasets = read_tables(
        args.judgements,
        text_column=args.text_column,
        score_column=score_column,
        group_column=args.group_column,
        dataset_column=args.dataset_column,
    )
    model = args.model or config["MODEL_PATH"]
    source = Path(model) if Path(model).is_dir() else bundle_folder(model, config["MODELS_DIR"])
    scorer = load_configured(str(source), config)
    genre = args.genre or Path(args.out).name
    readings = list(dict.fromkeys(args.aggregate or READING_MODES))
    cache = args.cache or None
    check = read_scrambles(scorer, args, readings)
    outcome, files = calibrate(
        scorer,
        source,
        datasets,
        args.out,
        genre=genre,
        start=args.start,
        readings=readings,
        folds=args.folds,
        check=check,
        max_inputs=args.max_inputs,
        n_samples=args.samples,
        seed=args.seed,
        n_jobs=args.jobs,
        cache_dir=cache,
        command=_command(args),
        summary=args.summary,
    )
    print(f"## {genre}")
    report(outcome, files)
    print()
    if outcome.kept:
        print(f"nothing beat the starting head: {genre} is {outcome.start.label}, as the bundle "
              "has it")  # fmt: skip
    print(
        f"wrote {args.out}: genre {genre}: {outcome.head.weights_text()}; score with --model "
        f"{Path(args.out).name} --genre {genre}"
    )
    if args.learning_curve:
        from training.calibration.curve_plot import plot
        from training.calibration.curves import CALIBRATE_SIZES, curves
        from training.calibration.learning_curve import draw_options, table

        card = {**scorer.card, "name": source.name}
        found = curves(
            files, card, readings, held_out=False, start_from=args.start, sizes=CALIBRATE_SIZES,
            folds=args.folds, **draw_options(args, check),
        )  # fmt: skip
        print()
        print(table(found))
        Path(args.learning_curve).parent.mkdir(parents=True, exist_ok=True)
        plot(found, args.learning_curve)
        print(f"wrote {args.learning_curve}")
    return 0


def add_commands(sub) -> None:
    from scorer.commands.options import add_model_option

    cal = sub.add_parser(
        "calibrate",
        help="a head for your own ratings, starting from the bundle's, in a copy of the bundle",
        description="Starts from the bundle's head for --genre NAME (its general head for a "
        "genre it lacks; --from names another) and leaves it only where your ratings show "
        "better: another head of the bundle, minus the length, a summed log-probability or the "
        "GLEU score under a reading (each judged whole, no fit), then a fitted column or one "
        "added to the head (judged in folds of your inputs), switching only where a paired "
        "bootstrap over your inputs puts the gain in mean rho + per-input tau above zero at 95%% "
        "for every candidate tried. Always writes a copy of the bundle (--model) at --out with "
        "the head under NAME (the starting head when nothing beats it): score with --genre "
        'NAME, or "genre": NAME in a request.',
    )
    add_model_option(cal, help="the bundle to copy and read with (default: the default)")
    cal.add_argument(
        "--judgements",
        nargs="+",
        required=True,
        help="judged outputs, one a row: JSONL, CSV, TSV or Parquet (by extension)",
    )
    cal.add_argument("--text-column", default="text", help="the output's text (default: text)")
    cal.add_argument(
        "--score-column",
        "--human-field",
        dest="score_column",
        action="append",
        default=[],
        metavar="[FILE=]COLUMN",
        help="the human score; dotted for nested JSONL or Parquet fields, e.g. "
        "scores.fluency (default: score); FILE=COLUMN for one file only (its name without "
        "the extension); repeat",
    )
    cal.add_argument(
        "--group-column",
        help="the input each output answers, to hold out inputs whole and rank within them "
        "(default: a column named group if there is one, else every output its own input)",
    )
    cal.add_argument(
        "--dataset-column",
        help="splits the rows into datasets, each z-normalised and held out whole "
        "(default: one dataset a file, named after it)",
    )
    cal.add_argument("--out", required=True, help="the bundle to write (models/NAME)")
    cal.add_argument(
        "--genre",
        help="the name the head is served under, and the bundle's head it starts from where "
        "the bundle has one (default: the name of --out); 'general' replaces the bundle's "
        "general head",
    )
    cal.add_argument(
        "--from",
        dest="start",
        metavar="GENRE",
        help="start from the bundle's head for GENRE (default: its head for --genre, else its "
        "general head)",
    )
    add_rows_options(cal, files=False, cuts=False)
    cal.add_argument(
        "--aggregate",
        action="append",
        choices=READING_MODES,
        help="readings of a text of several sentences to choose from; repeat (default: all)",
    )
    cal.add_argument(
        "--scrambles",
        default="",
        metavar="TEXT",
        help="real text, one paragraph a line: a head switched to must score its sentences "
        "above their shuffles (default: no check)",
    )
    cal.add_argument("--floor", type=float, default=0.95, help="share of shuffles scored lower")
    cal.add_argument(
        "--said-again",
        type=int,
        default=0,
        metavar="N",
        help="with --scrambles, N of its paragraphs: a head switched to must score their "
        "said-again versions (a sentence repeated, the text twice...) at or below them "
        "(default: no check)",
    )
    cal.add_argument(
        "--folds", type=int, default=FOLDS, help="folds of the inputs, for fitted candidates"
    )
    cal.add_argument(
        "--max-inputs",
        type=int,
        default=MAX_ADDED,
        help=f"fitted columns a head takes at most (default: {MAX_ADDED}; 0: named readings only)",
    )
    cal.add_argument("--samples", type=int, default=1000, help="bootstrap samples")
    cal.add_argument(
        "--summary",
        help="one line for the card: what the bundle is for and when not to use it "
        "(GET /v1/models and the page show it)",
    )
    cal.add_argument(
        "--learning-curve",
        metavar="PNG",
        help="also calibrate on 25, 50, 100, ... ratings (whole inputs, --draws draws each) "
        "and judge each head on the other inputs beside the head it started from, the "
        "bundle's heads and minus the length; print the table and plot it here",
    )
    cal.add_argument("--draws", type=int, default=5, help="draws a size, for --learning-curve")
    cal.set_defaults(func=cmd_calibrate)
