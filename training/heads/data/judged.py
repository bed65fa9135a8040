"""A judged file as heads read it (`HeadFile`: human scores, inputs, columns per reading) and
its cuts: a subset of its outputs (`subset`) and folds of whole inputs (`fold_rows`,
`input_folds`), each held out as a dataset would be."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from features.errors import InputError
from scorer.evidence.ranks import spearman

__all__ = ["FOLDS", "HeadFile", "fold_rows", "input_folds", "subset"]

FOLDS = 5


def subset(file: HeadFile, rows: Sequence[int], name: str | None = None) -> HeadFile:
    """The outputs `rows` of `file`, with their columns and baselines."""
    rows = np.asarray(rows, dtype=int)
    return HeadFile(
        name or file.name,
        file.genre,
        file.human[rows],
        [file.groups[i] for i in rows],
        {r: {c: v[rows] for c, v in cols.items()} for r, cols in file.columns.items()},
        {b: v[rows] for b, v in file.baselines.items()},
        [file.systems[i] for i in rows] if file.systems else [],
    )


def fold_rows(groups: Sequence[str], k: int, *, seed: int = 0) -> list[np.ndarray]:
    """The rows of each of `k` folds of whole inputs (scikit-learn's `GroupKFold`, shuffled
    with `seed`: folds of about as many outputs each)."""
    from sklearn.model_selection import GroupKFold

    if k < 2:
        raise InputError(f"folds must be at least 2, got {k}")
    n_inputs = len(set(groups))
    if n_inputs < k:
        raise InputError(
            f"{n_inputs} input(s), fewer than {k} folds: name the inputs (--group-column), ask "
            "for fewer folds (--folds), or rate more inputs"
        )
    split = GroupKFold(k, shuffle=True, random_state=seed).split(groups, groups=list(groups))
    return [np.sort(rows) for _, rows in split]


def input_folds(file: HeadFile, k: int = FOLDS, *, seed: int = 0) -> list[HeadFile]:
    """`file` cut into `k` folds of whole inputs named NAME#1..NAME#k, each held out as a
    dataset would be."""
    rows = fold_rows(file.groups, k, seed=seed)
    return [subset(file, r, f"{file.name}#{i + 1}") for i, r in enumerate(rows)]


@dataclass
class HeadFile:
    """One judged dataset: its genre, outputs' human scores and groups, and per reading the
    candidate inputs as columns."""

    name: str
    genre: str
    human: np.ndarray
    groups: list[str]
    columns: dict[str, dict[str, np.ndarray]]  # reading -> input -> values
    baselines: dict[str, np.ndarray] = field(default_factory=dict)  # "minus length", ...
    systems: list[str] = field(default_factory=list)  # each output's system ("" unnamed)
    texts: list[str] = field(default_factory=list)  # the outputs, where they were read
    _pairs: tuple | None = None
    _alone: dict = field(default_factory=dict)

    def alone(self, reading: str, name: str) -> float:
        """Spearman's rho of one input with people on this file (kept: signs ask often)."""
        key = (reading, name)
        if key not in self._alone:
            self._alone[key] = spearman(self.columns[reading][name], self.human)
        return self._alone[key]

    @property
    def target(self) -> np.ndarray:
        sd = float(np.std(self.human))
        return (self.human - self.human.mean()) / (sd if sd > 0 else 1.0)

    def pairs(self):
        """Every pair of outputs of one input: (i, j, pair's group number, human sign)."""
        if self._pairs is None:
            ids = {g: k for k, g in enumerate(dict.fromkeys(self.groups))}
            gid = np.array([ids[g] for g in self.groups])
            order = np.argsort(gid, kind="stable")
            bounds = np.flatnonzero(np.diff(gid[order])) + 1
            i_all, j_all, g_all = [], [], []
            for members in np.split(order, bounds):
                if len(members) < 2:
                    continue
                a, b = np.triu_indices(len(members), 1)
                i_all.append(members[a])
                j_all.append(members[b])
                g_all.append(np.full(len(a), gid[members[0]]))
            if i_all:
                i, j, g = (np.concatenate(x) for x in (i_all, j_all, g_all))
            else:
                i = j = g = np.zeros(0, dtype=int)
            self._pairs = (i, j, g, np.sign(self.human[i] - self.human[j]), len(ids))
        return self._pairs
