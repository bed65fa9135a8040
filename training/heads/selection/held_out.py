"""The head a judgement file gets from the other files, chosen and fitted without it as
`python -m training.heads` chooses (`training.heads.selection.choose.choose`): `fluency benchmark
--protocol lodo`.

Within a genre (the default) each file is scored by the head chosen on the other files of its
genre, or, in a genre of one file, each fold of its inputs by the head chosen on the other folds
(folds share systems, raters and wording: they overstate what a new dataset sees, and say so).
Across genres each genre is held out whole, the head chosen by genres on the others; across
datasets each file alone, the head chosen on every other. A benchmark file's columns are one
reading, the first model's: its score is the GLEU score, its folded features the candidates.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial

import numpy as np

from features.errors import InputError
from scorer.heads import GLEU_INPUT
from training.heads.data.files import MINUS_LENGTH
from training.heads.data.judged import FOLDS, HeadFile, fold_rows, subset
from training.heads.selection.choose import Choice, choose

__all__ = ["benchmark_file", "benchmark_stage", "lodo_columns"]

AS_SCORED = "as scored"  # the one reading of a benchmark file's columns


def benchmark_file(f, genre: str) -> HeadFile:
    """A benchmark file's columns (`scorer.evidence.benchmark.FileColumns`) as `HeadFile`: the
    first model's score as the GLEU score, its folded features, and minus the length."""
    first = next(iter(f.models))
    columns = {GLEU_INPUT: np.asarray(f.models[first], dtype=float)}
    columns |= {k: np.asarray(v, dtype=float) for k, v in f.features.items()}
    return HeadFile(
        f.name,
        genre,
        np.asarray(f.human, dtype=float),
        [str(g) for g in f.groups],
        {AS_SCORED: columns},
        {MINUS_LENGTH: np.asarray(f.baselines["minus length"], dtype=float)},
        [str(s) for s in f.systems],
    )


def _info(choice: Choice, held_out: str, trained_on: Sequence[str]) -> dict:
    return {
        "held_out": held_out,
        "trained_on": list(trained_on),
        "choice": choice.label + ("" if choice.ships else " (not shipped)"),
        "chosen_by": choice.decision["held_out"],
        "decision": choice.decision["decision"],
    }


def _predict(choice: Choice, file: HeadFile) -> np.ndarray:
    if choice.fitted is None:
        return np.full(len(file.human), np.nan)
    return choice.fitted.predict(file)


def lodo_columns(
    files: Sequence,
    genres: Mapping[str, str],
    *,
    across: str = "within",
    fit_genres: Sequence[str] | None = None,
    folds: int = FOLDS,
    seed: int = 12345,
    n_samples: int = 200,
) -> tuple[dict[str, np.ndarray], dict[str, dict]]:
    """({file: held-out head's scores}, {file: how it was held out, trained on, chosen}).

    `across` "within": each file scored by the head `choose` gives the other files of its genre
    (a genre of one file: each fold of its inputs by the head chosen on the other folds);
    "genres": each genre held out whole, the head chosen by genres on the others (of
    `fit_genres`); "datasets": each file alone, the head chosen on every other (of
    `fit_genres`). A head that does not ship still scores, marked "(not shipped)"."""
    from tqdm import tqdm

    if across not in ("within", "genres", "datasets"):
        raise InputError(f"unknown way to hold out {across!r}; choose within, genres or datasets")
    heads = [benchmark_file(f, genres[f.name]) for f in files]
    pick = partial(choose, readings=[AS_SCORED], folds=folds, seed=seed, n_samples=n_samples)
    scores: dict[str, np.ndarray] = {}
    info: dict[str, dict] = {}
    key = (lambda h: h.genre) if across == "genres" else (lambda h: h.name)
    for left in tqdm(list(dict.fromkeys(map(key, heads))), desc="heads, held out", unit=" unit"):
        held = [h for h in heads if key(h) == left]
        if across == "within":
            train = [h for h in heads if h.genre == held[0].genre and h.name != left]
        else:
            train = [
                h for h in heads if key(h) != left and (fit_genres is None or h.genre in fit_genres)
            ]
        if across == "within" and not train:  # a genre of one file: folds of its own inputs
            (file,) = held
            rows = fold_rows(file.groups, folds, seed=seed)
            parts = [subset(file, r, f"{file.name}#{i + 1}") for i, r in enumerate(rows)]
            pred, chosen = np.full(len(file.human), np.nan), []
            for k, r in enumerate(rows):
                choice = pick([p for i, p in enumerate(parts) if i != k])
                pred[r] = _predict(choice, parts[k])
                chosen.append(choice.label)
            scores[file.name] = pred
            info[file.name] = {
                "held_out": f"{folds} folds of inputs",
                "trained_on": [file.name],
                "choice": chosen,
                "chosen_by": f"{folds - 1} folds of inputs, one out",
            }
            continue
        if not train:
            for h in held:
                scores[h.name] = np.full(len(h.human), np.nan)
                info[h.name] = {"held_out": across, "trained_on": [], "choice": "nothing to fit"}
            continue
        choice = pick(train, by_genre=across != "within")
        unit = "genre" if across == "genres" else "dataset"
        for h in held:
            scores[h.name] = _predict(choice, h)
            info[h.name] = _info(choice, unit, [t.name for t in train])
    return scores, info


def benchmark_stage(
    *,
    across_genres: bool = False,
    across_datasets: bool = False,
    fit_genres: Sequence[str] | None = None,
):
    """The callable `scorer.evidence.benchmark_run.run_benchmark(second_stage=...)` takes:
    `lodo_columns` held out within genres, or across genres, or across datasets."""
    across = "genres" if across_genres else "datasets" if across_datasets else "within"
    return partial(lodo_columns, across=across, fit_genres=fit_genres)
