"""Kinds of candidate head, and the one loop that holds any of them out.

A kind is a small class with `fit(files)` (returns itself, fitted) and `predict(file)` (one
value an output, or one column a setting where a kind fits several at once: every alpha of a
ridge from one fit). `held_out` fits a copy of it on the files of the other units (datasets, or
with `by_genre` whole genres) and predicts each unit's files; it never asks which kind it holds.
The kinds:

- a few inputs under one reading, combined linearly (`training.heads.estimators.select.LinearKind`);
- a ridge on SmolLM2's states (`training.heads.learned.ridge.StateRidgeKind`);
- a starting head plus a ridge on the state columns fitted to what it leaves
  (`training.heads.learned.residual.ResidualKind`).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Protocol

import numpy as np

__all__ = ["Kind", "held_out", "units"]


class Kind(Protocol):
    def fit(self, files: Sequence) -> Kind: ...

    def predict(self, file) -> np.ndarray: ...


def units(files: Sequence, by_genre: bool) -> list[set[str]]:
    """The names of the files held out together: each file alone, or with `by_genre` each
    genre's files (genres in the order they first come)."""
    if not by_genre:
        return [{f.name} for f in files]
    return [{f.name for f in files if f.genre == g} for g in dict.fromkeys(f.genre for f in files)]


def held_out(
    kind: Kind, files: Sequence, by_genre: bool, *, fit_files: Sequence | None = None
) -> dict[str, np.ndarray]:
    """{file: `kind`'s predictions on it, fitted without the file's unit}: on the `fit_files`
    of the other units where they are given (more outputs than are judged), else on `files`."""
    pool = files if fit_files is None else fit_files
    out = {}
    for unit in units(files, by_genre):
        head = copy.copy(kind).fit([f for f in pool if f.name not in unit])
        out.update({f.name: head.predict(f) for f in files if f.name in unit})
    return out
