"""Candidates fitted on a user's ratings, for `fluency calibrate` (`training.calibration.start`): a
single feature column (its sign taken on the training folds), columns added to the head in hand (a
non-negative ridge over the head's score and the columns,
`training.heads.estimators.select.fit_head`), and a named reading mapped to the ratings' scale; each
judged on folds of whole inputs, every output scored by a fit that did not see its input."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from scorer.evidence.ranks import spearman
from scorer.heads import Head
from training.heads.data.judged import HeadFile, fold_rows, subset
from training.heads.estimators.select import fit_head
from training.heads.metrics.figures import unit_weights

__all__ = [
    "BASE",
    "Plan",
    "cross_validated",
    "fold_of",
    "fold_parts",
    "on_their_scale",
    "with_base",
]

BASE = "head in hand"  # the column a fitted addition reads the head it adds to from


def _pooled(files: Sequence[HeadFile], values: Mapping[str, np.ndarray]):
    x = np.concatenate([values[f.name] for f in files])
    y = np.concatenate([f.target for f in files])
    return x, y, unit_weights(files)


def on_their_scale(head: Head, files: Sequence[HeadFile], spread: float) -> Head:
    """`head` mapped to the user's ratings (z-normalised within each dataset) by a positive
    slope and an intercept; where no positive slope fits, scaled to `spread` (the starting
    head's standard deviation over the user's outputs) around 0."""
    from sklearn.linear_model import LinearRegression

    x, y, w = _pooled(files, {f.name: head.predict(f.columns) for f in files})
    fit = LinearRegression(positive=True).fit(x[:, None], y, sample_weight=w)
    a = float(fit.coef_[0])
    if a <= 0:
        sd = float(np.sqrt(np.average((x - np.average(x, weights=w)) ** 2, weights=w)))
        a = spread / sd if sd > 0 else 1.0
        return head.scaled(a, -a * float(np.average(x, weights=w)))
    return head.scaled(a, float(fit.intercept_))


def with_base(files: Sequence[HeadFile], base: Head) -> list[HeadFile]:
    """Copies of `files` whose columns under `base`'s reading hold its values as `BASE`."""
    out = []
    for f in files:
        cols = {r: dict(c) for r, c in f.columns.items()}
        cols[base.reading][BASE] = base.predict(f.columns)
        out.append(HeadFile(f.name, f.genre, f.human, f.groups, cols, f.baselines, f.systems))
    return out


@dataclass(frozen=True)
class Plan:
    """A fitted candidate: `extra` columns under `reading`, on top of `base` (or alone)."""

    reading: str
    base: Head | None
    extra: tuple[str, ...]

    @property
    def label(self) -> str:
        if self.base is None:
            return f"{' + '.join(self.extra)} ({self.reading})"
        return f"{self.base.label} + {' + '.join(self.extra)}"

    @property
    def inputs(self) -> tuple[str, ...]:
        return self.extra if self.base is None else (BASE, *self.extra)

    def fit(self, files: Sequence[HeadFile]) -> Head:
        """Fitted on every file: a `Head` over the base's inputs and the added columns."""
        fitted = fit_head(files, self.reading, self.inputs)
        coef = dict(zip(self.inputs, fitted.coef, strict=True))
        ranges = {
            c: np.concatenate([f.columns[self.reading][c] for f in files]) for c in self.extra
        }
        # Each added column capped on the side where it raises the score, at the edge of the
        # range it took in the fit (as `training.heads.tier.section` caps a shipped head's inputs).
        low = [ranges[c].min() if coef[c] < 0 else -np.inf for c in self.extra]
        high = [ranges[c].max() if coef[c] > 0 else np.inf for c in self.extra]
        w = [coef[c] for c in self.extra]
        if self.base is None:
            kind = "column" if len(self.extra) == 1 else "addition"
            return Head(
                self.extra,
                w,
                fitted.intercept,
                self.reading,
                (low, high),
                label=self.label,
                kind=kind,
            )
        a = coef[BASE]
        b = self.base
        return Head(
            (*b.inputs, *self.extra),
            [*(a * b.coef), *w],
            a * b.intercept + fitted.intercept,
            self.reading,
            ([*b.low, *low], [*b.high, *high]),
            label=self.label,
            kind="addition",
        )


def fold_of(files: Sequence[HeadFile], k: int, seed: int) -> dict[str, np.ndarray] | None:
    """{file: each output's fold}: folds of whole inputs within each file (fold i of every file
    held out together), or None where a file has fewer than two inputs."""
    out = {}
    for f in files:
        n_inputs = len(set(f.groups))
        if n_inputs < 2:
            return None
        fold = np.empty(len(f.human), dtype=int)
        for i, rows in enumerate(fold_rows(f.groups, min(k, n_inputs), seed=seed)):
            fold[rows] = i
        out[f.name] = fold
    return out


def fold_parts(
    files: Sequence[HeadFile], folds: int, seed: int
) -> list[tuple[list[HeadFile], dict[str, np.ndarray]]] | None:
    """For each fold of whole inputs (`fold_of`): (the training part, files of more than one
    output; {file: the rows held out}); None where a file has fewer than two inputs."""
    fold = fold_of(files, folds, seed)
    if fold is None:
        return None
    out = []
    for k in range(max(v.max() for v in fold.values()) + 1):
        train = [subset(f, np.flatnonzero(fold[f.name] != k)) for f in files]
        held = {f.name: np.flatnonzero(fold[f.name] == k) for f in files}
        out.append(([t for t in train if len(t.human) > 1], held))
    return out


def cross_validated(
    plans: Sequence[Plan], files: Sequence[HeadFile], folds: int, seed: int
) -> dict[str, dict[str, np.ndarray]]:
    """{plan label: {file: each output scored by the plan fitted without its fold}}; a single
    column alone needs no fit beyond its sign, taken on the training folds."""
    parts = fold_parts(files, folds, seed)
    if parts is None:
        return {}
    out = {p.label: {f.name: np.zeros(len(f.human)) for f in files} for p in plans}
    for train, test in parts:
        for p in plans:
            if p.base is None and len(p.extra) == 1:
                c = p.extra[0]
                rhos = [spearman(t.columns[p.reading][c], t.human) for t in train]
                sign = -1.0 if np.nanmean(np.nan_to_num(rhos)) < 0 else 1.0
                for f in files:
                    out[p.label][f.name][test[f.name]] = (
                        sign * f.columns[p.reading][c][test[f.name]]
                    )
                continue
            fitted = fit_head(train, p.reading, p.inputs)
            for f in files:
                rows = test[f.name]
                X = np.column_stack([f.columns[p.reading][c][rows] for c in p.inputs])
                out[p.label][f.name][rows] = X @ fitted.coef + fitted.intercept
    return out
