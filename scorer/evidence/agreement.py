"""Does a metric agree with people? Correlations, per-judge normalisation, pairwise checks.

- `correlations`: Pearson, Spearman and Kendall with confidence intervals.
- `z_normalise`: Bangalore et al. (2000, section 4.1): subtract each judge's mean, divide by
  their standard deviation, then average the judges of an item.
- `per_group_kendall` and `pairwise_accuracy`: agreement on the outputs that compete for one
  input (a `group`), which is what a reranker needs, free of between-input difficulty.
- `spearman_difference`: is metric A's agreement really higher than metric B's on the same
  outputs? A paired bootstrap of the difference of their Spearman coefficients.
- `selection_ratios` and `preference_tests`: Foster (2008, sections 3.4 and 5) for forced-choice
  preference studies.
"""

from __future__ import annotations

import itertools
import logging
import math
from collections import Counter, defaultdict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from scorer.errors import InputError
from scorer.evidence.ranks import spearman

__all__ = [
    "Correlation",
    "CorrelationDifference",
    "GroupKendall",
    "agreement_report",
    "correlations",
    "pairwise_accuracy",
    "per_group_kendall",
    "preference_tests",
    "selection_ratios",
    "spearman_difference",
    "z_normalise",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Correlation:
    """One coefficient with its two-sided p-value and a `confidence` interval."""

    method: str
    coefficient: float
    p_value: float
    ci_low: float
    ci_high: float
    n: int
    confidence: float


def _pair(metric: Sequence[float], human: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    x, y = np.asarray(metric, dtype=float), np.asarray(human, dtype=float)
    if x.ndim != 1 or x.shape != y.shape:
        raise InputError(
            f"{x.size} metric scores but {y.size} human scores; give one of each per output"
        )
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise InputError("scores contain NaN or infinity; every output needs a finite score")
    return x, y


def _fisher_ci(r: float, se: float, confidence: float) -> tuple[float, float]:
    z, half = np.arctanh(np.clip(r, -0.999999, 0.999999)), stats.norm.ppf(0.5 + confidence / 2)
    return float(np.tanh(z - half * se)), float(np.tanh(z + half * se))


def correlations(
    metric: Sequence[float], human: Sequence[float], *, confidence: float = 0.95
) -> list[Correlation]:
    """Pearson (exact Fisher-z interval from SciPy), Spearman and Kendall.

    SciPy gives no analytic interval for the rank coefficients; we use the Fisher z transform
    with the standard errors of Bonett & Wright (2000): sqrt((1 + rho^2/2)/(n - 3)) for
    Spearman and sqrt(0.437/(n - 4)) for Kendall's tau-b (Fieller et al. 1957).
    """
    x, y = _pair(metric, human)
    n = x.size
    if n < 5:
        raise InputError(f"correlations need at least 5 scored outputs; got {n}")
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        raise InputError("one of the score lists is constant: correlation is undefined")
    if not 0 < confidence < 1:
        raise InputError(f"confidence must lie in (0, 1); got {confidence}")
    pearson = stats.pearsonr(x, y)
    ci = pearson.confidence_interval(confidence)
    out = [
        Correlation("pearson", float(pearson.statistic), float(pearson.pvalue), *ci, n, confidence)
    ]
    rho, p = stats.spearmanr(x, y)
    se = math.sqrt((1 + rho**2 / 2) / (n - 3))
    out.append(
        Correlation(
            "spearman", float(rho), float(p), *_fisher_ci(rho, se, confidence), n, confidence
        )
    )
    tau, p = stats.kendalltau(x, y)
    se = math.sqrt(0.437 / (n - 4))
    out.append(
        Correlation(
            "kendall", float(tau), float(p), *_fisher_ci(tau, se, confidence), n, confidence
        )
    )
    return out


@dataclass(frozen=True)
class CorrelationDifference:
    """Spearman(a, human) - Spearman(b, human) with a paired-bootstrap percentile interval.
    `p_not_greater`: share of resamples where a did not agree better than b (a one-sided
    bootstrap p-value for "a beats b")."""

    difference: float
    ci_low: float
    ci_high: float
    p_not_greater: float
    n: int
    n_resamples: int
    confidence: float


def spearman_difference(
    metric_a: Sequence[float],
    metric_b: Sequence[float],
    human: Sequence[float],
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 12345,
) -> CorrelationDifference:
    """Paired bootstrap (Efron & Tibshirani 1993) of Spearman(a, h) - Spearman(b, h): the same
    outputs are resampled for both metrics, so what they share cancels (the two correlations are
    dependent: same people, same outputs). Outputs are resampled independently; where several
    outputs share an input the interval is somewhat too narrow.

    Our own rather than `scipy.stats.bootstrap(paired=True)`: that calls `spearmanr` once per
    resample (20 s for 35 columns on 2,000 outputs); ranking whole
    blocks of resamples at once (`scorer.evidence.ranks.spearman` of rows) takes under a second.
    """
    a, h = _pair(metric_a, human)
    b, _ = _pair(metric_b, human)
    if a.shape != b.shape:
        raise InputError(f"{a.size} scores for one metric but {b.size} for the other")
    if a.size < 5:
        raise InputError(f"a correlation difference needs at least 5 scored outputs; got {a.size}")
    if not 0 < confidence < 1:
        raise InputError(f"confidence must lie in (0, 1); got {confidence}")
    if n_resamples < 100:
        raise InputError(f"use at least 100 resamples; got {n_resamples}")
    observed = spearman(a, h) - spearman(b, h)
    rng = np.random.default_rng(seed)
    n, block = a.size, max(1, min(n_resamples, 2_000_000 // a.size))  # bounded memory
    diffs = []
    for start in range(0, n_resamples, block):
        idx = rng.integers(0, n, size=(min(block, n_resamples - start), n))
        hh = h[idx]
        diffs.append(spearman(a[idx], hh) - spearman(b[idx], hh))  # NaN: a constant resample
    d = np.concatenate(diffs)
    d = d[np.isfinite(d)]
    tail = (1 - confidence) / 2
    low, high = np.quantile(d, [tail, 1 - tail]) if d.size else (math.nan, math.nan)
    return CorrelationDifference(
        observed,
        float(low),
        float(high),
        float(np.mean(d <= 0)) if d.size else math.nan,
        n,
        int(d.size),
        confidence,
    )


def z_normalise(ratings: Sequence[Mapping[str, float]]) -> list[float]:
    """One score per item: the mean over its judges of (rating - judge mean) / judge sd.

    `ratings[i]` maps judge id to that judge's raw rating of item i. A judge's mean and sample
    standard deviation (ddof=1) come from every item they rated. A judge who gave one rating,
    or the same rating every time, has no spread to divide by: their ratings are left out
    (logged), as they say nothing about which item is better.
    """
    by_judge: dict[str, list[float]] = defaultdict(list)
    for item in ratings:
        for judge, value in item.items():
            by_judge[judge].append(float(value))
    moments = {}
    for judge, values in by_judge.items():
        sd = float(np.std(values, ddof=1)) if len(values) > 1 else 0.0
        if sd > 0:
            moments[judge] = (float(np.mean(values)), sd)
        else:
            log.warning("judge %s has no spread (%d ratings): left out", judge, len(values))
    out = []
    for i, item in enumerate(ratings):
        zs = [(v - moments[j][0]) / moments[j][1] for j, v in item.items() if j in moments]
        if not zs:
            raise InputError(
                f"item {i} has no rating from a judge with spread; "
                "every item needs a judge who rated at least two items differently"
            )
        out.append(float(np.mean(zs)))
    return out


@dataclass(frozen=True)
class GroupKendall:
    """Kendall's tau-b inside each group, averaged over the groups where it is defined."""

    mean_tau: float
    n_groups: int
    n_skipped: int
    taus: dict[Hashable, float]


def _groups(groups: Sequence[Hashable], n: int) -> dict[Hashable, list[int]]:
    if len(groups) != n:
        raise InputError(f"{len(groups)} group labels for {n} outputs; give one per output")
    members: dict[Hashable, list[int]] = defaultdict(list)
    for i, g in enumerate(groups):
        members[g].append(i)
    return members


def per_group_kendall(
    metric: Sequence[float], human: Sequence[float], groups: Sequence[Hashable]
) -> GroupKendall:
    """Groups with fewer than 2 outputs, or a constant metric or human score, are skipped."""
    x, y = _pair(metric, human)
    taus, skipped = {}, 0
    for g, idx in _groups(groups, x.size).items():
        if len(idx) < 2 or np.ptp(x[idx]) == 0 or np.ptp(y[idx]) == 0:
            skipped += 1
            continue
        taus[g] = float(stats.kendalltau(x[idx], y[idx]).statistic)
    mean = float(np.mean(list(taus.values()))) if taus else float("nan")
    return GroupKendall(mean, len(taus), skipped, taus)


def pairwise_accuracy(
    metric: Sequence[float],
    human: Sequence[float],
    groups: Sequence[Hashable] | None = None,
) -> tuple[float, int]:
    """Share of (better, worse) pairs, by the human score, that the metric orders the same way.

    Pairs are taken inside each group (all outputs when `groups` is None); pairs people rated
    equal are not counted; a metric tie counts one half. Returns (accuracy, number of pairs).
    """
    x, y = _pair(metric, human)
    members = _groups(groups, x.size) if groups is not None else {None: list(range(x.size))}
    agree, n_pairs = 0.0, 0
    for idx in members.values():
        if len(idx) < 2:
            continue
        i, j = np.array(list(itertools.combinations(idx, 2))).T
        h = np.sign(y[i] - y[j])
        m = np.sign(x[i] - x[j])
        keep = h != 0
        n_pairs += int(keep.sum())
        agree += float(np.sum(m[keep] == h[keep]) + 0.5 * np.sum(m[keep] == 0))
    if not n_pairs:
        raise InputError("no pair of outputs has different human scores: nothing to order")
    return agree / n_pairs, n_pairs


def agreement_report(
    metric: Sequence[float],
    human: Sequence[float],
    groups: Sequence[Hashable] | None = None,
    *,
    confidence: float = 0.95,
) -> dict[str, float | int]:
    """Every agreement figure for one metric in one flat dict (what `fluency evaluate` prints)."""
    out: dict[str, float | int] = {"n": len(metric)}
    for c in correlations(metric, human, confidence=confidence):
        out.update(
            {
                c.method: c.coefficient,
                f"{c.method}_p": c.p_value,
                f"{c.method}_ci_low": c.ci_low,
                f"{c.method}_ci_high": c.ci_high,
            }
        )
    if groups is not None:
        gk = per_group_kendall(metric, human, groups)
        out.update(group_kendall=gk.mean_tau, n_groups=gk.n_groups)
    acc, n_pairs = pairwise_accuracy(metric, human, groups)
    out.update(pairwise_accuracy=acc, n_pairs=n_pairs)
    return out


def selection_ratios(
    trials: Sequence[tuple[Sequence[Hashable], Hashable]],
) -> dict[Hashable, float]:
    """Foster (2008, section 5): times an item was chosen / times it was offered.

    A trial is (the items offered, the item chosen); the chosen one must be among those offered.
    """
    offered: Counter[Hashable] = Counter()
    chosen: Counter[Hashable] = Counter()
    for number, (options, choice) in enumerate(trials):
        if choice not in options:
            raise InputError(
                f"trial {number}: chose {choice!r}, which was not offered {list(options)}"
            )
        offered.update(set(options))
        chosen[choice] += 1
    return {item: chosen[item] / offered[item] for item in offered}


def preference_tests(
    choices: Sequence[tuple[Hashable, Hashable, Hashable]],
) -> list[dict[str, float | int | str]]:
    """Foster (2008, section 3.4): a chi-square goodness-of-fit test per comparison.

    `choices`: (option x, option y, the one chosen), e.g. system names. Per unordered pair, the
    counts of each choice are tested against an even split: chi2(1, N).
    """
    counts: dict[tuple, Counter] = defaultdict(Counter)
    for x, y, chosen in choices:
        if chosen not in (x, y):
            raise InputError(f"chose {chosen!r} between {x!r} and {y!r}")
        a, b = sorted((str(x), str(y)))
        counts[(a, b)][str(chosen)] += 1
    rows = []
    for (a, b), c in counts.items():
        observed = [c[a], c[b]]
        res = stats.chisquare(observed)
        rows.append(
            {
                "a": a,
                "b": b,
                "chosen_a": observed[0],
                "chosen_b": observed[1],
                "n": sum(observed),
                "chi2": float(res.statistic),
                "p_value": float(res.pvalue),
            }
        )
    return rows
