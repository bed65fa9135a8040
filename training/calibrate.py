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
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from features.errors import InputError
from features.rows import default_cache_dir
from scorer.calibration import CALIBRATION_FILE
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


def judged_file(
    scorer: FluencyScorer,
    path: str | Path | Judged,
    *,
    field: str = "score",
    n_jobs: int = 1,
    cache_dir: str | Path | None = None,
    aggregate: str | None = None,
) -> JudgedFile:
    """Score a judgement file's outputs with the GLEU stage, features included, under
    `fluency benchmark`'s protocol (`scorer.evidence.benchmark_data.read_judged`: human
    references, empty and failed outputs left out and counted), read as the scorer reads texts
    by default, with the feature rows `fluency benchmark` keeps under `cache_dir`
    (`features.rows`: texts the benchmark has read are not parsed again)."""
    from features.placeholders import fill_placeholders
    from features.segment import resolve_aggregate
    from scorer.evidence.benchmark_data import model_columns, read_judged

    judged = path if isinstance(path, Judged) else read_judged(path, human_field=field)
    how = resolve_aggregate(aggregate=aggregate)
    columns = model_columns(scorer, judged.texts, [how], cache_dir=cache_dir, n_jobs=n_jobs)
    gleu, rows = columns[how]
    filled = fill_placeholders(judged.texts, scorer.placeholders)
    return JudgedFile(
        name=judged.name,
        texts=judged.texts,
        groups=judged.groups,
        human=judged.human,
        gleu=np.asarray(gleu, dtype=float),
        features=rows,
        n_left_out=judged.counts["n_empty"],
        readings=scorer.readings(filled, cache_dir=cache_dir),
    )


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
) -> dict[str, Any]:
    """Choose the second stage (`training.second_stage.choose`: regressor, inputs and, among
    `aggregates`, the reading of a text of several sentences) by its held-out mean rho + mean
    per-input tau, leaving one dataset out in turn (or, with `folds` >= 2, or one dataset
    only, folds of inputs); fit it on every dataset, and write a bundle at `out`: the GLEU
    stage (`scorer`, loaded from the folder `source`) copied as it is, `calibration.joblib`,
    and the card with a `calibration` section (inputs, choice, per-dataset held-out figures).
    Returns that section."""
    import joblib
    from tqdm import tqdm

    from features.segment import resolve_aggregate
    from scorer.bundle import CARD_FILE, MODEL_FILE, sha256_file
    from scorer.head import HEAD_FILE

    if scorer.calibration is not None:
        raise InputError("calibrate a GLEU model, not one that already has a calibration stage")
    if not judgements:
        raise InputError("give at least one judgement file")
    ways = list(dict.fromkeys(aggregates or [resolve_aggregate()]))
    read = {
        how: [
            judged_file(scorer, p, field=field, n_jobs=n_jobs, cache_dir=cache_dir, aggregate=how)
            for p in tqdm(judgements, desc=f"datasets ({how})", unit=" dataset")
        ]
        for how in ways
    }
    columns = list(scorer.card["feature_columns"])
    choices = {}
    for how, judged in read.items():
        units = [fold for f in judged for fold in input_folds(f, folds)] if folds else judged
        choices[how] = choose(units, columns, regressors=candidates, input_sets=input_sets)
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
    joblib.dump(final, out / CALIBRATION_FILE, compress=3)
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
        "gleu_model": str(scorer.card.get("name")),
    }
    if genre:
        section["genre"] = genre
    if folds or choice.held_out != "datasets":
        section["folds"] = {f.name: len(f.texts) for f in units} if folds else choice.held_out
    if command:
        section["command"] = command
    card = dict(scorer.card)
    card.update(name=out.name, calibration=section)
    (out / CARD_FILE).write_text(json.dumps(card, indent=2, sort_keys=True) + "\n")
    return section


def _score(choice) -> float:
    means = choice.means[choice.label]
    tau = means["group_kendall"]
    return means["spearman"] + (tau if np.isfinite(tau) else 0.0)


def _command(args: argparse.Namespace) -> str:
    files = " ".join(str(p) for p in args.judgements)
    model = f" --model {args.model}" if args.model else ""
    folds = f" --folds {args.folds}" if args.folds else ""
    return f"fluency calibrate{model} --judgements {files}{folds} --out {args.out}"


def cmd_calibrate(args: argparse.Namespace, config: dict) -> int:
    from scorer.scoring import load_configured

    model = args.model or config["MODEL_PATH"]
    source = Path(model) if Path(model).exists() else Path(config["MODELS_DIR"]) / model
    section = calibrate(
        load_configured(str(source), config),
        source,
        args.judgements,
        args.out,
        field=args.human_field,
        n_jobs=args.jobs,
        cache_dir=args.cache or None,
        candidates=args.regressor or None,
        command=_command(args),
        folds=args.folds,
    )
    files = list(next(iter(section["leave_one_file_out"].values())))
    print("| regressor | " + " | ".join(files) + " | mean |")
    print("|---" * (len(files) + 2) + "|")
    for name, per_file in section["leave_one_file_out"].items():
        cells = [f"{per_file[f]['spearman']:.3f}" for f in files]
        mark = " (chosen)" if name == section["regressor"] else ""
        print(
            f"| {name}{mark} | " + " | ".join(cells) + f" | {section['mean_spearman'][name]:.3f} |"
        )
    print(f"wrote {args.out}: {section['regressor']}")
    return 0


def add_commands(sub) -> None:
    cal = sub.add_parser(
        "calibrate",
        help="fit a second stage from the GLEU score and features to human judgements",
        description="Chooses the regressor by leave-one-file-out Spearman; writes a bundle.",
    )
    cal.add_argument("--model", help="the GLEU model (folder or name; default: the default)")
    cal.add_argument("--judgements", nargs="+", required=True, help="JSONL judgement files")
    cal.add_argument("--human-field", default="score", help="dotted field of the human score")
    cal.add_argument("--out", required=True, help="the bundle to write (models/NAME)")
    cal.add_argument("--jobs", type=int, default=2, help="feature worker processes")
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
        help="one genre: hold out folds of each file's inputs instead of whole files (K >= 2)",
    )
    cal.set_defaults(func=cmd_calibrate)
