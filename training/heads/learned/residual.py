"""The learned head's third variant, beside the ridges of `training.heads.learned.ridge`: the
current head plus a ridge on SmolLM2's states fitted to what it leaves of people's ratings. The GLEU
score keeps its weight and the states add what it misses; a strong ridge gives the current head
back. It is the round `fluency calibrate` runs on a user's ratings
(`training.heads.estimators.residual_ridge`), here on the development files.

It reads the states as the scorer gives them under the current head's reading
(`neural_states.v1`, one layer and pooling, each sentence's states folded as that reading folds
it), so it is fitted on files read with the columns only a learned head reads
(`training.heads.data.files.read_head_files(..., heads=True)`): `--residual-outputs` and
`--residual-words` a file, whole inputs, the judged outputs among them. Held out as the other
variants are (one genre out for the general head, one dataset of the genre out for a genre
head), the current head's inputs refitted without the unit too (`base_head`), every alpha of
`training.heads.estimators.residual_ridge.ALPHAS` from one fit."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from scorer.heads import Head
from training.heads.data.judged import HeadFile
from training.heads.estimators.fitted import with_base
from training.heads.estimators.kinds import held_out
from training.heads.estimators.residual_ridge import (
    ALPHAS,
    ResidualRidge,
    fit_rest,
    predict_rest,
    state_columns,
)
from training.heads.estimators.select import LinearKind

__all__ = [
    "RESIDUAL",
    "ResidualKind",
    "base_head",
    "current_from",
    "fit_residual",
    "held_out_residual",
]

RESIDUAL = "residual on the current head"


def base_head(files: Sequence[HeadFile], current: Head) -> Head:
    """`current`'s inputs refitted on `files`, as `training.heads.estimators.select.held_out` refits
    a head it judges: one input is its sign on them, more a non-negative ridge."""
    kind = LinearKind(current.reading, current.inputs).fit(files)
    if kind.head_ is None:
        return Head(current.inputs, [kind.sign_], 0.0, current.reading, label=current.label)
    head = kind.head_
    return Head(current.inputs, head.coef, head.intercept, current.reading, label=current.label)


class ResidualKind:
    """A kind of candidate (`training.heads.estimators.kinds`): the `current` head refitted on the
    fit files (`base_head`), on the ratings' scale, plus a ridge on the state `columns` fitted to
    what it leaves, every alpha from one fit; predicts one column an alpha."""

    def __init__(self, current: Head, columns: Sequence[str], alphas: Sequence[float] = ALPHAS):
        self.current, self.columns, self.alphas = current, tuple(columns), alphas

    def fit(self, files: Sequence[HeadFile]) -> ResidualKind:
        self.base_ = base_head(files, self.current)
        reading = self.current.reading
        self.fit_ = fit_rest(with_base(files, self.base_), reading, self.columns, self.alphas)
        return self

    def predict(self, file: HeadFile) -> np.ndarray:
        based = with_base([file], self.base_)[0]
        return predict_rest(self.fit_, based, self.current.reading, self.columns)


def held_out_residual(
    fit_files: Sequence[HeadFile],
    judged: Sequence[HeadFile],
    by_genre: bool,
    current: Head,
    at: tuple[int, str],
    alphas: Sequence[float] = ALPHAS,
) -> dict[tuple, dict[str, np.ndarray]]:
    """{(layer, pooling, RESIDUAL, alpha): {file: predictions on its `judged` outputs by the
    variant fitted on the `fit_files` of the other units}}: `at` is the (layer, pooling) the
    states extractor reads; `judged` carry the state columns too."""
    columns = state_columns(fit_files[0], current.reading)
    if not columns:
        raise ValueError(f"the files hold no state columns under {current.reading!r}")
    kind = ResidualKind(current, columns, alphas)
    found = held_out(kind, judged, by_genre, fit_files=fit_files)
    return {
        (*at, RESIDUAL, float(a)): {name: p[:, k] for name, p in found.items()}
        for k, a in enumerate(alphas)
    }


def fit_residual(fit_files: Sequence[HeadFile], current: Head, alpha: float) -> Head:
    """The variant fitted on every file at `alpha`: one linear head over the current head's
    inputs (its weights times the fitted slope) and the state columns."""
    columns = state_columns(fit_files[0], current.reading)
    ridge = ResidualRidge(current.reading, current, columns, alpha=alpha)
    return ridge.fit(with_base(fit_files, current), folds=0, seed=0)


def current_from(head: Head) -> Head:
    """The head a residual head (`head`, read from its card) started from (`Head.base`)."""
    return replace(head.base, label="current head")
