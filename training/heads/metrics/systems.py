"""Held-out heads judged as people compare systems: each system's mean score against its mean
human score (`scorer.evidence.system_level`), on the files of six or more generators, with means
over files (a general head: over genres of their files' means, as its segment-level figures).

The general head is what `fluency compare` compares systems with, so it is also gated here: a
fitted head whose held-out system-level accuracy is below its best single input's with a paired
interval below zero ships that input instead (`training.heads.selection.ship_rule.pick`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from scorer.evidence.genres import NOT_SYSTEMS
from scorer.evidence.system_level import SystemDraws, percentile_interval, skip_reason
from training.heads.data.judged import HeadFile
from training.heads.metrics.figures import means

__all__ = ["SystemFigures", "SystemView", "system_view"]


@dataclass(frozen=True)
class SystemFigures:
    """One column's held-out system-level figures: per file (accuracy, rho), their means, and
    95% intervals of the means (NaN when not asked for)."""

    per_file: dict[str, tuple[float, float]]
    accuracy: float
    rho: float
    accuracy_95: tuple[float, float] = (math.nan, math.nan)
    rho_95: tuple[float, float] = (math.nan, math.nan)

    def as_dict(self) -> dict:
        def r(x):
            return None if x is None or not math.isfinite(x) else round(float(x), 4)

        out = {"accuracy": r(self.accuracy), "rho": r(self.rho)}
        if math.isfinite(self.accuracy_95[0]):
            out["accuracy_95"] = [r(x) for x in self.accuracy_95]
            out["rho_95"] = [r(x) for x in self.rho_95]
        out["per_file"] = {k: [r(a), r(b)] for k, (a, b) in self.per_file.items()}
        return out


class SystemView:
    """The files of `files` that have a system-level view, their bootstrap draws over inputs
    (the same for every column), and why each other file has none."""

    def __init__(
        self, files: Sequence[HeadFile], by_genre: bool, *, n_samples: int = 200, seed: int = 12345
    ):
        self.skipped: dict[str, str] = {}
        self.draws: dict[str, SystemDraws] = {}
        for f in files:
            why = skip_reason(f.systems, not_a_generator=NOT_SYSTEMS.get(f.name))
            if why is None:
                self.draws[f.name] = SystemDraws(
                    f.human, f.systems, f.groups, n_samples=n_samples, seed=seed
                )
            else:
                self.skipped[f.name] = why
        self.genres = {f.name: f.genre for f in files} if by_genre else None
        self.n_samples = n_samples

    def __bool__(self) -> bool:
        return bool(self.draws)

    def point(self, preds: Mapping[str, np.ndarray]) -> SystemFigures:
        per = {n: d.point(preds[n])[:2] for n, d in self.draws.items()}
        acc, rho = means(per, self._genres())
        return SystemFigures(per, acc, rho)

    def _genres(self):
        return None if self.genres is None else {n: self.genres[n] for n in self.draws}

    def _mean_draws(self, preds: Mapping[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        by_file = {n: d.draws(preds[n]) for n, d in self.draws.items()}
        accs, rhos = np.empty(self.n_samples), np.empty(self.n_samples)
        for b in range(self.n_samples):
            per = {n: (acc[b], rho[b]) for n, (acc, rho) in by_file.items()}
            accs[b], rhos[b] = means(per, self._genres())
        return accs, rhos

    def figures(self, preds: Mapping[str, np.ndarray]) -> SystemFigures:
        """`point` with 95% intervals of the means."""
        base = self.point(preds)
        accs, rhos = self._mean_draws(preds)
        return SystemFigures(
            base.per_file,
            base.accuracy,
            base.rho,
            percentile_interval(accs),
            percentile_interval(rhos),
        )

    def gain(
        self, new: Mapping[str, np.ndarray], old: Mapping[str, np.ndarray]
    ) -> tuple[float, float]:
        """95% interval of mean accuracy(new) - mean accuracy(old), on the same draws."""
        a, _ = self._mean_draws(new)
        b, _ = self._mean_draws(old)
        return percentile_interval(a - b)


def system_view(
    files: Sequence[HeadFile], by_genre: bool, *, n_samples: int = 200, seed: int = 12345
) -> SystemView:
    return SystemView(files, by_genre, n_samples=n_samples, seed=seed)
