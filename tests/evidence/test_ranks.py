"""`scorer.evidence.ranks.spearman` against SciPy and against the three Spearmans it replaces,
copied below as they were: the heads' and the system view's (`np.corrcoef` of ranks) and the
bootstraps' (the sums written out, per row), to the bit; SciPy's `spearmanr`, to a few ulp."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats

from scorer.evidence.ranks import spearman


def _corrcoef_of_ranks(x, y):  # training.heads.metrics.figures.spearman, system_level._spearman
    rx, ry = stats.rankdata(x), stats.rankdata(y)
    if np.ptp(rx) == 0 or np.ptp(ry) == 0:
        return float("nan")
    return float(np.corrcoef(rx, ry)[0, 1])


def _sums_of_ranks(x, y):  # scorer.evidence.benchmark._spearman
    rx, ry = stats.rankdata(x), stats.rankdata(y)
    rx -= rx.mean()
    ry -= ry.mean()
    denom = math.sqrt(float((rx**2).sum() * (ry**2).sum()))
    return float((rx * ry).sum() / denom) if denom else math.nan


def _row_sums_of_ranks(x, y):  # system_level._row_spearman, agreement._row_spearman
    if not len(x):
        return np.zeros(0)
    rx, ry = stats.rankdata(x, axis=1), stats.rankdata(y, axis=1)
    rx -= rx.mean(1, keepdims=True)
    ry -= ry.mean(1, keepdims=True)
    den = np.sqrt((rx**2).sum(1) * (ry**2).sum(1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (rx * ry).sum(1) / den, math.nan)


def _pairs(seed: int, n_cases: int = 400):
    """Vectors of 1-200 values: continuous, heavily tied, constant, or holding a NaN."""
    rng = np.random.default_rng(seed)
    for k in range(n_cases):
        n = int(rng.integers(1, 200))
        x = rng.integers(0, 5, n).astype(float) if k % 3 == 0 else rng.normal(size=n)
        y = rng.normal(size=n).round(1)
        if k % 17 == 0:
            x[:] = 1.0
        if k % 19 == 0:
            y[rng.integers(0, n)] = math.nan
        if k % 23 == 0:
            x[rng.integers(0, n)] = math.nan
        yield x, y


def test_one_vector_is_the_heads_and_system_views_spearman_to_the_bit():
    for x, y in _pairs(0):
        old, new = _corrcoef_of_ranks(x, y), spearman(x, y)
        assert (math.isnan(old) and math.isnan(new)) or old == new, (x, y)


def test_rows_are_the_bootstraps_spearman_to_the_bit():
    rng = np.random.default_rng(1)
    for n in (2, 3, 7, 40, 300):
        x = rng.integers(0, 4, (250, n)).astype(float)
        y = rng.normal(size=(250, n)).round(1)
        x[::50] = 2.0  # constant rows
        np.testing.assert_array_equal(spearman(x, y), _row_sums_of_ranks(x, y))
        for i in range(0, 250, 25):  # the benchmark's bootstrap read one draw at a time
            one = _sums_of_ranks(x[i], y[i])
            assert (math.isnan(one) and math.isnan(spearman(x[i : i + 1], y[i : i + 1])[0])) or (
                spearman(x[i : i + 1], y[i : i + 1])[0] == one
            )
    assert spearman(np.zeros((0, 3)), np.zeros((0, 3))).shape == (0,)


def test_each_row_is_scipys_spearmanr_on_a_resample_ties_included():
    rng = np.random.default_rng(5)
    x = rng.integers(0, 4, size=(6, 50)).astype(float)  # heavy ties, as a resample has
    y = rng.integers(0, 7, size=(6, 50)).astype(float)
    expected = [stats.spearmanr(a, b).statistic for a, b in zip(x, y, strict=True)]
    assert spearman(x, y) == pytest.approx(expected)


def test_it_is_scipys_spearmanr_to_a_few_ulp_and_nan_where_it_is():
    for x, y in _pairs(2):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = float(stats.spearmanr(x, y).statistic) if len(x) > 1 else math.nan
        found = spearman(x, y)
        if math.isnan(expected):
            assert math.isnan(found)
        else:
            assert found == pytest.approx(expected, abs=4e-16, rel=0), (x, y)


def test_a_worked_example():
    # ranks (1, 2, 3, 4, 5) and (2, 1, 4, 3, 5): d^2 sums to 4, rho = 1 - 6 * 4 / (5 * 24) = 0.8
    assert spearman(np.array([1.0, 2, 3, 4, 5]), np.array([2.0, 1, 4, 3, 5])) == pytest.approx(0.8)
