"""Paired approximate randomization and bootstrap (Riezler & Maxwell 2005) on real statistics."""

from __future__ import annotations

import numpy as np
import pytest

from features.accuracy import Bleu
from scorer.errors import InputError
from scorer.evidence.significance import (
    all_pairs,
    paired_approximate_randomization,
    paired_bootstrap,
    rank_sum_all_pairs,
    sacrebleu_paired,
)

WORDS = "the cat sat on a mat with one dog and a small bird near it".split()


def _corpus(seed: int, n: int = 150):
    """References, a good system (mostly copies) and a weak one (mostly random words)."""
    rng = np.random.default_rng(seed)
    refs = [[" ".join(rng.choice(WORDS, 9))] for _ in range(n)]
    good = [r[0] if rng.random() < 0.7 else " ".join(rng.choice(WORDS, 9)) for r in refs]
    weak = [r[0] if rng.random() < 0.3 else " ".join(rng.choice(WORDS, 9)) for r in refs]
    return refs, good, weak


@pytest.mark.parametrize("test", [paired_approximate_randomization, paired_bootstrap])
def test_identical_systems_get_p_one(test):
    scores = np.random.default_rng(0).normal(size=300)
    result = test(scores, scores.copy(), n_trials=2000, seed=3)
    assert result.p_value == 1.0
    assert result.difference == 0.0


@pytest.mark.parametrize("test", [paired_approximate_randomization, paired_bootstrap])
def test_a_clearly_better_system_is_significant(test):
    rng = np.random.default_rng(1)
    base = rng.normal(size=400)
    better = base + 0.3 + rng.normal(scale=0.5, size=400)
    result = test(better, base, n_trials=2000, seed=3)
    assert result.p_value < 0.01
    assert result.score_a > result.score_b


def test_bleu_rows_clearly_better_system_and_sacrebleu_agrees():
    refs, good, weak = _corpus(2)
    bleu = Bleu()
    ours = paired_approximate_randomization(
        bleu.corpus_stats(good, refs),
        bleu.corpus_stats(weak, refs),
        bleu.from_stats,
        n_trials=1000,
        seed=11,
    )
    theirs = sacrebleu_paired(good, weak, refs, "bleu", n_trials=1000, seed=11)
    assert ours.p_value < 0.01
    # Same seed, same swap matrix (mirrored), same statistics: the same p-value exactly.
    assert ours.p_value == theirs.p_value
    assert ours.score_a == pytest.approx(theirs.score_a)
    assert ours.score_b == pytest.approx(theirs.score_b)


def test_bootstrap_absolute_matches_sacrebleu_bootstrap():
    refs, good, weak = _corpus(4)
    bleu = Bleu()
    a, b = bleu.corpus_stats(good, refs), bleu.corpus_stats(weak, refs)
    # Not a close pair: make them nearer so the p-value is not at its floor.
    near = [g if i % 3 else w for i, (g, w) in enumerate(zip(good, weak, strict=True))]
    c = bleu.corpus_stats(near, refs)
    ours = paired_bootstrap(a, c, bleu.from_stats, n_trials=500, seed=5, statistic="absolute")
    theirs = sacrebleu_paired(good, near, refs, "bleu", test="bootstrap", n_trials=500, seed=5)
    assert ours.p_value == pytest.approx(theirs.p_value)
    assert paired_bootstrap(a, b, bleu.from_stats, n_trials=500, seed=5).p_value < 0.01


@pytest.mark.parametrize("test", [paired_approximate_randomization, paired_bootstrap])
def test_type_one_error_stays_near_nominal(test):
    """Equivalent systems (the same score distribution, paired): about 5% of p-values <= 0.05."""
    rng = np.random.default_rng(2024)
    n_draws, rejections = 400, 0
    for draw in range(n_draws):
        item = rng.normal(size=100)  # shared input difficulty: the pairing matters
        a = item + rng.normal(size=100)
        b = item + rng.normal(size=100)
        rejections += test(a, b, n_trials=400, seed=draw + 1).p_value <= 0.05
    rate = rejections / n_draws
    # Binomial(400, 0.05) has sd 0.011: this band is about +-3.5 sd.
    assert 0.012 <= rate <= 0.09, rate


def test_seeded_results_reproduce_and_seed_is_reported():
    rng = np.random.default_rng(5)
    a, b = rng.normal(size=200), rng.normal(size=200) + 0.1
    r1 = paired_approximate_randomization(a, b, n_trials=500, seed=42)
    r2 = paired_approximate_randomization(a, b, n_trials=500, seed=42)
    assert r1 == r2
    assert r1.seed == 42 and r1.n_trials == 500
    assert (r1.p_value * 501) % 1 == pytest.approx(0, abs=1e-9)  # p = (c + 1) / (R + 1)


def test_all_pairs_corrections_and_experimentwise_error():
    rng = np.random.default_rng(6)
    base = rng.normal(size=300)
    systems = {
        "a": base + rng.normal(scale=0.3, size=300),
        "b": base + rng.normal(scale=0.3, size=300),
        "c": base + 0.5 + rng.normal(scale=0.3, size=300),
    }
    res = all_pairs(systems, test="ar", n_trials=1000, seed=9, alpha=0.05)
    assert [(c.a, c.b) for c in res.comparisons] == [("a", "b"), ("a", "c"), ("b", "c")]
    p = np.array([c.p_value for c in res.comparisons])
    assert [c.p_bonferroni for c in res.comparisons] == pytest.approx(np.minimum(1, 3 * p))
    order = np.argsort(p)  # Holm: step-down multipliers 3, 2, 1, made monotone
    holm = np.maximum.accumulate(np.minimum(1, p[order] * np.array([3, 2, 1])))
    assert np.array([c.p_holm for c in res.comparisons])[order] == pytest.approx(holm)
    assert res.experimentwise_error == pytest.approx(1 - 0.95**3)
    assert {(c.a, c.b) for c in res.significant("holm")} == {("a", "c"), ("b", "c")}


def test_mismatched_systems_are_refused():
    with pytest.raises(InputError, match="one shape"):
        paired_approximate_randomization(np.ones(5), np.ones(6))
    with pytest.raises(InputError, match="seed"):
        paired_bootstrap(np.ones(5), np.ones(5), seed=None)


def test_rank_sum_is_bonferroni_corrected():
    rows = rank_sum_all_pairs({"x": [1, 2, 3, 4, 5], "y": [6, 7, 8, 9, 10], "z": [1, 3, 5, 7, 9]})
    for row in rows:
        assert row["p_bonferroni"] == pytest.approx(min(1.0, 3 * row["p_value"]))
    assert rows[0]["p_value"] < 0.05  # 1..5 against 6..10: exact two-sided p = 2/252
