"""One fixed protocol for agreement with people, model beside baselines, on every judgement file.

Per file, over the outputs kept (`benchmark_data`: empty and "null"/"none" outputs left out):

- Spearman's rho over all outputs;
- per-input Kendall: tau-b inside each group of outputs that answer one input, averaged over
  the groups with at least 2 outputs and some human-score variance (a column constant inside
  such a group scores tau 0 there, so every column is averaged over the same groups);
- pairwise accuracy inside groups, over pairs people scored differently (a metric tie: 1/2).

Every baseline and feature is used in a direction not chosen on the file it is scored on:
length, LM log-probabilities, chrF and BLEU in their natural direction (computed so that
higher is better); a single feature in the sign of its Spearman on the other files of the run,
pooled (the n-weighted mean of their coefficients, which is what pooling within-file ranks
gives). The best baseline of a file is then the best of these on the file itself (favouring the
baselines, not the model), and the model's lead over it gets a paired-bootstrap 95% interval:
groups (inputs) are resampled when the file has groups, single outputs otherwise, the same
draws for both columns and both statistics (Efron & Tibshirani 1993; Koehn 2004).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from scorer.errors import InputError
from scorer.evidence.ranks import spearman

__all__ = [
    "ColumnAgreement",
    "Difference",
    "FileColumns",
    "Pairs",
    "agreement",
    "best_baseline",
    "group_bootstrap",
    "loo_signs",
]


@dataclass(frozen=True)
class FileColumns:
    """One judgement file: human scores, groups, and every scored column (higher = better)."""

    name: str
    human: np.ndarray
    groups: list[Hashable]
    models: dict[str, np.ndarray]  # model scores, taken as they are
    baselines: dict[str, np.ndarray]  # natural direction, already oriented
    features: dict[str, np.ndarray]  # raw values: oriented by `loo_signs`
    counts: dict[str, int] = field(default_factory=dict)  # n kept, n left out, ...
    readings: dict[str, np.ndarray] = field(default_factory=dict)  # scorer.readings.READINGS
    systems: list[Hashable] = field(default_factory=list)  # each output's system


class Pairs:
    """Every pair of outputs inside a group, once per file, so each column costs a few numpy
    operations: tau-b per group from sign products, pairwise accuracy from the same signs."""

    def __init__(self, human: np.ndarray, groups: Sequence[Hashable]):
        if len(groups) != len(human):
            raise InputError(f"{len(groups)} group labels for {len(human)} outputs")
        ids: dict[Hashable, int] = {}
        gid = np.array([ids.setdefault(g, len(ids)) for g in groups], dtype=int)
        self.n_groups = len(ids)
        self.group_of = gid
        order = np.argsort(gid, kind="stable")
        starts = np.r_[0, np.flatnonzero(np.diff(gid[order])) + 1, len(gid)]
        self.members = [order[a:b] for a, b in itertools.pairwise(starts)]  # per group id
        i_list, j_list = [], []
        for members in self.members:
            if len(members) > 1:
                i, j = np.triu_indices(len(members), 1)
                i_list.append(members[i])
                j_list.append(members[j])
        self.i = np.concatenate(i_list) if i_list else np.zeros(0, dtype=int)
        self.j = np.concatenate(j_list) if j_list else np.zeros(0, dtype=int)
        self.pair_group = gid[self.i]
        self.sy = np.sign(human[self.i] - human[self.j])
        human_var = np.bincount(self.pair_group, self.sy**2, minlength=self.n_groups)
        self.eligible = human_var > 0  # >= 2 outputs and people did not score them all alike
        self.has_groups = bool(len(self.i))

    def group_taus(self, x: np.ndarray) -> np.ndarray:
        """tau-b per group (NaN where not eligible; 0 where `x` is constant in the group)."""
        sx = np.sign(x[self.i] - x[self.j])
        num = np.bincount(self.pair_group, sx * self.sy, minlength=self.n_groups)
        vx = np.bincount(self.pair_group, sx**2, minlength=self.n_groups)
        vy = np.bincount(self.pair_group, self.sy**2, minlength=self.n_groups)
        with np.errstate(invalid="ignore", divide="ignore"):
            tau = np.where(vx > 0, num / np.sqrt(vx * vy), 0.0)
        return np.where(self.eligible, tau, np.nan)

    def accuracy(self, x: np.ndarray) -> tuple[float, int]:
        """Share of pairs people ordered that `x` orders the same way (ties 1/2)."""
        keep = self.sy != 0
        if not keep.any():
            return math.nan, 0
        sx = np.sign(x[self.i] - x[self.j])[keep]
        sy = self.sy[keep]
        return float(np.mean((sx == sy) + 0.5 * (sx == 0))), int(keep.sum())


@dataclass(frozen=True)
class ColumnAgreement:
    spearman: float
    kendall: float  # mean per-input tau-b (NaN: no eligible group)
    pairwise: float  # pairwise accuracy inside groups (NaN: no pair)
    n_groups: int  # eligible groups behind `kendall`
    n_pairs: int


def agreement(x: np.ndarray, human: np.ndarray, pairs: Pairs) -> ColumnAgreement:
    rho = spearman(x, human)
    taus = pairs.group_taus(x)
    kendall = float(np.nanmean(taus)) if pairs.eligible.any() else math.nan
    acc, n_pairs = pairs.accuracy(x)
    return ColumnAgreement(float(rho), kendall, acc, int(pairs.eligible.sum()), n_pairs)


def loo_signs(files: Sequence[FileColumns]) -> dict[str, dict[str, float]]:
    """{file: {feature: +1 | -1}}: each feature's direction from the other files only, the sign
    of the n-weighted mean of its Spearman there; a feature with no defined coefficient on any
    other file (or a zero mean) gets no direction on this file and is left out of it."""
    rho: dict[str, dict[str, tuple[float, int]]] = {}
    for f in files:
        rho[f.name] = {}
        for name, x in f.features.items():
            if np.ptp(x) > 0:
                rho[f.name][name] = (spearman(x, f.human), len(x))
    out: dict[str, dict[str, float]] = {}
    for f in files:
        out[f.name] = {}
        for name in f.features:
            others = [rho[g.name][name] for g in files if g.name != f.name and name in rho[g.name]]
            others = [(r, n) for r, n in others if math.isfinite(r)]
            if others:
                pooled = sum(r * n for r, n in others) / sum(n for _, n in others)
                if pooled != 0:
                    out[f.name][name] = float(np.sign(pooled))
    return out


def best_baseline(table: Mapping[str, ColumnAgreement], what: str) -> str | None:
    """The column with the highest `what` ("spearman" or "kendall"), NaNs never chosen."""
    scored = [(getattr(a, what), name) for name, a in table.items()]
    scored = [(v, name) for v, name in scored if math.isfinite(v)]
    return max(scored)[1] if scored else None


@dataclass(frozen=True)
class Difference:
    """model - baseline, observed, with a percentile interval from `n_samples` resamples."""

    difference: float
    ci_low: float
    ci_high: float
    n_samples: int
    seed: int
    unit: str  # "inputs" (groups resampled) or "outputs"


def group_bootstrap(
    model: np.ndarray,
    baselines: Mapping[str, np.ndarray],
    human: np.ndarray,
    pairs: Pairs,
    *,
    n_samples: int = 1000,
    seed: int = 12345,
    confidence: float = 0.95,
) -> dict[str, dict[str, Difference]]:
    """{"spearman" | "kendall": {baseline: Difference}}: paired bootstrap of model minus each
    baseline. A resample draws groups (inputs) with replacement when the file has groups, else
    single outputs; both statistics and every baseline are computed on the same draws."""
    if n_samples < 100:
        raise InputError(f"use at least 100 bootstrap samples; got {n_samples}")
    rng = np.random.default_rng(seed)
    if pairs.has_groups:
        members, unit, n_units = pairs.members, "inputs", pairs.n_groups
    else:
        members, unit, n_units = None, "outputs", len(human)
    taus = {name: pairs.group_taus(x) for name, x in {"": model, **baselines}.items()}
    columns = np.vstack([model, *baselines.values()])  # the model, then each baseline

    def rhos(idx: np.ndarray) -> np.ndarray:  # every column's rho on the same outputs at once
        return spearman(columns[:, idx], np.broadcast_to(human[idx], (len(columns), len(idx))))

    draws_rho: dict[str, list[float]] = {name: [] for name in baselines}
    draws_tau: dict[str, list[float]] = {name: [] for name in baselines}
    for _ in range(n_samples):
        pick = rng.integers(0, n_units, n_units)
        idx = np.concatenate([members[g] for g in pick]) if members is not None else pick
        rho = rhos(idx)
        if pairs.has_groups:
            ok = pairs.eligible[pick]
            m_tau = float(taus[""][pick][ok].mean()) if ok.any() else math.nan
        for k, name in enumerate(baselines, 1):
            draws_rho[name].append(rho[0] - rho[k])
            if pairs.has_groups and ok.any():
                draws_tau[name].append(m_tau - float(taus[name][pick][ok].mean()))
    tail = (1 - confidence) / 2
    out: dict[str, dict[str, Difference]] = {"spearman": {}, "kendall": {}}
    rho = rhos(np.arange(len(human)))
    for k, name in enumerate(baselines, 1):
        observed = {
            "spearman": rho[0] - rho[k],
            "kendall": float(np.nanmean(taus[""]) - np.nanmean(taus[name]))
            if pairs.eligible.any()
            else math.nan,
        }
        for what, draws in (("spearman", draws_rho[name]), ("kendall", draws_tau[name])):
            d = np.asarray(draws, dtype=float)
            d = d[np.isfinite(d)]
            if not d.size or not math.isfinite(observed[what]):
                continue
            low, high = np.quantile(d, [tail, 1 - tail])
            out[what][name] = Difference(
                float(observed[what]), float(low), float(high), int(d.size), seed, unit
            )
    return out
