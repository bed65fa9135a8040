"""System-level agreement: each system's mean score against its mean human score, as people
compare systems (the view `fluency compare` serves).

For a file whose outputs name six or more systems:

- **pairwise accuracy**: the share of pairs of systems whose mean scores are ordered as their
  mean human scores; pairs people rate equal are left out, and a pair the scores tie counts one
  half (a tie is ordered either way, as a coin would).
- **Spearman's rho** of the system means.
- 95% bootstrap intervals over inputs (groups): the inputs are drawn with replacement and every
  system's means recomputed over its outputs for the drawn inputs, the same draws for every
  column, so two columns' difference has a paired interval too.

Human references (`is_reference`) are not systems here: `fluency benchmark` leaves them out
before this view sees the file. A file without `system`, with fewer than `MIN_SYSTEMS`
systems, or whose `system` names something other than a generator (`genres.NOT_SYSTEMS`) is
skipped with the reason, never an error. scikit-learn and SciPy have no system-level
agreement with a bootstrap over inputs, so it is written here on NumPy (`scorer.evidence.ranks`).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from scorer.evidence.ranks import spearman

__all__ = [
    "MIN_SYSTEMS",
    "SystemAgreement",
    "SystemDraws",
    "pairwise_accuracy",
    "percentile_interval",
    "skip_reason",
    "system_agreement",
    "system_means",
]

MIN_SYSTEMS = 6


def skip_reason(
    systems: Sequence[Hashable] | None,
    *,
    min_systems: int = MIN_SYSTEMS,
    not_a_generator: str | None = None,
) -> str | None:
    """Why a file has no system-level view (None: it has one)."""
    if not_a_generator:
        return not_a_generator
    if systems is None or not len(systems) or all(s in (None, "") for s in systems):
        return "its outputs name no system"
    n = len(set(systems))
    if n < min_systems:
        return f"{n} systems, fewer than {min_systems}"
    return None


def system_means(values: np.ndarray, systems: Sequence[Hashable]) -> dict[Hashable, float]:
    """{system: the mean of its values}, systems in first-seen order."""
    names = list(dict.fromkeys(systems))
    ids = {s: k for k, s in enumerate(names)}
    sid = np.array([ids[s] for s in systems])
    sums = np.bincount(sid, np.asarray(values, dtype=float), len(names))
    counts = np.bincount(sid, minlength=len(names))
    return {s: float(sums[k] / counts[k]) for s, k in ids.items()}


def _pair_index(n: int) -> tuple[np.ndarray, np.ndarray]:
    return np.triu_indices(n, 1)


def pairwise_accuracy(score_means: np.ndarray, human_means: np.ndarray) -> tuple[float, int]:
    """(share of system pairs ordered as people order them, pairs people rate apart): the
    pairs people rate equal are left out; a pair the scores tie counts one half."""
    a, b = _pair_index(len(score_means))
    hs = np.sign(np.asarray(human_means)[a] - np.asarray(human_means)[b])
    ps = np.sign(np.asarray(score_means)[a] - np.asarray(score_means)[b])
    keep = hs != 0
    n = int(keep.sum())
    if not n:
        return math.nan, 0
    agree = (ps[keep] == hs[keep]) + 0.5 * (ps[keep] == 0)
    return float(agree.mean()), n


@dataclass(frozen=True)
class SystemAgreement:
    """One column's system-level figures on one file, with 95% bootstrap intervals over inputs."""

    n_systems: int
    n_pairs: int  # pairs of systems people rate apart
    accuracy: float
    spearman: float
    accuracy_95: tuple[float, float] = (math.nan, math.nan)
    spearman_95: tuple[float, float] = (math.nan, math.nan)


class SystemDraws:
    """The bootstrap draws over inputs of one file, shared by every column judged on it: each
    draw is a weight per output (how often its input was drawn), so a column's system means
    under every draw are two matrix products."""

    def __init__(
        self,
        human: np.ndarray,
        systems: Sequence[Hashable],
        groups: Sequence[Hashable],
        *,
        n_samples: int = 1000,
        seed: int = 12345,
    ):
        self.names = list(dict.fromkeys(systems))
        ids = {s: k for k, s in enumerate(self.names)}
        self.sid = np.array([ids[s] for s in systems])
        gids = {g: k for k, g in enumerate(dict.fromkeys(groups))}
        gid = np.array([gids[g] for g in groups])
        rng = np.random.default_rng(seed)
        n_groups = len(gids)
        counts = (
            np.stack(
                [
                    np.bincount(rng.integers(0, n_groups, n_groups), minlength=n_groups)
                    for _ in range(n_samples)
                ]
            )
            if n_samples
            else np.zeros((0, n_groups))
        )
        self.weights = counts[:, gid].astype(float)  # (draws, outputs)
        # One-hot of each output's system: the draws' per-system sums are weights @ onehot.
        self.onehot = np.zeros((len(systems), len(self.names)))
        self.onehot[np.arange(len(systems)), self.sid] = 1.0
        with np.errstate(invalid="ignore", divide="ignore"):
            self.totals = self.weights @ self.onehot  # (draws, systems)
        self.human = np.asarray(human, dtype=float)
        self.human_means = np.array(list(system_means(self.human, systems).values()))
        self.human_draws = self._means(self.human)

    def _means(self, values: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return (self.weights * values) @ self.onehot / self.totals

    def point(self, values: np.ndarray) -> tuple[float, float, int]:
        """(accuracy, spearman, pairs) of one column on the whole file."""
        means = np.bincount(self.sid, np.asarray(values, dtype=float), len(self.names))
        means /= np.bincount(self.sid, minlength=len(self.names))
        acc, n = pairwise_accuracy(means, self.human_means)
        return acc, spearman(means, self.human_means), n

    def draws(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(accuracy, spearman) of one column under every draw (NaN where a draw leaves fewer
        than two systems or no pair people rate apart)."""
        means = self._means(np.asarray(values, dtype=float))
        human = self.human_draws
        complete = np.isfinite(means).all(1) & np.isfinite(human).all(1)
        acc = np.full(len(means), math.nan)
        rho = np.full(len(means), math.nan)
        a, b = _pair_index(len(self.names))
        hs = np.sign(human[complete][:, a] - human[complete][:, b])
        ps = np.sign(means[complete][:, a] - means[complete][:, b])
        n = (hs != 0).sum(1)
        agree = ((ps == hs) & (hs != 0)).sum(1) + 0.5 * ((ps == 0) & (hs != 0)).sum(1)
        with np.errstate(invalid="ignore", divide="ignore"):
            acc[complete] = np.where(n > 0, agree / n, math.nan)
        rho[complete] = spearman(means[complete], human[complete])
        for k in np.flatnonzero(~complete):  # a system with no drawn input: the others
            ok = np.isfinite(means[k]) & np.isfinite(human[k])
            if ok.sum() >= 2:
                acc[k] = pairwise_accuracy(means[k][ok], human[k][ok])[0]
                rho[k] = spearman(means[k][ok], human[k][ok])
        return acc, rho

    def agreement(self, values: np.ndarray) -> SystemAgreement:
        acc, rho, n = self.point(values)
        if not len(self.weights):
            return SystemAgreement(len(self.names), n, acc, rho)
        accs, rhos = self.draws(values)
        return SystemAgreement(
            len(self.names), n, acc, rho, percentile_interval(accs), percentile_interval(rhos)
        )


def percentile_interval(values: np.ndarray) -> tuple[float, float]:
    """The 95% percentile interval of bootstrap draws, NaNs left out (NaN, NaN: none finite)."""
    if not np.isfinite(values).any():
        return math.nan, math.nan
    low, high = np.nanpercentile(values, [2.5, 97.5])
    return float(low), float(high)


def system_agreement(
    columns: Mapping[str, np.ndarray],
    human: np.ndarray,
    systems: Sequence[Hashable],
    groups: Sequence[Hashable],
    *,
    n_samples: int = 1000,
    seed: int = 12345,
) -> dict[str, SystemAgreement]:
    """{column: its `SystemAgreement`} on one file, every column on the same draws."""
    draws = SystemDraws(human, systems, groups, n_samples=n_samples, seed=seed)
    return {k: draws.agreement(v) for k, v in columns.items()}
