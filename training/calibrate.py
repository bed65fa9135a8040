"""`fluency calibrate`: a head of one's own, chosen on one's own ratings by the selection that
chooses every shipped head (`training.heads_select`), written into a copy of a bundle under a
genre name, so that `--genre NAME` and `"genre": NAME` serve it.

Which of the GLEU stage's signals people follow differs between genres and raters (raters of
restaurant texts favour the longer output, raters of translations the shorter), so a head is
fitted on the ratings it is to agree with, and chosen as `python -m training.heads` chooses:

- Candidates: the GLEU score and every feature column, under each reading of a text of several
  sentences (`training.heads.READINGS`). The head starts from the best single input and adds one
  only where the held-out mean rho + mean per-input tau rises with a 95% interval above zero;
  each weight keeps its input's own sign (`heads_select.forward_select`).
- Held out: with one dataset, folds of its whole inputs (groups), each fold standing for a
  dataset; with several, one dataset out (for a general head, one genre out).
- With a scramble check (`--scrambles`, real text), a head must score real sentences above
  their shuffles.
- It ships (`training.heads.decide`) only where it beats minus the length on both held-out
  means; a fitted head that does not beat its best single input on both ships that input.

Folds of one dataset share its systems, raters and wording, so they overstate what a new
dataset of the genre will see. `training.held_out` makes the same choice without the file it
scores, for `fluency benchmark --protocol lodo`.
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from features.rows import default_cache_dir
from training.choose import FOLDS, Choice, choose, fold_rows, input_folds, subset
from training.heads import (
    MINUS_LENGTH,
    READINGS,
    print_report,
    scramble_check,
    section,
    text_columns,
    write_card,
)
from training.heads_select import Fitted, HeadFile, ScrambleCheck

__all__ = [
    "FOLDS",
    "Choice",
    "add_commands",
    "calibrate",
    "choose",
    "fold_rows",
    "head_file",
    "input_folds",
    "subset",
    "write_bundle",
]


def head_file(
    scorer,
    judged,
    genre: str,
    readings: Sequence[str] = READINGS,
    *,
    cache_dir: str | Path | None = None,
    n_jobs: int = 1,
) -> HeadFile:
    """A judged table (`training.judged_table`) as `HeadFile`: its texts read under each of
    `readings` as `training.heads.text_columns` reads them, and minus the length."""
    columns = text_columns(scorer, judged.texts, readings, cache_dir=cache_dir, n_jobs=n_jobs)
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
    and `heads_report` the decision, as `training.heads.write_card` writes shipped heads."""
    from scorer.bundle import CARD_FILE

    src, out = Path(source), Path(out)
    if src.resolve() != out.resolve():
        shutil.copytree(src, out, dirs_exist_ok=True)
    card = json.loads((out / CARD_FILE).read_text())
    card["name"] = out.name
    (out / CARD_FILE).write_text(json.dumps(card, indent=2, sort_keys=True) + "\n")
    heads = {**(card.get("heads") or {}), genre: dict(head)}
    # Without a scramble check there is no share to report (`training.heads.heads_markdown`).
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
    readings: Sequence[str] = READINGS,
    folds: int = FOLDS,
    check: ScrambleCheck | None = None,
    max_inputs: int = 4,
    n_samples: int = 200,
    seed: int = 12345,
    n_jobs: int = 1,
    cache_dir: str | Path | None = None,
    command: str = "",
    summary: str | None = None,
) -> tuple[Choice, list[HeadFile]]:
    """Choose a head on `judgements` (judged tables, `training.judged_table.read_tables`) with
    `choose`, scored by the GLEU stage of `scorer` (the bundle in the folder `source`), and
    where it ships write the bundle at `out` with it under `genre` (`write_bundle`). Returns the
    choice and the files it was made on."""
    from tqdm import tqdm

    files = [
        head_file(scorer, j, genre, readings, cache_dir=cache_dir, n_jobs=n_jobs)
        for j in judgements
    ]
    total = len(readings) * (len(files[0].columns[readings[0]]) if files else 0)
    with tqdm(total=total, desc=f"head {genre}: single inputs", unit=" input") as bar:
        choice = choose(
            files,
            readings,
            folds=folds,
            check=check,
            max_inputs=max_inputs,
            n_samples=n_samples,
            seed=seed,
            progress=bar,
        )
    if choice.ships:
        held = choice.decision["held_out"]
        head = section(
            choice.fitted, files, choice.decision, genre=genre, held=held, command=command
        )
        write_bundle(source, out, genre, head, choice.decision, summary=summary)
    return choice, files


# -- the command ----------------------------------------------------------------------------

FOLDS_NOTE = (
    "fluency: note: one dataset: the head is chosen on {k} folds of its inputs, which overstate "
    "what a new dataset of the genre will see (folds share its systems, raters and wording); "
    "judgements of two or more datasets (files, or --dataset-column) are held out whole"
)


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
        ("--scrambles", args.scrambles, ""),
        ("--folds", args.folds, FOLDS),
        ("--max-inputs", args.max_inputs, 4),
        ("--summary", args.summary, None),
    ):
        if value != default:
            words += [flag, str(value)]
    for flag, values in (("--score-column", args.score_column), ("--aggregate", args.aggregate)):
        for v in values or ():
            words += [flag, v]
    return " ".join(shlex.quote(w) for w in [*words, "--out", str(args.out)])


def _weights(fitted: Fitted) -> str:
    terms = [f"{w:+.4g} {c}" for c, w in zip(fitted.inputs, fitted.coef, strict=True)]
    return f"{' '.join(terms)} {fitted.intercept:+.4g}"


def cmd_calibrate(args: argparse.Namespace, config: dict) -> int:
    from scorer.bundle import bundle_folder
    from scorer.evidence.cli import parse_fields
    from scorer.scoring import load_configured
    from training.judged_table import read_tables

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
    readings = list(dict.fromkeys(args.aggregate or READINGS))
    cache = args.cache or None
    check = None
    if args.scrambles:
        check = scramble_check(
            scorer, args.scrambles, readings, floor=args.floor, seed=args.seed, cache_dir=cache
        )
    if len(datasets) == 1:
        print(FOLDS_NOTE.format(k=args.folds), file=sys.stderr)
    choice, files = calibrate(
        scorer,
        source,
        datasets,
        args.out,
        genre=genre,
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
    print_report({genre: choice.decision}, out=sys.stdout)
    if choice.fell_back:
        reading, inputs = choice.selected
        print(
            f"the selected head ({' + '.join(inputs)}, read {reading}) did not beat its best "
            f"single input on both held-out means: {genre} is that input alone, {choice.label}"
        )
    code = 0
    if choice.ships:
        print(
            f"wrote {args.out}: genre {genre}: {_weights(choice.fitted)}, read "
            f"{choice.fitted.reading}; score with --model {Path(args.out).name} --genre {genre}"
        )
    else:
        print(f"fluency: no head written: {choice.decision['decision']}", file=sys.stderr)
        code = 1
    if args.learning_curve:
        from training.learning_curve import CALIBRATE_SIZES, curves, plot, table

        found = curves(
            files,
            scorer.card,
            readings,
            sizes=CALIBRATE_SIZES,
            draws=args.draws,
            seed=args.seed,
            folds=args.folds,
            check=check,
            max_inputs=args.max_inputs,
            n_samples=args.samples,
        )
        print()
        print(table(found))
        Path(args.learning_curve).parent.mkdir(parents=True, exist_ok=True)
        plot(found, args.learning_curve)
        print(f"wrote {args.learning_curve}")
    return code


def add_commands(sub) -> None:
    from scorer.commands.options import add_jobs_option, add_model_option

    cal = sub.add_parser(
        "calibrate",
        help="fit a head on your own ratings and add it to a copy of a bundle, under a genre",
        description="Chooses a head (the GLEU score and a few features, read one way) on human "
        "scores z-normalised within each dataset, as the shipped heads are chosen: held out by "
        "folds of the inputs of one dataset (5, or --folds K), or one dataset out; a head that "
        "does not beat minus the length is not written, and one that does not beat its best "
        "single input is that input. Writes a copy of the bundle (--model) at --out with the "
        'head under --genre NAME: score with --genre NAME, or "genre": NAME in a request.',
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
        help="the name the head is served under (default: the name of --out); 'general' "
        "replaces the bundle's general head",
    )
    add_jobs_option(cal, default=2, help="feature worker processes")
    cal.add_argument(
        "--aggregate",
        action="append",
        choices=READINGS,
        help="readings of a text of several sentences to choose from; repeat (default: all)",
    )
    cal.add_argument(
        "--scrambles",
        default="",
        metavar="TEXT",
        help="real text, one paragraph a line: the head must score its sentences above their "
        "shuffles (default: no check)",
    )
    cal.add_argument("--floor", type=float, default=0.95, help="share of shuffles scored lower")
    cal.add_argument("--folds", type=int, default=FOLDS, help="folds of one dataset's inputs")
    cal.add_argument("--max-inputs", type=int, default=4, help="inputs a head at most")
    cal.add_argument("--samples", type=int, default=200, help="bootstrap samples")
    cal.add_argument("--seed", type=int, default=12345)
    cal.add_argument(
        "--summary",
        help="one line for the card: what the bundle is for and when not to use it "
        "(GET /v1/models and the page show it)",
    )
    cal.add_argument(
        "--cache",
        default=str(default_cache_dir()),
        help="feature-row cache folder, shared with fluency benchmark and train "
        "(default: FLUENCY_ROW_CACHE, else build/rows; '' off)",
    )
    cal.add_argument(
        "--learning-curve",
        metavar="PNG",
        help="also choose heads on 25, 50, 100, ... ratings (whole inputs, --draws draws each) "
        "and judge them on the other inputs beside the bundle's heads and minus the length; "
        "print the table and plot it here",
    )
    cal.add_argument("--draws", type=int, default=5, help="draws a size, for --learning-curve")
    cal.set_defaults(func=cmd_calibrate)
