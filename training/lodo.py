"""Leave one dataset out within its genre: the second stage a user of that genre would get, judged
on a dataset it never saw (`fluency benchmark --protocol lodo`).

For each file, the second stage is chosen and fitted exactly as `fluency calibrate` would choose
and fit it on the other files of the file's genre (`training.second_stage.choose`: by their own
held-out datasets when there are two or more, else by folds of the one file's inputs), then
scores the file left out. A genre of one file cannot be measured this way: its file is cut into
folds of whole inputs, each scored by a stage chosen and fitted on the other folds, and marked
"folds", which overstate what a new dataset would see.

Across genres (`--across-genres`): what a general model meets is a genre it never saw. Each
genre is held out whole: the second stage is chosen and fitted on the files of every other genre
(or of `fit_genres` only), its choice by leaving one of those genres out in turn, then scores
every file of the genre left out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial

import numpy as np
from tqdm import tqdm

from training.second_stage import (
    INPUT_SETS,
    JudgedFile,
    choose,
    design,
    fit_choice,
    input_fold_index,
    inputs_of,
)

__all__ = ["judged_columns", "lodo_columns", "logo_columns", "second_stage"]


def judged_columns(f) -> JudgedFile:
    """A benchmark file's columns (`scorer.evidence.benchmark.FileColumns`) as the second
    stage reads them: the first model's score as GLEU, its folded features, the readings."""
    first = next(iter(f.models))
    keys = list(f.features)
    table = np.column_stack([f.features[k] for k in keys]) if keys else np.zeros((len(f.human), 0))
    rows = [dict(zip(keys, r, strict=True)) for r in table.tolist()]
    return JudgedFile(
        name=f.name,
        texts=[""] * len(f.human),
        groups=[str(g) for g in f.groups],
        human=np.asarray(f.human, dtype=float),
        gleu=np.asarray(f.models[first], dtype=float),
        features=rows,
        n_left_out=0,
        readings=dict(f.readings),
    )


def _predict(choice, train, held, columns) -> np.ndarray:
    model = fit_choice(choice, train, columns)
    return model.predict(design([held], columns, inputs_of((), choice.input_set)[1:]))


def lodo_columns(
    files: Sequence,
    genres: Mapping[str, str],
    *,
    regressors: Sequence[str] | None = None,
    input_sets: Sequence[str] = INPUT_SETS,
    folds: int = 5,
    seed: int = 0,
) -> tuple[dict[str, np.ndarray], dict[str, dict]]:
    """({file: second-stage scores}, {file: how it was held out, trained on, chosen})."""
    judged = {f.name: judged_columns(f) for f in files}
    columns = list(next(iter(judged.values())).features[0]) if judged else []
    scores: dict[str, np.ndarray] = {}
    info: dict[str, dict] = {}
    pick = partial(choose, regressors=regressors, input_sets=input_sets, folds=folds, seed=seed)
    for name, held in tqdm(judged.items(), desc="second stage, held out", unit=" file"):
        same = [j for n, j in judged.items() if n != name and genres[n] == genres[name]]
        if same:
            choice = pick(same, columns)
            scores[name] = _predict(choice, same, held, columns)
            info[name] = {
                "held_out": "dataset",
                "trained_on": [j.name for j in same],
                "choice": choice.label,
                "chosen_by": choice.held_out,
            }
            continue
        fold = input_fold_index(held.groups, folds, seed=seed)
        pred = np.empty(len(held.human))
        chosen = []
        parts = [held.subset(np.flatnonzero(fold == i), f"{name}#{i + 1}") for i in range(folds)]
        for k in range(folds):
            train = [p for i, p in enumerate(parts) if i != k]
            choice = pick(train, columns)
            chosen.append(choice.label)
            pred[fold == k] = _predict(choice, train, parts[k], columns)
        scores[name] = pred
        info[name] = {
            "held_out": f"{folds} folds of inputs",
            "trained_on": [name],
            "choice": chosen,
            "chosen_by": f"{folds - 1} folds of inputs",
        }
    return scores, info


def logo_columns(
    files: Sequence,
    genres: Mapping[str, str],
    *,
    regressors: Sequence[str] | None = None,
    input_sets: Sequence[str] = INPUT_SETS,
    fit_genres: Sequence[str] | None = None,
    unit: str = "genre",
    folds: int = 5,
    seed: int = 0,
) -> tuple[dict[str, np.ndarray], dict[str, dict]]:
    """({file: second-stage scores}, {file: how it was held out, trained on, chosen}), every
    genre held out whole in turn (module doc); with `unit` "dataset", every file alone, the
    stage fitted on all the others of `fit_genres` (what the shipped general stage's recipe
    gives a new dataset of a genre it was fitted on). A held-out fit with nothing to train on
    (every other genre outside `fit_genres`) gives no scores: NaN, marked."""
    judged = {f.name: judged_columns(f) for f in files}
    columns = list(next(iter(judged.values())).features[0]) if judged else []
    scores: dict[str, np.ndarray] = {}
    info: dict[str, dict] = {}
    pick = partial(choose, regressors=regressors, input_sets=input_sets, folds=folds, seed=seed)
    key = (lambda n: genres[n]) if unit == "genre" else (lambda n: n)
    order = list(dict.fromkeys(key(n) for n in judged))
    for left in tqdm(order, desc=f"second stage, {unit} held out", unit=f" {unit}"):
        held = [j for n, j in judged.items() if key(n) == left]
        train = [
            j
            for n, j in judged.items()
            if key(n) != left and (fit_genres is None or genres[n] in fit_genres)
        ]
        if not train:
            for j in held:
                scores[j.name] = np.full(len(j.human), np.nan)
                info[j.name] = {"held_out": unit, "trained_on": [], "choice": "nothing to fit"}
            continue
        choice = pick(train, columns, genres=genres)
        model = fit_choice(choice, train, columns)
        readings = inputs_of((), choice.input_set)[1:]
        for j in held:
            scores[j.name] = model.predict(design([j], columns, readings))
            info[j.name] = {
                "held_out": unit,
                "trained_on": [t.name for t in train],
                "choice": choice.label,
                "chosen_by": choice.held_out,
            }
    return scores, info


def second_stage(
    regressors: Sequence[str] | None = None,
    input_sets: Sequence[str] = INPUT_SETS,
    *,
    across_genres: bool = False,
    fit_genres: Sequence[str] | None = None,
    across_datasets: bool = False,
):
    """The callable `scorer.evidence.benchmark_run.run_benchmark(second_stage=...)` takes:
    datasets held out within their genre, or (`across_genres`) whole genres, or
    (`across_datasets`) each dataset alone, fitted on every other one of `fit_genres`."""
    if across_genres or across_datasets:
        return partial(
            logo_columns,
            regressors=regressors,
            input_sets=input_sets,
            fit_genres=fit_genres,
            unit="genre" if across_genres else "dataset",
        )
    return partial(lodo_columns, regressors=regressors, input_sets=input_sets)
