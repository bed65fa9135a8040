"""Which features moved a score, and by how much: the model's own arithmetic, read back.

The shipped model is linear after scaling: score = b + sum_i w_i * (x_i - mean_i) / scale_i
(`RankSVM`, or an `SVC` with a linear kernel). Each term is feature i's contribution, and with
the intercept b (the score of a text whose every feature sits at the training mean) they add
up to the score exactly: a feature below its mean with a positive weight pulls the score down.

A non-linear model (an RBF `SVC`, `RankSVM(kernel="rbf")`) has no such decomposition. There the
contribution of feature i is an occlusion estimate, f(z) - f(z with z_i = 0): how much the score
changes when that feature alone is put back to its training mean. The terms need not add up;
`residual` says by how much they miss, and `method` says which reading was used.

A bundle whose head (second stage) is linear (`scorer.heads.Head`: fluency = c0 +
c_gleu * gleu + sum_j c_j * x_j + sum_r c_r * reading_r) is read back the same way, onto the
fluency it serves (`calibrated`): each feature's share is c_gleu times its share of the GLEU
score plus c_j * (x_j - mean_j), x_j as the stage reads it (within the range it was fitted on),
and each reading a text adds (its length, its LM sum, ...) is one more term, taken from 0. A
non-linear second stage is not decomposed: its bundles explain the GLEU score.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from scorer.gleu_stage import PipelineGleuStage, linear_weights

__all__ = [
    "Contribution",
    "Contributions",
    "calibrated",
    "contributions",
    "group_of",
    "linear_weights",
    "summed",
]


@dataclass(frozen=True)
class Contribution:
    feature: str  # "<extractor>/<name>"
    value: float  # this text's value
    typical: float  # the training mean (real and generated texts alike)
    contribution: float  # signed: what this feature adds to the score


@dataclass(frozen=True)
class Contributions:
    method: str  # "linear" (exact) or "occlusion" (an approximation)
    exact: bool  # True: intercept + sum of contributions == score
    intercept: float  # score of a text at the training mean (every z_i = 0)
    features: list[Contribution]  # every feature, largest |contribution| first
    residual: float  # score - intercept - sum of contributions (0 for a linear model)
    # A linear second stage's score in its parts (`calibrated`): its intercept, the GLEU score
    # times its weight, each of `GROUPS` and the other inputs it reads; they add up to the score.
    parts: dict[str, float] | None = None

    def top(self, n: int) -> tuple[list[Contribution], float]:
        """The `n` largest contributions and the sum of the others."""
        return self.features[:n], float(sum(c.contribution for c in self.features[n:]))


def contributions(model, rows: Sequence[Mapping[str, float]]) -> list[Contributions]:
    """Contributions for feature rows (as `features.extract` yields them). `model` is a
    bundle's GLEU stage as the scorer holds it (`FluencyScorer.gleu_svm`: a `LinearGleuStage`,
    or a `PipelineGleuStage` over a fitted pipeline), or a fitted pipeline itself."""
    if not rows:
        return []
    if not hasattr(model, "standardize"):
        model = PipelineGleuStage(model)
    names = list(model.columns)
    X = model.vectorize(rows)
    Z = model.standardize(X)
    mean = np.asarray(model.mean, dtype=float)
    scores = np.asarray(model.raw(Z), dtype=float).ravel()
    linear = model.linear
    if linear is not None:
        w, b = linear
        terms = Z * w
        intercept = np.full(len(Z), b)
        method = "linear"
    else:
        terms = np.empty_like(Z)
        for i in range(Z.shape[1]):
            put_back = Z.copy()
            put_back[:, i] = 0.0
            terms[:, i] = scores - np.asarray(model.raw(put_back)).ravel()
        intercept = np.full(len(Z), float(np.ravel(model.raw(np.zeros((1, len(names)))))[0]))
        method = "occlusion"
    out = []
    for k in range(len(Z)):
        order = np.argsort(-np.abs(terms[k]), kind="stable")
        items = [
            Contribution(names[i], float(X[k, i]), float(mean[i]), float(terms[k, i]))
            for i in order
        ]
        residual = float(scores[k] - intercept[k] - terms[k].sum())
        out.append(Contributions(method, linear is not None, float(intercept[k]), items, residual))
    return out


def calibrated(
    gleu_parts: Sequence[Contributions],
    head,
    rows: Sequence[Mapping[str, float]],
    readings: Mapping[str, Sequence[float]] | None = None,
) -> list[Contributions] | None:
    """The contributions of the fluency a linear second stage serves (module doc), from those of
    the GLEU score (`contributions`) and the same texts' feature rows and readings; None when
    the stage is not linear (nothing exact to give)."""
    coef = getattr(head, "coef", None)
    if coef is None:
        return None
    weights = dict(zip(head.inputs, np.asarray(coef, dtype=float).tolist(), strict=True))
    c_gleu = weights.pop("gleu")
    n = len(head.inputs)
    low, high = head.clip or (np.full(n, -np.inf), np.full(n, np.inf))
    edge = {k: (lo, hi) for k, lo, hi in zip(head.inputs, low, high, strict=True)}

    def read(name: str, value: float) -> float:  # as the stage reads it: within its range
        return float(np.clip(value, *edge[name]))

    c0 = float(head.intercept)
    out = []
    for k, part in enumerate(gleu_parts):
        items = []
        intercept = c0 + c_gleu * part.intercept
        gleu = part.intercept + sum(c.contribution for c in part.features) + part.residual
        parts = {"intercept": c0, "GLEU score": c_gleu * gleu}
        for c in part.features:
            share = c_gleu * c.contribution
            if c.feature in weights:  # a feature the second stage also reads directly
                w = weights[c.feature]
                share += w * (read(c.feature, c.value) - c.typical)
                intercept += w * c.typical
                if w:
                    _add(parts, c.feature, w * read(c.feature, c.value))
            items.append(Contribution(c.feature, c.value, c.typical, share))
        seen = {c.feature for c in part.features}
        for name, w in weights.items():
            if name in seen or w == 0:  # a head's input it gives no weight adds nothing
                continue
            source = readings if name.startswith("reading/") else None
            value = float(source[name][k]) if source is not None else float(rows[k][name])
            items.append(Contribution(name, value, 0.0, w * read(name, value)))
            _add(parts, name, w * read(name, value))
        items = _grouped(items)
        items.sort(key=lambda c: -abs(c.contribution))
        residual = c_gleu * part.residual
        out.append(Contributions(part.method, part.exact, intercept, items, residual, parts))
    return out


def _add(parts: dict[str, float], column: str, value: float) -> None:
    """`value` into the part a head's direct input counts under: its group, its own part
    (`PARTS`), or "other inputs"."""
    label = group_of(column) or PARTS.get(column) or "other inputs"
    parts[label] = parts.get(label, 0.0) + value


# Columns a head reads by the hundred, each meaningless alone, named as one contribution: the
# learned head's share (training/heads/learned/ridge.py), its value the share itself.
GROUPS = {"neural_states.v1/": "SmolLM2 states"}


# Inputs counted as a part of their own: what the text says again (a fixed negative weight).
PARTS = {"reading/said_again": "said again"}


def group_of(column: str) -> str | None:
    """The `GROUPS` label a column is counted under, or None."""
    return next((label for prefix, label in GROUPS.items() if column.startswith(prefix)), None)


def _grouped(items: Sequence[Contribution]) -> list[Contribution]:
    """`items` with the columns of each of `GROUPS` added up into one contribution."""
    out, sums = [], {}
    for c in items:
        label = group_of(c.feature)
        if label is None:
            out.append(c)
        else:
            sums[label] = sums.get(label, 0.0) + c.contribution
    return out + [Contribution(label, total, 0.0, total) for label, total in sums.items()]


def summed(parts: Sequence[Contributions], index: Sequence[Sequence[int]]) -> list[Contributions]:
    """Per text, the contributions of its sentences (`index`: positions in `parts`) added up:
    the "sum" reading scores a text by its sentences' scores added up, so each sentence's
    intercept counts once, which the contributions of its summed feature row would not."""
    out = []
    for positions in index:
        mine = [parts[i] for i in positions]
        by: dict[str, list[float]] = {}
        for part in mine:
            for c in part.features:
                acc = by.setdefault(c.feature, [0.0, 0.0, 0.0])
                acc[0] += c.value
                acc[1] += c.typical
                acc[2] += c.contribution
        items = [Contribution(f, v, t, x) for f, (v, t, x) in by.items()]
        items.sort(key=lambda c: -abs(c.contribution))
        out.append(
            Contributions(
                mine[0].method,
                all(p.exact for p in mine),
                float(sum(p.intercept for p in mine)),
                items,
                float(sum(p.residual for p in mine)),
            )
        )
    return out
