"""Paired significance tests over per-row sufficient statistics (Riezler & Maxwell 2005).

Each system is an (n_rows, k) matrix of statistics, row i answering input i for every system;
`from_stats(totals)` turns summed rows into the metric. A per-sentence score is the special
case k = 1, stats = [[score]], whose metric is the mean (`from_stats=None`). Corpus metrics that
are not averages (BLEU, NIST, dependency F) pass their own `from_stats`; nothing is re-parsed or
re-tokenised, the tests only move rows.

Both tests are two-sided on the absolute difference |S_A - S_B| and use p = (c + 1)/(R + 1),
with ">=" as in the paper's Figures 1-2 (so identical systems get p = 1). Randomness comes
from `np.random.default_rng(seed)` only; every result carries its seed and trial count.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Literal

import numpy as np
from scipy.stats import mannwhitneyu
from statsmodels.stats.multitest import multipletests

from scorer.errors import InputError

__all__ = [
    "AllPairs",
    "PairComparison",
    "PairedResult",
    "all_pairs",
    "paired_approximate_randomization",
    "paired_bootstrap",
    "rank_sum_all_pairs",
    "sacrebleu_paired",
]

FromStats = Callable[[np.ndarray], float]
DEFAULT_TRIALS = {"ar": 10_000, "bootstrap": 1_000}
_CELLS_PER_CHUNK = 2_000_000  # trials x rows per chunk: 16 MB of float64 at most


@dataclass(frozen=True)
class PairedResult:
    """One paired test: both scores on the full data, the p-value, and how it was drawn."""

    test: str
    score_a: float
    score_b: float
    p_value: float
    n_trials: int
    seed: int
    n_rows: int

    @property
    def difference(self) -> float:
        return self.score_a - self.score_b


def _matrices(stats_a, stats_b) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.asarray(stats_a, dtype=float), np.asarray(stats_b, dtype=float)
    a, b = (x[:, None] if x.ndim == 1 else x for x in (a, b))
    if a.ndim != 2 or a.shape != b.shape:
        raise InputError(
            f"paired tests need two (rows, statistics) matrices of one shape; got {a.shape} "
            f"and {b.shape}: give both systems the same inputs, in the same order"
        )
    if a.shape[0] < 2:
        raise InputError(f"paired tests need at least 2 rows; got {a.shape[0]}")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise InputError("statistics contain NaN or infinity; score every row first")
    return a, b


def _scorer(from_stats: FromStats | None, n_rows: int, vectorized: bool):
    """totals (m, k) -> m scores. None: the mean of column 0 (every pseudo-system has n rows)."""
    if from_stats is None:
        return lambda totals: totals[:, 0] / n_rows
    if vectorized:
        return lambda totals: np.asarray(from_stats(totals), dtype=float)
    return lambda totals: np.fromiter((from_stats(t) for t in totals), float, len(totals))


def _chunks(n_trials: int, n_rows: int) -> Iterator[int]:
    step = max(1, _CELLS_PER_CHUNK // n_rows)
    for start in range(0, n_trials, step):
        yield min(step, n_trials - start)


def _check_trials(n_trials: int, seed: int) -> None:
    if not isinstance(n_trials, int) or n_trials < 1:
        raise InputError(f"n_trials must be a positive integer; got {n_trials!r}")
    if not isinstance(seed, int | np.integer):
        raise InputError(f"seed must be an integer (results must be reproducible); got {seed!r}")


def _tolerance(*scores: float) -> float:
    # Sums taken in another order may differ in the last bits: a tie must still count as a tie.
    return 1e-12 * max(1.0, *(abs(s) for s in scores))


def paired_approximate_randomization(
    stats_a: np.ndarray,
    stats_b: np.ndarray,
    from_stats: FromStats | None = None,
    *,
    n_trials: int = 10_000,
    seed: int = 12345,
    vectorized: bool = False,
) -> PairedResult:
    """Figure 1: swap each row's pair of statistics between the systems with probability 0.5.

    Vectorised: a (trials, n) boolean swap matrix S per chunk; the shuffled totals are
    T_A + S @ (B - A) and T_B - S @ (B - A), one matrix product for all trials of a chunk.
    `vectorized=True` says `from_stats` accepts a (trials, k) matrix and returns trials scores.
    """
    _check_trials(n_trials, seed)
    a, b = _matrices(stats_a, stats_b)
    score = _scorer(from_stats, a.shape[0], vectorized)
    ta, tb = a.sum(0), b.sum(0)
    sa, sb = (float(x) for x in score(np.vstack([ta, tb])))
    observed = abs(sa - sb) - _tolerance(sa, sb)
    delta, rng, count = b - a, np.random.default_rng(seed), 0
    for size in _chunks(n_trials, a.shape[0]):
        shift = rng.integers(0, 2, size=(size, a.shape[0]), dtype=bool) @ delta
        count += int(np.sum(np.abs(score(ta + shift) - score(tb - shift)) >= observed))
    p = (count + 1) / (n_trials + 1)
    return PairedResult("ar", sa, sb, p, n_trials, int(seed), a.shape[0])


def paired_bootstrap(
    stats_a: np.ndarray,
    stats_b: np.ndarray,
    from_stats: FromStats | None = None,
    *,
    n_trials: int = 1_000,
    seed: int = 12345,
    vectorized: bool = False,
    statistic: Literal["difference", "absolute"] = "difference",
) -> PairedResult:
    """Figure 2: resample rows (the same rows for both systems), shift, count.

    The shift method (Noreen 1989) centres the bootstrap distribution on the null value.
    `statistic="difference"` (default) shifts the signed difference d_b - mean(d_b), whose null
    value is 0, and counts |shifted| >= |d|. `"absolute"` is Figure 2 read literally, as
    sacrebleu does: |d_b| - mean(|d_b|) >= |d|. Its null value is not 0 (|d| is never
    negative), which is one reason the paper finds the bootstrap anti-conservative; we keep it
    to compare with sacrebleu and the paper.
    """
    _check_trials(n_trials, seed)
    if statistic not in ("difference", "absolute"):
        raise InputError(f"statistic must be 'difference' or 'absolute'; got {statistic!r}")
    a, b = _matrices(stats_a, stats_b)
    n = a.shape[0]
    score = _scorer(from_stats, n, vectorized)
    sa, sb = (float(x) for x in score(np.vstack([a.sum(0), b.sum(0)])))
    rng, diffs = np.random.default_rng(seed), []
    for size in _chunks(n_trials, n * a.shape[1]):
        idx = rng.integers(0, n, size=(size, n))  # the same resampled rows for both systems
        diffs.append(score(a[idx].sum(1)) - score(b[idx].sum(1)))
    d = np.concatenate(diffs)
    shifted = np.abs(d - d.mean()) if statistic == "difference" else np.abs(d) - np.abs(d).mean()
    count = int(np.sum(shifted >= abs(sa - sb) - _tolerance(sa, sb)))
    p = (count + 1) / (n_trials + 1)
    return PairedResult("bootstrap", sa, sb, p, n_trials, int(seed), n)


@dataclass(frozen=True)
class PairComparison:
    a: str
    b: str
    score_a: float
    score_b: float
    difference: float
    p_value: float
    p_holm: float
    p_bonferroni: float
    n_rows: int = 0


@dataclass(frozen=True)
class AllPairs:
    """Every pair of k systems. `experimentwise_error` = 1 - (1 - alpha)^m for the m pairwise
    comparisons at per-comparison level alpha (Riezler & Maxwell 2005, section 5);
    `sidak_level` is the per-comparison level that would keep it at alpha."""

    comparisons: list[PairComparison]
    test: str
    n_trials: int
    seed: int
    alpha: float
    n_rows: int

    @property
    def n_comparisons(self) -> int:
        return len(self.comparisons)

    @property
    def experimentwise_error(self) -> float:
        return 1.0 - (1.0 - self.alpha) ** self.n_comparisons

    @property
    def sidak_level(self) -> float:
        return 1.0 - (1.0 - self.alpha) ** (1.0 / max(1, self.n_comparisons))

    def rows(self) -> list[dict[str, float | str]]:
        return [asdict(c) for c in self.comparisons]

    def significant(self, correction: str = "holm") -> list[PairComparison]:
        key = {"holm": "p_holm", "bonferroni": "p_bonferroni", "none": "p_value"}[correction]
        return [c for c in self.comparisons if getattr(c, key) <= self.alpha]


def all_pairs(
    systems: Mapping[str, np.ndarray],
    from_stats: FromStats | None = None,
    *,
    test: Literal["ar", "bootstrap"] = "ar",
    n_trials: int | None = None,
    seed: int = 12345,
    alpha: float = 0.05,
    vectorized: bool = False,
    missing: Literal["error", "drop"] = "error",
) -> AllPairs:
    """Test every pair (in the given order), then Holm and Bonferroni corrections (statsmodels).

    Every pair uses the same seed, so a pair's p-value does not depend on which other systems
    are in the comparison. `missing="drop"`: a row holding NaN for either system of a pair (an
    output that could not be scored, e.g. an empty one) is left out of that pair only, so the
    other pairs keep every row; each comparison says how many rows it used.
    """
    if test not in DEFAULT_TRIALS:
        raise InputError(f"test must be one of {sorted(DEFAULT_TRIALS)}; got {test!r}")
    if len(systems) < 2:
        raise InputError(f"need at least two systems to compare; got {len(systems)}")
    if not 0 < alpha < 1:
        raise InputError(f"alpha must lie in (0, 1); got {alpha}")
    trials = DEFAULT_TRIALS[test] if n_trials is None else n_trials
    run = paired_approximate_randomization if test == "ar" else paired_bootstrap
    if missing not in ("error", "drop"):
        raise InputError(f"missing must be 'error' or 'drop'; got {missing!r}")
    pairs = list(itertools.combinations(systems, 2))
    results = []
    for x, y in pairs:
        a, b = systems[x], systems[y]
        if missing == "drop":
            a, b = _drop_missing(a, b)
        results.append(run(a, b, from_stats, n_trials=trials, seed=seed, vectorized=vectorized))
    pvals = [r.p_value for r in results]
    holm = multipletests(pvals, alpha=alpha, method="holm")[1]
    bonf = multipletests(pvals, alpha=alpha, method="bonferroni")[1]
    comparisons = [
        PairComparison(
            x, y, r.score_a, r.score_b, r.difference, r.p_value, float(h), float(bf), r.n_rows
        )
        for (x, y), r, h, bf in zip(pairs, results, holm, bonf, strict=True)
    ]
    return AllPairs(comparisons, test, trials, int(seed), alpha, max(r.n_rows for r in results))


def _drop_missing(stats_a, stats_b) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.asarray(stats_a, dtype=float), np.asarray(stats_b, dtype=float)
    if a.shape != b.shape:
        return a, b  # _matrices explains the mismatch
    keep = ~(np.isnan(a.reshape(len(a), -1)).any(1) | np.isnan(b.reshape(len(b), -1)).any(1))
    return a[keep], b[keep]


def rank_sum_all_pairs(
    values: Mapping[str, Sequence[float]],
) -> list[dict[str, float | str]]:
    """Wilcoxon rank-sum (Mann-Whitney U, two-sided) between every pair of systems, Bonferroni-
    corrected: Foster (2008, section 4) for metric differences between unpaired outputs."""
    pairs = list(itertools.combinations(values, 2))
    if not pairs:
        raise InputError(f"need at least two systems; got {list(values)}")
    out = []
    for x, y in pairs:
        if len(values[x]) == 0 or len(values[y]) == 0:
            raise InputError(f"system {x if not len(values[x]) else y!r} has no values")
        res = mannwhitneyu(values[x], values[y], alternative="two-sided")
        out.append(
            {
                "a": x,
                "b": y,
                "median_a": float(np.median(values[x])),
                "median_b": float(np.median(values[y])),
                "u": float(res.statistic),
                "p_value": float(res.pvalue),
            }
        )
    bonf = multipletests([r["p_value"] for r in out], method="bonferroni")[1]
    for row, p in zip(out, bonf, strict=True):
        row["p_bonferroni"] = float(p)
    return out


def sacrebleu_paired(
    hypotheses_a: Sequence[str],
    hypotheses_b: Sequence[str],
    references: Sequence[Sequence[str]],
    metric: Literal["bleu", "chrf"] = "bleu",
    *,
    test: Literal["ar", "bootstrap"] = "ar",
    n_trials: int | None = None,
    seed: int = 12345,
) -> PairedResult:
    """sacrebleu's own paired test (`sacrebleu.significance.PairedTest`), A as its baseline.

    `references` is one list per segment (our convention); sacrebleu wants one stream per
    reference, so every segment needs the same number of references. sacrebleu reads its seed
    from SACREBLEU_SEED when built; we set it on the object instead, so the environment never
    decides. sacrebleu counts strictly greater differences, so two identical systems get
    p = 1/(R+1) there, where `paired_approximate_randomization` (>=, as in the paper) gives 1;
    on systems that differ the two agree (the swap matrices are the same draws).
    """
    from sacrebleu.metrics import BLEU, CHRF
    from sacrebleu.significance import PairedTest

    if test not in DEFAULT_TRIALS:
        raise InputError(f"test must be one of {sorted(DEFAULT_TRIALS)}; got {test!r}")
    if metric not in ("bleu", "chrf"):
        raise InputError(f"sacrebleu's paired tests here cover bleu and chrf; got {metric!r}")
    trials = DEFAULT_TRIALS[test] if n_trials is None else n_trials
    _check_trials(trials, seed)
    if seed == 0:
        raise InputError("sacrebleu treats seed 0 as 'no seed'; give a non-zero seed")
    if not len(hypotheses_a) == len(hypotheses_b) == len(references):
        raise InputError(
            f"{len(hypotheses_a)} and {len(hypotheses_b)} hypotheses for {len(references)} "
            "reference lists; give every system one line per segment"
        )
    n_refs = {len(r) for r in references}
    if len(n_refs) != 1 or 0 in n_refs:
        raise InputError(
            f"sacrebleu needs the same number (>0) of references per segment; got {sorted(n_refs)}"
        )
    streams = [list(s) for s in zip(*references, strict=True)]
    scorer = BLEU() if metric == "bleu" else CHRF()
    paired = PairedTest(
        [("a", list(hypotheses_a)), ("b", list(hypotheses_b))],
        {metric: scorer},
        streams,
        test_type="ar" if test == "ar" else "bs",
        n_samples=trials,
    )
    paired._seed = int(seed)
    _, scores = paired()
    (base, other) = next(iter(v for k, v in scores.items() if k != "System"))
    return PairedResult(
        test,
        float(base.score),
        float(other.score),
        float(other.p_value),
        trials,
        int(seed),
        len(references),
    )
