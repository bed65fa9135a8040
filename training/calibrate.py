"""`fluency calibrate`: a second stage that maps the GLEU distance to what people say.

The GLEU stage ranks real sentences above generated ones; how far apart it puts two texts need
not match how far apart people put them, and its features mean different things across genres.
Foster (2008, section 5) and Bangalore et al. (2000, section 4) regress human scores on metrics;
this does the same on top of the GLEU model: a scikit-learn regressor from the GLEU distance,
every feature and the length to human scores z-normalised per judgement file (files rate on
different scales: 1-3, 1-6, 0-100, minus an error penalty).

The regressor and its settings are chosen by leave-one-file-out cross-validation: each
candidate is fitted on all files but one and scored by its Spearman on that one, so the choice
rewards what carries over to a genre it has not seen. The chosen candidate is then fitted on
every file and saved beside the GLEU stage (`calibration.joblib`, its hash in the card).

For one genre of one's own (`folds`), each judgement file is cut into folds of whole inputs
(groups), and the folds take the files' place: each candidate is fitted on all folds but one
and scored on that one, inputs it has not seen from the genre it was fitted on. That is what a
user with judgements of their own system's output can expect on its next outputs; it says
nothing about other genres.
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from features.errors import InputError
from features.rows import default_cache_dir
from scorer.calibration import CALIBRATION_FILE, linear_form
from scorer.evidence.benchmark_data import JudgedFile as Judged
from scorer.evidence.benchmark_data import is_empty_output as is_failed_output
from training.second_stage import (
    CANDIDATES,
    INPUT_SETS,
    JudgedFile,
    choose,
    fit_choice,
    input_folds,
    inputs_of,
    judged_file,
    leave_one_file_out,
    targets,
)

_targets = targets  # the name the learning curve and older callers use

if TYPE_CHECKING:
    from scorer.scoring import FluencyScorer

__all__ = [
    "CANDIDATES",
    "INPUT_SETS",
    "JudgedFile",
    "add_commands",
    "calibrate",
    "input_folds",
    "is_failed_output",
    "judged_file",
    "leave_one_file_out",
    "targets",
]

logger = logging.getLogger(__name__)


def calibrate(
    scorer: FluencyScorer,
    source: str | Path,
    judgements: Sequence[str | Path | Judged],
    out: str | Path,
    *,
    field: str = "score",
    n_jobs: int = 1,
    cache_dir: str | Path | None = None,
    candidates: Sequence[str] | None = None,
    command: str | None = None,
    folds: int = 0,
    aggregates: Sequence[str] | None = None,
    input_sets: Sequence[str] = INPUT_SETS,
    genre: str | None = None,
    summary: str | None = None,
    genres: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Choose the second stage (`training.second_stage.choose`: regressor, inputs and, among
    `aggregates`, the reading of a text of several sentences) by its held-out mean rho + mean
    per-input tau, leaving one dataset out in turn (or, with `folds` >= 2, or one dataset
    only, folds of inputs); fit it on every dataset, and write a bundle at `out`: the GLEU
    stage (`scorer`, loaded from the folder `source`) copied as it is, `calibration.joblib`,
    and the card with a `calibration` section (inputs, choice, per-dataset held-out figures).
    With `genres` (dataset name -> genre) spanning two or more genres, the choice leaves
    whole genres out instead (`training.second_stage.choose`): a general model.
    Returns that section."""
    import joblib
    from tqdm import tqdm

    from features.segment import resolve_aggregate
    from scorer.bundle import CARD_FILE, MODEL_FILE, sha256_file
    from scorer.head import HEAD_FILE

    scorer = scorer.gleu_stage()  # a bundle's own calibration is replaced, never stacked
    if not judgements:
        raise InputError("give at least one judgement file")
    ways = list(dict.fromkeys(aggregates or [resolve_aggregate()]))
    read = {
        how: [
            judged_file(
                scorer,
                p,
                field=field,
                n_jobs=n_jobs,
                cache_dir=cache_dir,
                aggregate=how,
                readings="features+readings" in input_sets,
            )
            for p in tqdm(judgements, desc=f"datasets ({how})", unit=" dataset")
        ]
        for how in ways
    }
    columns = list(scorer.card["feature_columns"])
    choices = {}
    for how, judged in read.items():
        units = [fold for f in judged for fold in input_folds(f, folds)] if folds else judged
        by_genre = None if folds else genres
        choices[how] = choose(
            units, columns, regressors=candidates, input_sets=input_sets, genres=by_genre
        )
    how = max(ways, key=lambda w: _score(choices[w]))
    choice, judged = choices[how], read[how]
    units = [fold for f in judged for fold in input_folds(f, folds)] if folds else judged
    final = fit_choice(choice, units, columns)

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    src = Path(source)
    if src.resolve() != out.resolve():
        shutil.copyfile(src / MODEL_FILE, out / MODEL_FILE)
        if scorer.card.get("head"):  # the GLEU stage's linear head (scorer.head) goes with it
            shutil.copyfile(src / HEAD_FILE, out / HEAD_FILE)
    joblib.dump(final.model, out / CALIBRATION_FILE, compress=3)  # scikit-learn's own classes
    linear = linear_form(final.model)
    section = {
        "inputs": inputs_of(columns, choice.input_set),
        "target": f"{field}, z-normalised within each dataset",
        "regressor": choice.regressor,
        "input_set": choice.input_set,
        "aggregate": how,
        "sha256": sha256_file(out / CALIBRATION_FILE),
        "selection": (
            f"held out: {f'{folds} folds of inputs per dataset' if folds else choice.held_out}; "
            "the highest mean Spearman + mean per-input Kendall"
        ),
        "leave_one_file_out": choice.table,
        "mean_spearman": {k: v["spearman"] for k, v in choice.means.items()},
        "mean_group_kendall": {k: v["group_kendall"] for k, v in choice.means.items()},
        "aggregates": {w: {"choice": c.label, "criterion": _score(c)} for w, c in choices.items()},
        "files": {f.name: {"n": len(f.texts), "n_left_out": f.n_left_out} for f in judged},
        "gleu_model": Path(source).name,
    }
    if linear is not None:
        section["linear"] = linear  # served from the card, without scikit-learn
    # Each input read within the range it took in the fit (training.second_stage.Bounded).
    section["clip"] = {
        "low": [None if np.isinf(v) else float(v) for v in final.low],
        "high": [None if np.isinf(v) else float(v) for v in final.high],
    }
    if genre:
        section["genre"] = genre
    if genres and not folds:
        section["genres"] = {f.name: genres.get(f.name, f.name) for f in judged}
    if folds or choice.held_out not in ("datasets", "genres"):
        section["folds"] = {f.name: len(f.texts) for f in units} if folds else choice.held_out
    if command:
        section["command"] = command
    card = dict(scorer.card)
    card.update(name=out.name, calibration=section)
    card.pop("summary", None)  # the GLEU stage's own line does not describe this bundle
    if summary:
        card["summary"] = summary
    (out / CARD_FILE).write_text(json.dumps(card, indent=2, sort_keys=True) + "\n")
    return section


def _score(choice) -> float:
    means = choice.means[choice.label]
    tau = means["group_kendall"]
    return means["spearman"] + (tau if np.isfinite(tau) else 0.0)


FOLDS_WARNING = (
    "fluency: warning: {what}: the second stage is chosen by {k} folds of inputs of one "
    "dataset, which overstate what a new dataset will see (on this project's development "
    "data by 0.09-0.20 in Spearman); judgements of two or more datasets (files, or "
    "--dataset-column) are held out whole instead"
)


def _command(args: argparse.Namespace) -> str:
    files = " ".join(str(p) for p in args.judgements)
    model = f" --model {args.model}" if args.model else ""
    options = ""
    scores = [c for c in args.score_column if c != "score"]
    for flag, value, default in (
        ("--text-column", args.text_column, "text"),
        ("--score-column", " --score-column ".join(scores) or None, None),
        ("--group-column", args.group_column, None),
        ("--dataset-column", args.dataset_column, None),
        ("--folds", args.folds, 0),
        ("--learning-curve", args.learning_curve, None),
        ("--genre", args.genre, None),
        ("--across-genres", "" if args.across_genres else None, None),
        ("--summary", repr(args.summary) if args.summary else None, None),
    ):
        if value != default:
            options += f" {flag} {value}".rstrip()
    for flag, values in (
        ("--aggregate", args.aggregate),
        ("--inputs", args.inputs),
        ("--regressor", args.regressor),
    ):
        options += "".join(f" {flag} '{v}'" if "(" in v else f" {flag} {v}" for v in values or [])
    return f"fluency calibrate{model} --judgements {files}{options} --out {args.out}"


def _aggregates(asked: Sequence[str] | None) -> list[str] | None:
    from features.segment import AGGREGATES

    if not asked:
        return None
    return list(AGGREGATES) if "all" in asked else list(dict.fromkeys(asked))


def cmd_calibrate(args: argparse.Namespace, config: dict) -> int:
    import sys

    from scorer.evidence.cli import parse_fields
    from scorer.evidence.genres import genres_of
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
    source = Path(model) if Path(model).exists() else Path(config["MODELS_DIR"]) / model
    scorer = load_configured(str(source), config)
    folds = args.folds
    if len(datasets) < 2 and not folds:
        folds = 5
    if folds:
        what = "one dataset" if len(datasets) < 2 else "--folds"
        print(FOLDS_WARNING.format(what=what, k=folds), file=sys.stderr)
    section = calibrate(
        scorer,
        source,
        datasets,
        args.out,
        field=score_column if isinstance(score_column, str) else "score",
        n_jobs=args.jobs,
        cache_dir=args.cache or None,
        candidates=args.regressor or None,
        command=_command(args),
        folds=folds,
        aggregates=_aggregates(args.aggregate),
        input_sets=args.inputs or INPUT_SETS,
        genre=args.genre,
        summary=args.summary,
        genres=genres_of([d.name for d in datasets]) if args.across_genres else None,
    )
    held = list(next(iter(section["leave_one_file_out"].values())))
    chosen = f"{section['regressor']} [{section['input_set']}]"
    print(section["selection"])
    print("| regressor [inputs] | " + " | ".join(held) + " | mean rho | mean tau |")
    print("|---" * (len(held) + 3) + "|")
    for name, per_file in section["leave_one_file_out"].items():
        cells = [f"{per_file[f]['spearman']:.3f}" for f in held]
        mark = " (chosen)" if name == chosen else ""
        rho, tau = section["mean_spearman"][name], section["mean_group_kendall"][name]
        print(f"| {name}{mark} | " + " | ".join(cells) + f" | {rho:.3f} | {tau:.3f} |")
    print(f"wrote {args.out}: {chosen}, reading {section['aggregate']}")
    if args.learning_curve:
        from training.learning_curve import bundle_curve, plot, table

        curve = bundle_curve(
            scorer, datasets, section, n_jobs=args.jobs, cache_dir=args.cache or None
        )
        print(
            f"\nlearning curve of {curve.label}: {len(curve.reference.rho)} draws, "
            f"{curve.held_out:.0%} of inputs held out"
        )
        print(table(curve))
        Path(args.learning_curve).parent.mkdir(parents=True, exist_ok=True)
        plot(curve, args.learning_curve, title=f"{Path(args.out).name}: {curve.label}")
        print(f"wrote {args.learning_curve}")
    return 0


def add_commands(sub) -> None:
    from scorer.commands.options import add_aggregate_option, add_jobs_option, add_model_option

    cal = sub.add_parser(
        "calibrate",
        help="fit a second stage from the GLEU score and features to human judgements",
        description="Fits a second stage from the GLEU score and features to human scores, "
        "z-normalised within each dataset, and writes a bundle (models/NAME). The regressor "
        "is chosen by held-out datasets when the judgements make two or more (files, or "
        "--dataset-column), else by folds of inputs of the one dataset (5, or --folds K).",
    )
    add_model_option(cal, help="the GLEU model (folder or name; default: the default)")
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
    add_jobs_option(cal, default=2, help="feature worker processes")
    add_aggregate_option(
        cal,
        allow_all=True,
        help="readings of a text of several sentences to choose from, by the same held-out "
        "figures (repeat, or 'all'; default: the scorer's default); the bundle serves the "
        "chosen one unless a request asks for another",
    )
    cal.add_argument(
        "--inputs",
        action="append",
        choices=INPUT_SETS,
        help="second-stage inputs to choose from: the GLEU score and features, or those and "
        "the readings (both readings, least and most fluent sentence, sentence count, length, "
        "LM sum); repeat (default: both)",
    )
    cal.add_argument("--genre", help="the genre the bundle is for, recorded in its card")
    cal.add_argument(
        "--across-genres",
        action="store_true",
        help="a general model: choose by leaving whole genres out (each dataset's genre as "
        "scorer/evidence/genres.py lists it; an unlisted dataset is a genre of its own), each "
        "genre weighing the same",
    )
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
    cal.add_argument("--regressor", action="append", default=[], help="candidates to try")
    cal.add_argument(
        "--folds",
        type=int,
        default=0,
        help="hold out K folds of each dataset's inputs instead of whole datasets (K >= 2; "
        "default with one dataset: 5)",
    )
    cal.add_argument(
        "--learning-curve",
        metavar="PNG",
        help="also measure held-out rho and per-input tau of the chosen calibration trained "
        "on 50, 100, 200, 400, 800 judgements (5 draws each), print the table and plot it here",
    )
    cal.set_defaults(func=cmd_calibrate)
