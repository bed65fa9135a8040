"""String accuracies: Bangalore et al. (2000) section 3.1, example (2) and Table 1."""

import random

import pytest
from examples import TABLE1_HYP, TABLE1_REF

from features.accuracy import EditCounts, align


def test_table1_simple_string_accuracy():
    counts = align(TABLE1_REF.split(), TABLE1_HYP.split()).counts
    # Table 1, first column: S=1, I=2, D=2, 5 problems, score 0.44 (R = 9 tokens).
    assert (counts.substitutions, counts.insertions, counts.deletions) == (1, 2, 2)
    assert counts.ref_len == 9
    assert counts.simple_accuracy == pytest.approx(1 - 5 / 9)
    assert round(counts.simple_accuracy, 2) == 0.44


def test_table1_generation_string_accuracy():
    counts = align(TABLE1_REF.split(), TABLE1_HYP.split()).counts
    # Table 1, second column: one move ("no"), S=1, I'=1, D'=1: 4 problems, score 0.56.
    assert (counts.moves, counts.substitutions, counts.move_insertions, counts.move_deletions) == (
        1,
        1,
        1,
        1,
    )
    assert counts.generation_problems == 4
    assert round(counts.generation_accuracy, 2) == 0.56


def test_alignment_is_the_papers_example_2():
    a = align(TABLE1_REF.split(), TABLE1_HYP.split())
    # Example (2): d d on "no cost", i on "phase" before "the", i then s at the end.
    assert [op for op, *_ in a.ops] == ["=", "=", "d", "d", "=", "=", "i", "=", "=", "i", "s"]
    assert [a.reference[i] for i, _ in a.moves] == ["no"]
    subs = [(a.reference[i], a.hypothesis[j]) for op, i, j in a.ops if op == "s"]
    assert subs == [("phase", "cost")]


def test_substitution_is_cheaper_than_insertion_plus_deletion():
    c = align(["a", "b", "c"], ["a", "x", "c"]).counts
    assert (c.substitutions, c.insertions, c.deletions) == (1, 0, 0)


def test_a_permutation_is_read_as_a_move_not_substitutions():
    c = align(["a", "b", "c", "d"], ["b", "c", "d", "a"]).counts
    assert (c.moves, c.substitutions, c.move_insertions, c.move_deletions) == (1, 0, 0, 0)
    assert c.simple_accuracy == pytest.approx(0.5)
    assert c.generation_accuracy == pytest.approx(0.75)


def test_repeated_words_pair_occurrences_once_each():
    # "the" occurs twice on both sides: swapping the nouns is two substitutions, no move.
    c = align(["the", "cat", "saw", "the", "dog"], ["the", "dog", "saw", "the", "cat"]).counts
    assert (c.substitutions, c.insertions, c.deletions, c.moves) == (2, 0, 0, 0)
    # A doubled word is one insertion; it cannot be a move, nothing was deleted.
    c = align(["a", "b", "a", "c"], ["a", "a", "b", "a", "c"]).counts
    assert (c.insertions, c.deletions, c.moves) == (1, 0, 0)
    # A repeated word moved: one deletion and one insertion of "a" make one move.
    c = align(["a", "b", "a", "c"], ["a", "a", "b", "c"]).counts
    assert (c.insertions, c.deletions, c.moves) == (1, 1, 1)
    assert c.generation_accuracy == pytest.approx(0.75)


def test_empty_hypothesis_deletes_everything():
    c = align(TABLE1_REF.split(), []).counts
    assert c.deletions == 9 and c.insertions == c.substitutions == 0
    assert c.simple_accuracy == 0.0 and c.generation_accuracy == 0.0


def test_longer_hypothesis_goes_negative():
    c = align(["a", "b"], ["x", "y", "z", "w", "a", "b"]).counts
    assert c.insertions == 4
    assert c.simple_accuracy == pytest.approx(1 - 4 / 2)


def test_metric_is_symmetric_in_its_problem_count():
    # Footnote 4: "the metric is symmetric" (insertions and deletions trade places).
    ab = align(TABLE1_REF.split(), TABLE1_HYP.split()).counts
    ba = align(TABLE1_HYP.split(), TABLE1_REF.split()).counts
    assert ab.simple_problems == ba.simple_problems
    assert (ab.insertions, ab.deletions) == (ba.deletions, ba.insertions)


def test_never_above_one_and_counts_add_up():
    rng = random.Random(7)
    vocab = ["a", "b", "c", "d", "e", "f", "the", "of"]
    for _ in range(300):
        ref = [rng.choice(vocab) for _ in range(rng.randint(1, 12))]
        hyp = [rng.choice(vocab) for _ in range(rng.randint(0, 14))]
        c = align(ref, hyp).counts
        assert c.simple_accuracy <= 1.0 and c.generation_accuracy <= 1.0
        assert c.unchanged + c.substitutions + c.deletions == len(ref)
        assert c.unchanged + c.substitutions + c.insertions == len(hyp)
        assert c.generation_problems <= c.simple_problems
        assert (c.simple_accuracy == 1.0) == (ref == hyp)


def test_counts_add():
    a = EditCounts(unchanged=1, substitutions=2, ref_len=3)
    assert (a + a) == EditCounts(unchanged=2, substitutions=4, ref_len=6)
