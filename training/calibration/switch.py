"""Leaving a starting head only on evidence: the paired bootstrap of every candidate's gain over
the head a user starts from, and the rule that reads it.

A user who calibrates has a head already (the bundle's, for the genre) and a few ratings. On
100 ratings a head chosen afresh among a hundred inputs is chosen by noise, so the starting head
stays unless a candidate's gain in the criterion (mean Spearman rho + mean per-input Kendall
tau, as `training.heads.estimators.select` judges heads) is above zero at 95%, for every candidate
tried at once:

- The user's inputs (groups; without groups, outputs) are resampled with replacement, the same
  draw for the starting head and every candidate, so each draw gives each candidate's gain.
- Each candidate's bound is its gain less a multiple of its bootstrap standard error, the
  multiple the 97.5% quantile of the largest standardised deviation over the candidates (a
  single-step max-t bound, Romano & Wolf 2005): the bounds hold for all candidates together,
  so trying more of them does not make a switch by chance likelier, and candidates that move
  together (the GLEU score under three readings) cost less than independent ones would.
- The rule (`switch_to`) takes the candidate of the largest gain among those whose bound is
  above zero, or none.

The criteria on the draws are `training.heads.metrics.draws.criteria`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from training.heads import Candidate, HeadFile, criteria, judgements

__all__ = ["LEVEL", "Evidence", "evidence", "switch_to"]

LEVEL = 0.95


@dataclass(frozen=True)
class Evidence:
    """A round's evidence: the head in hand and each candidate as the record every head is
    chosen on (`training.heads.selection.ship_rule.Candidate`: rho and per-input tau per file, and
    their means, on the user's ratings), each candidate's gain in the criterion over the head
    in hand, and the gain's simultaneous bound."""

    in_hand: Candidate
    candidates: tuple[Candidate, ...]
    gain: np.ndarray  # each candidate's criterion less the head in hand's
    low: np.ndarray  # simultaneous lower bound of the gain (`switch_to`)
    chosen: int | None  # the candidate the rule takes, or None: the head in hand stays

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(c.label for c in self.candidates)

    @property
    def start(self) -> float:
        """The head in hand's criterion."""
        return self.in_hand.judgement.criterion

    @property
    def point(self) -> np.ndarray:
        """Each candidate's criterion (mean rho + mean per-input tau)."""
        return np.array([c.judgement.criterion for c in self.candidates])

    def row(self, k: int) -> dict:
        j = self.candidates[k].judgement
        return {
            "label": self.labels[k],
            "criterion": round(float(j.criterion), 4),
            "rho": None if not np.isfinite(j.rho) else round(float(j.rho), 4),
            "tau": None if not np.isfinite(j.tau) else round(float(j.tau), 4),
            "gain": round(float(self.gain[k]), 4),
            "gain_low": None if not np.isfinite(self.low[k]) else round(float(self.low[k]), 4),
        }

    def ranked(self) -> list[int]:
        """Candidates by gain, largest first (NaN last)."""
        return sorted(range(len(self.labels)), key=lambda k: -np.nan_to_num(self.gain[k], nan=-9))


def switch_to(
    gain: np.ndarray, sampled: np.ndarray, *, level: float = LEVEL
) -> tuple[int | None, np.ndarray]:
    """(the candidate to switch to, or None; every candidate's lower bound).

    `gain`: each candidate's gain over the starting head on the user's data; `sampled`: the
    gains on bootstrap draws, one row a draw. A candidate qualifies where its simultaneous
    lower bound at `level` (module docstring) is above zero; of those, the largest gain wins.
    A candidate whose gain does not vary over draws is bounded by its gain."""
    gain = np.asarray(gain, dtype=float)
    sampled = np.asarray(sampled, dtype=float)
    sampled = sampled[np.isfinite(sampled).all(axis=1)] if sampled.size else sampled
    if not len(gain):
        return None, np.zeros(0)
    if not len(sampled):
        return None, np.full(len(gain), -np.inf)
    se = sampled.std(axis=0)
    varies = se > 1e-12
    low = np.where(np.isfinite(gain), gain, -np.inf)
    if varies.any():
        z = (sampled[:, varies] - gain[varies]) / se[varies]
        c = float(np.quantile(z.max(axis=1), 1 - (1 - level) / 2))
        low[varies] = gain[varies] - max(c, 0.0) * se[varies]
    ok = np.flatnonzero(low > 0)
    if not len(ok):
        return None, low
    return int(ok[np.argmax(gain[ok])]), low


def evidence(
    start: Mapping[str, np.ndarray],
    candidates: Mapping[str, Mapping[str, np.ndarray]],
    files: Sequence[HeadFile],
    *,
    n_samples: int = 1000,
    seed: int = 12345,
    level: float = LEVEL,
) -> Evidence:
    """Every candidate's gain over `start` (both {file: values}) on the same draws of the
    user's inputs, and the rule's choice (`switch_to`)."""
    heads = [start, *candidates.values()]
    point, sampled = criteria(heads, files, n_samples=n_samples, seed=seed)
    found = [
        Candidate.named(k, j)
        for k, j in zip(["head in hand", *candidates], judgements(heads, files), strict=True)
    ]
    gain = point[1:] - point[0]
    chosen, low = switch_to(gain, sampled[:, 1:] - sampled[:, :1], level=level)
    return Evidence(found[0], tuple(found[1:]), gain, low, chosen)
