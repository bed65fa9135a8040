"""Agreement with people: correlations, z-normalisation, group checks, preference tests."""

from __future__ import annotations

import math

import numpy as np
import pytest

from scorer.errors import InputError
from scorer.evidence.agreement import (
    agreement_report,
    correlations,
    pairwise_accuracy,
    per_group_kendall,
    preference_tests,
    selection_ratios,
    z_normalise,
)


def test_rank_coefficients_see_a_monotone_relation_pearson_does_not_fully():
    x = np.linspace(0, 5, 40)
    by = {c.method: c for c in correlations(x, np.exp(x))}
    assert by["spearman"].coefficient == pytest.approx(1.0)
    assert by["kendall"].coefficient == pytest.approx(1.0)
    assert 0.7 < by["pearson"].coefficient < 0.95


def test_pearson_interval_is_fishers_and_shrinks_with_n():
    rng = np.random.default_rng(0)
    x = rng.normal(size=200)
    y = x + rng.normal(size=200)
    c = correlations(x, y)[0]
    z, se = math.atanh(c.coefficient), 1 / math.sqrt(200 - 3)
    assert c.ci_low == pytest.approx(math.tanh(z - 1.959964 * se), abs=1e-4)
    assert c.ci_high == pytest.approx(math.tanh(z + 1.959964 * se), abs=1e-4)
    small = correlations(x[:30], y[:30])
    for big, little in zip(correlations(x, y), small, strict=True):
        assert big.ci_low <= big.coefficient <= big.ci_high
        assert big.ci_high - big.ci_low < little.ci_high - little.ci_low


def test_constant_scores_are_refused():
    with pytest.raises(InputError, match="constant"):
        correlations([1, 1, 1, 1, 1, 1], [1, 2, 3, 4, 5, 6])


def test_z_normalise_removes_a_judges_harshness():
    # Judge "h" rates everything two points lower than judge "l": after normalisation they agree.
    items = [{"h": 1, "l": 3}, {"h": 2, "l": 4}, {"h": 3, "l": 5}]
    z = z_normalise(items)
    assert z == pytest.approx([-1.0, 0.0, 1.0])  # (x - mean) / sd with ddof=1: sd = 1
    # A judge with no spread says nothing: left out, the other judge decides.
    assert z_normalise([{"a": 1, "flat": 4}, {"a": 3, "flat": 4}]) == pytest.approx(
        [-math.sqrt(0.5), math.sqrt(0.5)]
    )


def test_per_group_kendall_and_pairwise_accuracy():
    metric = [0.9, 0.5, 0.1, 0.2, 0.8, 0.4, 0.4]
    human = [3.0, 2.0, 1.0, 1.0, 3.0, 2.0, 2.0]
    groups = ["g1", "g1", "g1", "g2", "g2", "g2", "g3"]
    gk = per_group_kendall(metric, human, groups)
    assert gk.taus == {"g1": pytest.approx(1.0), "g2": pytest.approx(1.0)}
    assert gk.n_skipped == 1  # g3 has one output
    assert pairwise_accuracy(metric, human, groups) == (1.0, 6)
    # Reverse one group: its 3 pairs all disagree.
    flipped = [0.1, 0.5, 0.9, 0.2, 0.8, 0.4, 0.4]
    assert pairwise_accuracy(flipped, human, groups) == (0.5, 6)
    # A metric tie on a pair people separated counts one half.
    assert pairwise_accuracy([0.5, 0.5], [1.0, 2.0]) == (0.5, 1)


def test_agreement_report_has_every_figure():
    rng = np.random.default_rng(1)
    human = rng.normal(size=60)
    report = agreement_report(human + rng.normal(size=60), human, [i // 3 for i in range(60)])
    for key in ("pearson", "spearman_ci_low", "kendall_p", "group_kendall", "pairwise_accuracy"):
        assert key in report
    assert report["n_groups"] == 20
    assert report["n_pairs"] == 20 * 3 and 0.5 < report["pairwise_accuracy"] <= 1


# Foster (2008, section 3.4): chi2(1, N=216) = 4.17, chi2(1, N=215) = 4.47, chi2(1, N=217) = 2.44
# with p ~ 0.12. The split of choices is not printed; these are the only integer splits that give
# those values to two decimals.
@pytest.mark.parametrize(
    ("a", "b", "chi2", "p_max"),
    [(123, 93, 4.17, 0.05), (123, 92, 4.47, 0.05), (120, 97, 2.44, 0.13)],
)
def test_chi_square_per_comparison_reproduces_foster(a, b, chi2, p_max):
    choices = [("orig", "rule", "orig")] * a + [("rule", "orig", "rule")] * b
    (row,) = preference_tests(choices)
    assert (row["a"], row["b"], row["n"]) == ("orig", "rule", a + b)
    assert row["chi2"] == pytest.approx(chi2, abs=0.005)
    assert row["p_value"] < p_max


def test_selection_ratio_is_chosen_over_offered():
    trials = [(("x", "y"), "x"), (("x", "z"), "z"), (("x", "y"), "x"), (("y", "z"), "y")]
    assert selection_ratios(trials) == {"x": 2 / 3, "y": 1 / 3, "z": 1 / 2}
    with pytest.raises(InputError, match="not offered"):
        selection_ratios([(("x", "y"), "q")])


def test_spearman_difference_separates_a_better_metric_and_matches_the_point_estimates():
    from scipy.stats import spearmanr

    from scorer.evidence.agreement import spearman_difference

    rng = np.random.default_rng(3)
    human = rng.normal(size=300)
    good = human + rng.normal(scale=0.5, size=300)
    weak = human + rng.normal(scale=3.0, size=300)
    d = spearman_difference(good, weak, human, n_resamples=500)
    expected = spearmanr(good, human).statistic - spearmanr(weak, human).statistic
    assert d.difference == pytest.approx(expected)
    assert 0 < d.ci_low < d.difference < d.ci_high
    assert d.p_not_greater < 0.01 and d.n == 300 and d.n_resamples == 500
    reverse = spearman_difference(weak, good, human, n_resamples=500)
    assert reverse.ci_high < 0 and reverse.p_not_greater > 0.99
    # The same metric against itself: every resample's difference is exactly 0.
    same = spearman_difference(good, good, human, n_resamples=200)
    assert same.difference == 0 and same.ci_low == same.ci_high == 0
    # Deterministic for a seed.
    again = spearman_difference(good, weak, human, n_resamples=500)
    assert (again.ci_low, again.ci_high) == (d.ci_low, d.ci_high)


def test_spearman_difference_of_two_equally_good_metrics_straddles_zero():
    from scorer.evidence.agreement import spearman_difference

    rng = np.random.default_rng(4)
    human = rng.normal(size=400)
    a = human + rng.normal(size=400)
    b = human + rng.normal(size=400)
    d = spearman_difference(a, b, human, n_resamples=1000)
    assert d.ci_low < 0 < d.ci_high
    assert 0.02 < d.p_not_greater < 0.98


def test_spearman_difference_rejects_bad_input():
    from scorer.evidence.agreement import spearman_difference

    with pytest.raises(InputError, match="scores"):
        spearman_difference([1, 2, 3, 4, 5], [1, 2, 3], [1, 2, 3, 4, 5])
    with pytest.raises(InputError, match="at least 5"):
        spearman_difference([1, 2], [2, 1], [1, 2])
    with pytest.raises(InputError, match="resamples"):
        spearman_difference(range(10), range(10), range(10), n_resamples=5)
    with pytest.raises(InputError, match="finite"):
        spearman_difference([1, 2, 3, 4, float("nan")], range(5), range(5))
