"""The second stage's estimation: candidates, their inputs, and the choice among them by held-out
datasets (`fluency calibrate`, and `fluency benchmark --protocol lodo`, which calls the same
choice for every file it leaves out).

- Candidates: an affine map of the GLEU score alone; ridge at four strengths; Huber; gradient
  boosting at two depths; and `scorer.ranking.InputRanker`, fitted on pairs of outputs of one
  input that people scored apart (what a reranker needs), at two strengths.
- Inputs: the GLEU score and every feature column of the text read as the bundle reads it
  ("features"), and beside them the `scorer.calibration.READINGS` ("features+readings": both
  readings, the least and most fluent sentence, the sentence count, the length, the LM sum).
- Targets: human scores z-normalised within each dataset (datasets rate on different scales).
- Weights: every dataset counts as much in the fit as it does in the choice and in the
  yardstick (each row weighs 1 / its dataset's size), so the largest dataset does not set
  the weights for the genre.
- The choice: each (candidate, inputs) is fitted on every dataset but one and judged on that
  one, by Spearman's rho over its outputs and by the mean per-input Kendall tau; the pair with
  the highest mean rho + mean tau wins (tau left out where no dataset has inputs with several
  outputs). With one dataset only, folds of its inputs take the datasets' place, which
  overstates what a new dataset will see. Given the datasets' genres, spanning two or more,
  whole genres are held out instead (`leave_one_genre_out`), each genre weighing the same in
  the criterion: what a general model meets is a genre it never saw.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from features.errors import InputError
from scorer.calibration import GLEU_INPUT, READINGS
from scorer.evidence.benchmark_data import JudgedFile as Judged

if TYPE_CHECKING:
    from scorer.scoring import FluencyScorer

__all__ = [
    "CANDIDATES",
    "INPUT_SETS",
    "Bounded",
    "Choice",
    "JudgedFile",
    "bounds",
    "candidates",
    "choose",
    "dataset_weights",
    "design",
    "fit_choice",
    "fit_on",
    "input_fold_index",
    "input_folds",
    "inputs_of",
    "judged_file",
    "leave_one_file_out",
    "leave_one_genre_out",
    "targets",
]

INPUT_SETS = ("features", "features+readings")
CANDIDATES: tuple[str, ...] = (
    "linear(gleu only)",
    "ridge(alpha=1)",
    "ridge(alpha=10)",
    "ridge(alpha=100)",
    "ridge(alpha=1000)",
    "ridge(alpha=10000)",
    "huber(epsilon=1.35)",
    "gbrt(depth=2)",
    "gbrt(depth=3)",
    "ranker(C=0.01)",
    "ranker(C=1)",
    "ranker(C=0.01, across=0.5)",
)


def candidates() -> dict[str, Any]:
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import HistGradientBoostingRegressor
    from sklearn.linear_model import HuberRegressor, LinearRegression, Ridge
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from scorer.ranking import InputRanker

    # The GLEU distance alone, mapped affinely onto the human scale: rankings as GLEU's, a
    # scale people can read. It stays a candidate so the choice can say the features add nothing.
    gleu_only = ColumnTransformer([("gleu", "passthrough", [0])])
    out: dict[str, Any] = {"linear(gleu only)": make_pipeline(gleu_only, LinearRegression())}
    for alpha in (1.0, 10.0, 100.0, 1000.0, 10000.0):
        out[f"ridge(alpha={alpha:g})"] = make_pipeline(StandardScaler(), Ridge(alpha=alpha))
    out["huber(epsilon=1.35)"] = make_pipeline(StandardScaler(), HuberRegressor(max_iter=500))
    for depth in (2, 3):
        out[f"gbrt(depth={depth})"] = HistGradientBoostingRegressor(
            max_depth=depth, learning_rate=0.05, max_iter=200, random_state=12345
        )
    for c in (0.01, 1.0):
        out[f"ranker(C={c:g})"] = InputRanker(C=c)
    # Both objectives at once: half the pairs within inputs, half across inputs of one dataset.
    out["ranker(C=0.01, across=0.5)"] = InputRanker(C=0.01, across=0.5)
    return out


@dataclass(frozen=True)
class JudgedFile:
    """One dataset, scored: the outputs kept, their GLEU scores, features and readings, and the
    human scores (z-normalised within the dataset as `target`)."""

    name: str
    texts: list[str]
    groups: list[str]
    human: np.ndarray  # raw human scores
    gleu: np.ndarray
    features: list[dict[str, float]]
    n_left_out: int  # empty and failed ("null") outputs
    readings: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def target(self) -> np.ndarray:
        sd = float(np.std(self.human))
        return (self.human - self.human.mean()) / (sd if sd > 0 else 1.0)

    def subset(self, keep: Sequence[int], name: str) -> JudgedFile:
        keep = list(keep)
        return JudgedFile(
            name=name,
            texts=[self.texts[i] for i in keep],
            groups=[self.groups[i] for i in keep],
            human=self.human[keep],
            gleu=self.gleu[keep],
            features=[self.features[i] for i in keep],
            n_left_out=0,
            readings={k: v[keep] for k, v in self.readings.items()},
        )


def judged_file(
    scorer: FluencyScorer,
    path: str | Path | Judged,
    *,
    field: str = "score",
    n_jobs: int = 1,
    cache_dir: str | Path | None = None,
    aggregate: str | None = None,
    readings: bool = True,
) -> JudgedFile:
    """Score a judgement file's outputs with the GLEU stage, features included, under
    `fluency benchmark`'s protocol (`scorer.evidence.benchmark_data.read_judged`: human
    references, empty and failed outputs left out and counted), read as the scorer reads texts
    by default, with the feature rows `fluency benchmark` keeps under `cache_dir`
    (`features.rows`: texts the benchmark has read are not parsed again). `readings`: also
    the readings of each text (the "features+readings" inputs; they read every text whole as
    well as split, so leave them out when no candidate reads them)."""
    from features.placeholders import fill_placeholders
    from features.segment import resolve_aggregate
    from scorer.evidence.benchmark_data import model_columns, read_judged

    scorer = scorer.gleu_stage()  # the first stage's distance, whatever stage the bundle adds
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
        readings=scorer.readings(filled, cache_dir=cache_dir) if readings else {},
    )


def input_fold_index(groups: Sequence[str], k: int, *, seed: int = 0, name: str = "") -> np.ndarray:
    """The fold (0..k-1) of each output: whole inputs (groups), shuffled with `seed` and dealt
    in turn."""
    if k < 2:
        raise InputError(f"folds must be at least 2, got {k}")
    inputs = sorted(set(groups))
    if len(inputs) < k:
        raise InputError(f"{name or 'the dataset'} has {len(inputs)} inputs, fewer than {k} folds")
    order = np.random.default_rng(seed).permutation(len(inputs))
    fold_of = {inputs[j]: i % k for i, j in enumerate(order)}
    return np.array([fold_of[g] for g in groups], dtype=int)


def input_folds(file: JudgedFile, k: int, *, seed: int = 0) -> list[JudgedFile]:
    """`file` cut into `k` folds of whole inputs (`input_fold_index`), each named `NAME#i`; an
    output with no group of its own is an input by itself."""
    fold = input_fold_index(file.groups, k, seed=seed, name=file.name)
    return [file.subset(np.flatnonzero(fold == f), f"{file.name}#{f + 1}") for f in range(k)]


def inputs_of(columns: Sequence[str], input_set: str) -> list[str]:
    """The calibration's inputs, in the order `scorer.calibration.Calibration.apply` reads."""
    if input_set not in INPUT_SETS:
        raise InputError(f"unknown inputs {input_set!r}; choose from {', '.join(INPUT_SETS)}")
    extra = list(READINGS) if input_set == "features+readings" else []
    return [GLEU_INPUT, *columns, *extra]


def design(
    files: Sequence[JudgedFile], columns: Sequence[str], readings: Sequence[str] = ()
) -> np.ndarray:
    """The calibration inputs: the GLEU distance, every feature column in `columns`, then the
    `readings` named."""
    blocks = []
    for f in files:
        feats = np.array([[row[c] for c in columns] for row in f.features], dtype=float)
        parts = [f.gleu[:, None], feats.reshape(len(f.gleu), len(columns))]
        parts += [np.asarray(f.readings[r], dtype=float)[:, None] for r in readings]
        blocks.append(np.hstack(parts))
    return np.vstack(blocks)


def targets(files: Sequence[JudgedFile]) -> np.ndarray:
    return np.concatenate([f.target for f in files])


def _groups(files: Sequence[JudgedFile]) -> list[str]:
    return [f"{f.name}\x1f{g}" for f in files for g in f.groups]


def dataset_weights(files: Sequence[JudgedFile]) -> np.ndarray:
    """Each row's weight in the fit: 1 / its dataset's size, scaled to a mean of 1."""
    w = np.concatenate([np.full(len(f.human), 1.0 / max(len(f.human), 1)) for f in files])
    return w / w.mean()


def fit_on(estimator, files: Sequence[JudgedFile], columns, readings) -> Bounded:
    """`estimator` fitted on `files` (each dataset weighing the same), its inputs bounded to
    the range they took there (`Bounded`)."""
    from sklearn.base import clone

    model = clone(estimator)
    X, y, w = design(files, columns, readings), targets(files), dataset_weights(files)
    steps = getattr(model, "steps", None)
    final = steps[-1][1] if steps else model
    kwargs: dict[str, Any] = {}
    if "groups" in inspect.signature(model.fit).parameters:
        kwargs["groups"] = _groups(files)
    if "datasets" in inspect.signature(model.fit).parameters:
        kwargs["datasets"] = [f.name for f in files for _ in f.groups]
    if "sample_weight" in inspect.signature(final.fit).parameters:
        kwargs[f"{steps[-1][0]}__sample_weight" if steps else "sample_weight"] = w
    low, high = bounds(X)
    return Bounded(model.fit(X, y, **kwargs), low, high)


def bounds(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each input's range in the fit; the GLEU score (column 0) is left unbounded, since the
    stage is to read a text below every judged one as lower still."""
    low, high = np.nanmin(X, axis=0), np.nanmax(X, axis=0)
    low[0], high[0] = -np.inf, np.inf
    return low, high


class Bounded:
    """A fitted second stage that reads each input clipped to the range it took in the fit.

    People's judgements cover outputs of real systems: symbol debris, a 200-word run of one
    token or an empty parse lie far outside them, and a linear stage would extrapolate its
    weights there (a debris text read by the default's ridge scored 25 standard deviations
    above the average judged output). Clipped, such a text gets the stage's value at the edge
    of what it saw, and its GLEU score, never clipped, still places it below. The bounds go
    into the card (`calibration.clip`) and `scorer.calibration.Calibration` applies them."""

    def __init__(self, model, low: np.ndarray, high: np.ndarray):
        self.model, self.low, self.high = model, np.asarray(low), np.asarray(high)

    def predict(self, X) -> np.ndarray:
        return self.model.predict(np.clip(np.asarray(X, dtype=float), self.low, self.high))


def judge(pred: np.ndarray, held: JudgedFile) -> dict[str, float]:
    from scipy.stats import spearmanr

    from scorer.evidence.agreement import per_group_kendall

    return {
        "spearman": float(spearmanr(pred, held.human).statistic),
        "group_kendall": per_group_kendall(pred, held.human, held.groups).mean_tau,
    }


def leave_one_file_out(
    files: Sequence[JudgedFile],
    columns: Sequence[str],
    candidates: Mapping[str, Any],
    readings: Sequence[str] = (),
) -> dict[str, dict[str, dict[str, float]]]:
    """{candidate: {held-out file: {"spearman", "group_kendall"}}}: each candidate fitted on
    every file but one and judged on that one."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for name, estimator in candidates.items():
        out[name] = {}
        for k, held in enumerate(files):
            train = [f for i, f in enumerate(files) if i != k]
            model = fit_on(estimator, train, columns, readings)
            out[name][held.name] = judge(model.predict(design([held], columns, readings)), held)
    return out


def leave_one_genre_out(
    files: Sequence[JudgedFile],
    genres: Mapping[str, str],
    columns: Sequence[str],
    candidates: Mapping[str, Any],
    readings: Sequence[str] = (),
) -> dict[str, dict[str, dict[str, float]]]:
    """{candidate: {held-out file: {"spearman", "group_kendall"}}}: each candidate fitted on the
    files of every genre but one (`genres`: file name -> genre) and judged on each file of
    that one."""
    order = list(dict.fromkeys(genres[f.name] for f in files))
    out: dict[str, dict[str, dict[str, float]]] = {name: {} for name in candidates}
    for genre in order:
        train = [f for f in files if genres[f.name] != genre]
        held = [f for f in files if genres[f.name] == genre]
        for name, estimator in candidates.items():
            model = fit_on(estimator, train, columns, readings)
            for f in held:
                out[name][f.name] = judge(model.predict(design([f], columns, readings)), f)
    return {name: {f.name: per_file[f.name] for f in files} for name, per_file in out.items()}


def _mean(values) -> float:
    values = [v for v in values if v is not None and np.isfinite(v)]
    return float(np.mean(values)) if values else float("nan")


def criterion(
    per_file: Mapping[str, Mapping[str, float]], genres: Mapping[str, str] | None = None
) -> tuple[float, float, float]:
    """(mean rho + mean tau, mean rho, mean tau) over held-out datasets; tau counts only
    where it exists. With `genres`, the means are over genres of each genre's mean over its
    files, so that a genre of five datasets weighs what a genre of one does."""
    if genres:
        by: dict[str, list[Mapping[str, float]]] = {}
        for name, r in per_file.items():
            by.setdefault(genres[name], []).append(r)
        rho = _mean(_mean(r["spearman"] for r in rs) for rs in by.values())
        tau = _mean(_mean(r["group_kendall"] for r in rs) for rs in by.values())
    else:
        rho = _mean(r["spearman"] for r in per_file.values())
        tau = _mean(r["group_kendall"] for r in per_file.values())
    return (rho + (tau if np.isfinite(tau) else 0.0), rho, tau)


@dataclass(frozen=True)
class Choice:
    regressor: str
    input_set: str
    table: dict[str, dict[str, dict[str, float]]]  # "regressor [inputs]" -> file -> figures
    means: dict[str, dict[str, float]]  # "regressor [inputs]" -> {"spearman", "group_kendall"}
    held_out: str  # "genres", "datasets" or "K folds of inputs"

    @property
    def label(self) -> str:
        return f"{self.regressor} [{self.input_set}]"


def choose(
    files: Sequence[JudgedFile],
    columns: Sequence[str],
    *,
    regressors: Sequence[str] | None = None,
    input_sets: Sequence[str] = INPUT_SETS,
    folds: int = 5,
    seed: int = 0,
    genres: Mapping[str, str] | None = None,
) -> Choice:
    """The (regressor, inputs) with the best held-out mean rho + mean tau: whole genres held
    out in turn when `genres` (file name -> genre) gives the files two or more, else datasets
    when there are two or more, else `folds` folds of the one dataset's inputs."""
    pool = candidates()
    names = list(regressors or CANDIDATES)
    unknown = [c for c in names if c not in pool]
    if unknown:
        raise InputError(f"unknown regressor(s) {unknown}; choose from {list(CANDIDATES)}")
    units, held_out = list(files), "datasets"
    by_genre = genres is not None and len({genres[f.name] for f in units}) >= 2
    if by_genre:
        held_out = "genres"
    elif len(units) < 2:
        units, held_out = input_folds(units[0], folds, seed=seed), f"{folds} folds of inputs"
    table: dict[str, dict[str, dict[str, float]]] = {}
    for input_set in input_sets:
        readings = inputs_of((), input_set)[1:]
        pool_now = {c: pool[c] for c in names}
        if by_genre:
            held = leave_one_genre_out(units, genres, columns, pool_now, readings)
        else:
            held = leave_one_file_out(units, columns, pool_now, readings)
        table.update({f"{c} [{input_set}]": per_file for c, per_file in held.items()})
    weigh = genres if by_genre else None
    scored = {label: criterion(per_file, weigh) for label, per_file in table.items()}
    best = max(scored, key=lambda label: scored[label][0])
    regressor, input_set = best[:-1].rsplit(" [", 1)
    means = {k: {"spearman": v[1], "group_kendall": v[2]} for k, v in scored.items()}
    return Choice(regressor, input_set, table, means, held_out)


def fit_choice(choice: Choice, files: Sequence[JudgedFile], columns: Sequence[str]):
    """The chosen candidate fitted on every dataset."""
    readings = inputs_of((), choice.input_set)[1:]
    return fit_on(candidates()[choice.regressor], files, columns, readings)
