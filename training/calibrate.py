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
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from features.errors import InputError
from features.rows import default_cache_dir
from scorer.calibration import CALIBRATION_FILE, GLEU_INPUT
from scorer.evidence.benchmark_data import is_empty_output as is_failed_output

if TYPE_CHECKING:
    from scorer.scoring import FluencyScorer

__all__ = [
    "CANDIDATES",
    "JudgedFile",
    "add_commands",
    "calibrate",
    "input_folds",
    "is_failed_output",
    "judged_file",
    "leave_one_file_out",
]

logger = logging.getLogger(__name__)


def _candidates() -> dict[str, Any]:
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import HistGradientBoostingRegressor
    from sklearn.linear_model import HuberRegressor, LinearRegression, Ridge
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    # The GLEU distance alone, mapped affinely onto the human scale: rankings as GLEU's, a
    # scale people can read. It stays a candidate so the choice can say the features add nothing.
    gleu_only = ColumnTransformer([("gleu", "passthrough", [0])])
    out: dict[str, Any] = {"linear(gleu only)": make_pipeline(gleu_only, LinearRegression())}
    for alpha in (1.0, 10.0, 100.0, 1000.0):
        out[f"ridge(alpha={alpha:g})"] = make_pipeline(StandardScaler(), Ridge(alpha=alpha))
    out["huber(epsilon=1.35)"] = make_pipeline(StandardScaler(), HuberRegressor(max_iter=500))
    for depth in (2, 3):
        out[f"gbrt(depth={depth})"] = HistGradientBoostingRegressor(
            max_depth=depth, learning_rate=0.05, max_iter=200, random_state=12345
        )
    return out


CANDIDATES: tuple[str, ...] = (
    "linear(gleu only)",
    "ridge(alpha=1)",
    "ridge(alpha=10)",
    "ridge(alpha=100)",
    "ridge(alpha=1000)",
    "huber(epsilon=1.35)",
    "gbrt(depth=2)",
    "gbrt(depth=3)",
)


@dataclass(frozen=True)
class JudgedFile:
    """One judgement file, scored: the rows kept, their GLEU scores and features, and the
    human scores z-normalised within the file."""

    name: str
    texts: list[str]
    groups: list[str]
    human: np.ndarray  # raw human scores
    gleu: np.ndarray
    features: list[dict[str, float]]
    n_left_out: int  # empty and failed ("null") outputs

    @property
    def target(self) -> np.ndarray:
        sd = float(np.std(self.human))
        return (self.human - self.human.mean()) / (sd if sd > 0 else 1.0)


def judged_file(
    scorer: FluencyScorer,
    path: str | Path,
    *,
    field: str = "score",
    n_jobs: int = 1,
    cache_dir: str | Path | None = None,
) -> JudgedFile:
    """Score a judgement file's outputs with the GLEU stage, features included, under
    `fluency benchmark`'s protocol (`scorer.evidence.benchmark_data.read_judged`: human
    references, empty and failed outputs left out and counted), read as the scorer reads texts
    by default, with the feature rows `fluency benchmark` keeps under `cache_dir`
    (`features.rows`: texts the benchmark has read are not parsed again)."""
    from features.segment import resolve_aggregate
    from scorer.evidence.benchmark_data import model_columns, read_judged

    judged = read_judged(path, human_field=field)
    how = resolve_aggregate()
    columns = model_columns(scorer, judged.texts, [how], cache_dir=cache_dir, n_jobs=n_jobs)
    gleu, rows = columns[how]
    return JudgedFile(
        name=judged.name,
        texts=judged.texts,
        groups=judged.groups,
        human=judged.human,
        gleu=np.asarray(gleu, dtype=float),
        features=rows,
        n_left_out=judged.counts["n_empty"],
    )


def input_folds(file: JudgedFile, k: int, *, seed: int = 0) -> list[JudgedFile]:
    """`file` cut into `k` folds of whole inputs (its groups shuffled with `seed`, dealt in
    turn), each named `NAME#i`; an output with no group of its own is an input by itself."""
    if k < 2:
        raise InputError(f"folds must be at least 2, got {k}")
    inputs = sorted(set(file.groups))
    if len(inputs) < k:
        raise InputError(f"{file.name} has {len(inputs)} inputs, fewer than {k} folds")
    order = np.random.default_rng(seed).permutation(len(inputs))
    fold_of = {inputs[j]: i % k for i, j in enumerate(order)}
    out = []
    for fold in range(k):
        keep = [i for i, g in enumerate(file.groups) if fold_of[g] == fold]
        out.append(
            JudgedFile(
                name=f"{file.name}#{fold + 1}",
                texts=[file.texts[i] for i in keep],
                groups=[file.groups[i] for i in keep],
                human=file.human[keep],
                gleu=file.gleu[keep],
                features=[file.features[i] for i in keep],
                n_left_out=0,
            )
        )
    return out


def design(files: Sequence[JudgedFile], columns: Sequence[str]) -> np.ndarray:
    """The calibration inputs: the GLEU distance, then every feature column in `columns`."""
    blocks = []
    for f in files:
        feats = np.array([[row[c] for c in columns] for row in f.features], dtype=float)
        blocks.append(np.column_stack([f.gleu, feats]) if len(f.gleu) else np.empty((0, 0)))
    return np.vstack(blocks)


def leave_one_file_out(
    files: Sequence[JudgedFile], columns: Sequence[str], candidates: Mapping[str, Any]
) -> dict[str, dict[str, dict[str, float]]]:
    """{candidate: {held-out file: {"spearman", "group_kendall"}}}: each candidate fitted on
    every file but one and judged on that one."""
    from scipy.stats import spearmanr
    from sklearn.base import clone

    from scorer.evidence.agreement import per_group_kendall

    out: dict[str, dict[str, dict[str, float]]] = {}
    for name, estimator in candidates.items():
        out[name] = {}
        for k, held in enumerate(files):
            train = [f for i, f in enumerate(files) if i != k]
            model = clone(estimator).fit(design(train, columns), _targets(train))
            pred = model.predict(design([held], columns))
            out[name][held.name] = {
                "spearman": float(spearmanr(pred, held.human).statistic),
                "group_kendall": per_group_kendall(pred, held.human, held.groups).mean_tau,
            }
    return out


def _targets(files: Sequence[JudgedFile]) -> np.ndarray:
    return np.concatenate([f.target for f in files])


def calibrate(
    scorer: FluencyScorer,
    source: str | Path,
    judgements: Sequence[str | Path],
    out: str | Path,
    *,
    field: str = "score",
    n_jobs: int = 1,
    cache_dir: str | Path | None = None,
    candidates: Sequence[str] | None = None,
    command: str | None = None,
    folds: int = 0,
) -> dict[str, Any]:
    """Choose a regressor by leave-one-file-out Spearman, fit it on every file, and write a
    bundle at `out`: the GLEU stage (`scorer`, loaded from the folder `source`) copied as it
    is, `calibration.joblib`, and the card with a `calibration` section (inputs, choice,
    per-file held-out figures). Returns that section. With `folds` (>= 2) the held-out units
    are folds of each file's inputs instead of whole files (`input_folds`): one genre."""
    import joblib
    import sklearn
    from tqdm import tqdm

    from scorer.bundle import CARD_FILE, MODEL_FILE, sha256_file
    from scorer.head import HEAD_FILE

    if scorer.calibration is not None:
        raise InputError("calibrate a GLEU model, not one that already has a calibration stage")
    if len(judgements) < 2 and folds < 2:
        raise InputError(
            "give at least two --judgements files (the choice is leave-one-file-out), or "
            "--folds K to hold out inputs of one file"
        )
    pool = _candidates()
    chosen = list(candidates or pool)
    unknown = [c for c in chosen if c not in pool]
    if unknown:
        raise InputError(f"unknown regressor(s) {unknown}; choose from {sorted(pool)}")
    files = [
        judged_file(scorer, p, field=field, n_jobs=n_jobs, cache_dir=cache_dir)
        for p in tqdm(judgements, desc="judgement files", unit=" file")
    ]
    judged = files
    if folds:
        files = [fold for f in judged for fold in input_folds(f, folds)]
    columns = list(scorer.card["feature_columns"])
    lofo = leave_one_file_out(files, columns, {c: pool[c] for c in chosen})
    mean = {c: float(np.mean([r["spearman"] for r in lofo[c].values()])) for c in chosen}
    best = max(chosen, key=lambda c: mean[c])
    final = sklearn.base.clone(pool[best]).fit(design(files, columns), _targets(files))

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    src = Path(source)
    if src.resolve() != out.resolve():
        shutil.copyfile(src / MODEL_FILE, out / MODEL_FILE)
        if scorer.card.get("head"):  # the GLEU stage's linear head (scorer.head) goes with it
            shutil.copyfile(src / HEAD_FILE, out / HEAD_FILE)
    joblib.dump(final, out / CALIBRATION_FILE, compress=3)
    section = {
        "inputs": [GLEU_INPUT, *columns],
        "target": f"{field}, z-normalised within each judgement file",
        "regressor": best,
        "sha256": sha256_file(out / CALIBRATION_FILE),
        "selection": (
            f"leave-one-fold-out mean Spearman, {folds} folds of inputs per file"
            if folds
            else "leave-one-file-out mean Spearman"
        ),
        "leave_one_file_out": lofo,
        "mean_spearman": mean,
        "files": {f.name: {"n": len(f.texts), "n_left_out": f.n_left_out} for f in judged},
        "gleu_model": str(scorer.card.get("name")),
    }
    if folds:
        section["folds"] = {f.name: len(f.texts) for f in files}
    if command:
        section["command"] = command
    card = dict(scorer.card)
    card.update(name=out.name, calibration=section)
    (out / CARD_FILE).write_text(json.dumps(card, indent=2, sort_keys=True) + "\n")
    return section


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
