"""The learned head's third variant, beside the ridges of `training.heads.state_ridge`: the current
head plus a ridge on SmolLM2's states fitted to what it leaves of people's ratings. The GLEU
score keeps its weight and the states add what it misses; a strong ridge gives the current head
back. It is the round `fluency calibrate` runs on a user's ratings
(`training.heads.residual_ridge`), here on the development files.

It reads the states as the scorer gives them under the current head's reading
(`neural_states.v1`, one layer and pooling, each sentence's states folded as that reading folds
it), so it is fitted on files read with the columns only a learned head reads
(`training.heads.files.read_head_files(..., heads=True)`): `--residual-outputs` and
`--residual-words` a file, whole inputs, the judged outputs among them. Held out as the other
variants are (one genre out for the general head, one dataset of the genre out for a genre
head), the current head's inputs refitted without the unit too (`base_head`), every alpha of
`training.heads.residual_ridge.ALPHAS` from one fit."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from training.heads.figures import HeadFile, orient
from training.heads.fitted import with_base
from training.heads.linear import Linear
from training.heads.residual_ridge import ALPHAS, ResidualRidge, _fit, _predict, state_columns
from training.heads.select import fit_head

__all__ = ["RESIDUAL", "base_head", "fit_residual", "held_out_residual"]

RESIDUAL = "residual on the current head"


def base_head(files: Sequence[HeadFile], current: Linear) -> Linear:
    """`current`'s inputs refitted on `files`, as `training.heads.select.held_out` refits a
    head it judges: one input is its sign on them, more a non-negative ridge."""
    if len(current.inputs) == 1:
        sign = orient(files, current.reading, current.inputs[0])
        return Linear(current.label, "head", current.reading, current.inputs, [sign], 0.0)
    fitted = fit_head(files, current.reading, current.inputs)
    return Linear(
        current.label, "head", current.reading, current.inputs, fitted.coef, fitted.intercept
    )


def _units(files: Sequence[HeadFile], by_genre: bool) -> list[set[str]]:
    if not by_genre:
        return [{f.name} for f in files]
    return [{f.name for f in files if f.genre == g} for g in dict.fromkeys(f.genre for f in files)]


def held_out_residual(
    fit_files: Sequence[HeadFile],
    judged: Sequence[HeadFile],
    by_genre: bool,
    current: Linear,
    at: tuple[int, str],
    alphas: Sequence[float] = ALPHAS,
) -> dict[tuple, dict[str, np.ndarray]]:
    """{(layer, pooling, RESIDUAL, alpha): {file: predictions on its `judged` outputs by the
    variant fitted on the `fit_files` of the other units}}: `at` is the (layer, pooling) the
    states extractor reads; `judged` carry the state columns too."""
    columns = state_columns(fit_files[0], current.reading)
    if not columns:
        raise ValueError(f"the files hold no state columns under {current.reading!r}")
    out: dict[tuple, dict[str, np.ndarray]] = {(*at, RESIDUAL, float(a)): {} for a in alphas}
    for unit in _units(judged, by_genre):
        train = [f for f in fit_files if f.name not in unit]
        base = base_head(train, current)
        fit = _fit(with_base(train, base), current.reading, columns, alphas)
        for f in judged:
            if f.name in unit:
                pred = _predict(fit, with_base([f], base)[0], current.reading, columns)
                for k, a in enumerate(alphas):
                    out[(*at, RESIDUAL, float(a))][f.name] = pred[:, k]
    return out


def fit_residual(fit_files: Sequence[HeadFile], current: Linear, alpha: float) -> Linear:
    """The variant fitted on every file at `alpha`: one linear head over the current head's
    inputs (its weights times the fitted slope) and the state columns."""
    columns = state_columns(fit_files[0], current.reading)
    ridge = ResidualRidge(current.reading, current, columns, alpha=alpha)
    return ridge.fit(with_base(fit_files, current), folds=0, seed=0)


def base_section(current: Linear) -> dict:
    """The current head as the residual head's card records it, to be refitted held out the
    same way when the head is judged again (`current_from`)."""
    return {
        "reading": current.reading,
        "inputs": list(current.inputs),
        "coef": [float(c) for c in current.coef],
        "intercept": float(current.intercept),
    }


def current_from(section: Mapping) -> Linear:
    """The head a residual head's card section started from (`base_section`)."""
    base = section["states"]["base"]
    return Linear(
        "current head",
        "head",
        base["reading"],
        tuple(base["inputs"]),
        base["coef"],
        base["intercept"],
    )
