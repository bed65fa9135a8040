"""A head as a bundle's card holds one, for calibration: under one reading of a text, each input
clipped to a range, then weighted and summed with an intercept. Every candidate `fluency
calibrate` judges is one: a shipped head, a named reading (minus the length, a summed
log-probability, the GLEU score under a reading) or a fitted one, so each is scored, checked on
shuffled sentences and written into a card the same way."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import numpy as np

from scorer.calibration import GLEU_INPUT
from scorer.calibration import READINGS as READING_COLUMNS
from training.heads.data.judged import HeadFile

__all__ = ["Linear"]


@dataclass(frozen=True)
class Linear:
    """A head as a card holds one: under `reading`, each input clipped to [low, high], then
    weighted and summed with the intercept."""

    label: str
    kind: str  # "head", "reading", "column", "addition" or "residual ridge"
    reading: str
    inputs: tuple[str, ...]
    coef: np.ndarray
    intercept: float
    low: np.ndarray = field(default=None)  # -inf: open
    high: np.ndarray = field(default=None)

    def __post_init__(self):
        n = len(self.inputs)
        object.__setattr__(self, "coef", np.asarray(self.coef, dtype=float))
        for side, fill in (("low", -np.inf), ("high", np.inf)):
            v = getattr(self, side)
            object.__setattr__(self, side, np.full(n, fill) if v is None else np.asarray(v, float))

    @classmethod
    def from_section(cls, label: str, section: Mapping) -> Linear | None:
        """The head a card section describes (None for a pickled head: not linear)."""
        linear = section.get("linear")
        if not linear:
            return None
        clip = section.get("clip") or {}
        n = len(section["inputs"])

        def side(values, fill):
            values = values or [None] * n
            return [fill if v is None else float(v) for v in values]

        return cls(
            label,
            "head",
            str(section.get("aggregate") or "whole"),
            tuple(section["inputs"]),
            linear["coef"],
            float(linear["intercept"]),
            side(clip.get("low"), -np.inf),
            side(clip.get("high"), np.inf),
        )

    def predict(self, columns: Mapping[str, Mapping[str, np.ndarray]]) -> np.ndarray:
        X = np.column_stack([columns[self.reading][c] for c in self.inputs])
        return np.clip(X, self.low, self.high) @ self.coef + self.intercept

    def reads(self, file: HeadFile) -> bool:
        cols = file.columns.get(self.reading, {})
        return all(c in cols for c in self.inputs)

    def scaled(self, a: float, b: float) -> Linear:
        return replace(self, coef=a * self.coef, intercept=a * self.intercept + b)

    def weights(self) -> str:
        """The non-zero weights, a learned head's state columns counted as one group."""
        from scorer.contributions import group_of

        terms, groups = [], {}
        for c, w in zip(self.inputs, self.coef, strict=True):
            label = group_of(c)
            if label is not None and w:
                groups[label] = groups.get(label, 0) + 1
            elif w:
                terms.append(f"{w:+.4g} {c}")
        terms += [f"{g} ({n} weights)" for g, n in groups.items()]
        return f"{' '.join(terms) or '0'} {self.intercept:+.4g}, read {self.reading}"

    def section(self, genre: str, **extra) -> dict:
        """A card section (`scorer.calibration.load_head_section` reads it): the GLEU score
        first, the readings' columns last."""
        first = [GLEU_INPUT]
        rest = [c for c in self.inputs if c != GLEU_INPUT and c not in READING_COLUMNS]
        last = [c for c in self.inputs if c in READING_COLUMNS]
        order = first + rest + last
        at = {c: k for k, c in enumerate(self.inputs)}

        def pick(values, open_):
            return [
                None if c not in at or values[at[c]] == open_ else float(values[at[c]])
                for c in order
            ]

        coef = [float(self.coef[at[c]]) if c in at else 0.0 for c in order]
        return {
            "genre": genre,
            "aggregate": self.reading,
            "inputs": order,
            "linear": {"coef": coef, "intercept": float(self.intercept)},
            "clip": {"low": pick(self.low, -np.inf), "high": pick(self.high, np.inf)},
            **extra,
        }
