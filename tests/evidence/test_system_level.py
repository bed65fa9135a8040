"""System-level agreement against examples computed by hand, and the benchmark's system view."""

import math

import numpy as np
import pytest

from scorer.evidence.system_level import (
    SystemDraws,
    pairwise_accuracy,
    skip_reason,
    system_agreement,
    system_means,
)

# Three systems answering four inputs. People: A 3.0, B 2.0, C 1.25 (A > B > C); the metric:
# A 0.9, B 0.2, C 0.5 (A > C > B). Of the three pairs, A-B and A-C are ordered as people order
# them, B-C is not: accuracy 2/3. Ranks of the means: people (3, 2, 1), metric (3, 1, 2):
# d = (0, 1, 1), rho = 1 - 6 * 2 / (3 * 8) = 0.5.
SYSTEMS = ["A"] * 4 + ["B"] * 4 + ["C"] * 4
GROUPS = ["g1", "g2", "g3", "g4"] * 3
HUMAN = np.array([3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 2], dtype=float)
METRIC = np.array([0.8, 1.0, 0.9, 0.9, 0.1, 0.3, 0.2, 0.2, 0.5, 0.4, 0.6, 0.5])


def test_three_systems_by_hand():
    assert system_means(HUMAN, SYSTEMS) == {"A": 3.0, "B": 2.0, "C": 1.25}
    assert system_means(METRIC, SYSTEMS) == pytest.approx({"A": 0.9, "B": 0.2, "C": 0.5})
    (a,) = system_agreement({"metric": METRIC}, HUMAN, SYSTEMS, GROUPS, n_samples=200).values()
    assert a.n_systems == 3 and a.n_pairs == 3
    assert a.accuracy == pytest.approx(2 / 3)
    assert a.spearman == pytest.approx(0.5)
    low, high = a.accuracy_95
    assert 0 <= low <= high <= 1


def test_pairs_people_rate_equal_are_left_out_and_score_ties_count_one_half():
    # People: A 3, B 2, C 2 (B-C rated equal: left out); scores: A 1, B 0, C 0 (a tie on A-?
    # none; B-C tied but left out) -> 2 of 2. With scores A 0, B 0, C 1: A-B tied (one half),
    # A-C wrong -> 0.5 of 2 pairs.
    assert pairwise_accuracy(np.array([1, 0, 0]), np.array([3, 2, 2])) == (1.0, 2)
    assert pairwise_accuracy(np.array([0, 0, 1]), np.array([3, 2, 2])) == (0.25, 2)
    acc, n = pairwise_accuracy(np.array([1, 2]), np.array([5, 5]))
    assert math.isnan(acc) and n == 0


def test_the_bootstrap_draws_whole_inputs_and_agrees_with_the_point_on_a_full_draw():
    draws = SystemDraws(HUMAN, SYSTEMS, GROUPS, n_samples=50, seed=1)
    # Every draw weighs all of one input's outputs alike: the weight is a function of the group.
    for w in draws.weights:
        for g in set(GROUPS):
            assert len({w[i] for i, x in enumerate(GROUPS) if x == g}) == 1
    accs, rhos = draws.draws(METRIC)
    assert accs.shape == rhos.shape == (50,)
    # A metric that orders the systems as people do is right on every draw.
    accs, _ = draws.draws(HUMAN * 10)
    assert np.nanmin(accs) == 1.0


def test_why_a_file_has_no_system_view():
    assert skip_reason(["", "", ""]) == "its outputs name no system"
    assert skip_reason(["a", "b", "c"]) == "3 systems, fewer than 6"
    assert skip_reason(list("abcdef")) is None
    assert skip_reason(list("abcdef"), not_a_generator="a publication") == "a publication"
