"""Tree accuracies (section 3.2) and the two regression metrics (section 4.2)."""

import pytest
from examples import TABLE1_HEADS, TABLE1_HYP, TABLE1_REF

from features import Sentence, parse
from features.accuracy import (
    compare,
    quality_accuracy,
    tree_counts,
    treelets,
    understandability_accuracy,
)


@pytest.fixture
def paper_tree() -> Sentence:
    return Sentence.from_heads(TABLE1_REF.split(), TABLE1_HEADS)


def test_treelets_of_the_papers_tree(paper_tree):
    words = sorted(tuple(paper_tree.tokens[i] for i in t) for t in treelets(paper_tree))
    assert words == [
        ("There", "was", "no", "cost", "estimate", "for"),
        ("for", "phase"),
        ("the", "second", "phase"),
    ]


def test_table1_simple_tree_accuracy(paper_tree):
    c = tree_counts(TABLE1_HYP.split(), paper_tree)
    # Table 1, third column: S=0, I=3, D=3, 6 problems, 0.33.
    assert (c.substitutions, c.insertions, c.deletions) == (0, 3, 3)
    assert c.simple_accuracy == pytest.approx(1 - 6 / 9)
    assert round(c.simple_accuracy, 2) == 0.33


def test_table1_generation_tree_accuracy(paper_tree):
    c = tree_counts(TABLE1_HYP.split(), paper_tree)
    # Table 1, fourth column: M=3, nothing else, 0.67.
    assert (c.moves, c.substitutions, c.move_insertions, c.move_deletions) == (3, 0, 0, 0)
    assert round(c.generation_accuracy, 2) == 0.67


def test_table1_through_spacys_parse_of_the_reference():
    # spaCy roots the sentence at "was", not "estimate", but the moved words stay inside the
    # same treelets, so the counts are the paper's.
    tree = parse([TABLE1_REF])[0]
    c = tree_counts(TABLE1_HYP.split(), tree)
    assert (c.insertions, c.deletions, c.moves) == (3, 3, 3)


def test_projective_scramble_beats_non_projective(paper_tree):
    # Section 3.2: "estimate for phase the second" reads off the tree without breaking
    # projectivity; "estimate phase for the second" does not, and must score lower.
    base = "There was no cost"
    good = tree_counts(f"{base} estimate for phase the second".split(), paper_tree)
    bad = tree_counts(f"{base} estimate phase for the second".split(), paper_tree)
    assert good.generation_accuracy > bad.generation_accuracy


def test_substituted_word_takes_its_place_in_the_treelet(paper_tree):
    c = tree_counts("There was no cost estimate for the third phase".split(" "), paper_tree)
    assert (c.substitutions, c.insertions, c.deletions) == (1, 0, 0)


def test_inserted_word_counts_once(paper_tree):
    hyp = "There was no cost estimate for the very second phase"
    c = tree_counts(hyp.split(" "), paper_tree)
    assert (c.insertions, c.deletions, c.substitutions) == (1, 0, 0)


def test_one_word_reference_is_a_treelet():
    tree = Sentence.from_heads(["Yes"], [0])
    assert tree_counts(["Yes"], tree).simple_accuracy == 1.0
    assert tree_counts(["No"], tree).simple_accuracy == 0.0


def test_empty_hypothesis_and_perfect_hypothesis(paper_tree):
    assert tree_counts(TABLE1_REF.split(), paper_tree).simple_accuracy == 1.0
    empty = tree_counts([], paper_tree)
    assert empty.simple_accuracy < 0.0  # non-leaf words are deleted from two treelets
    assert empty.insertions == 0


def test_understandability_and_quality_of_a_perfect_sentence_is_one(paper_tree):
    # Section 4.2: dividing by 0.8689 and 0.6639 makes a perfect sentence score 1.
    c = compare(TABLE1_REF.split(), paper_tree)
    assert c.understandability_accuracy == pytest.approx(1.0)
    assert c.quality_accuracy == pytest.approx(1.0)


def test_understandability_and_quality_of_table1(paper_tree):
    c = compare(TABLE1_HYP.split(), paper_tree)
    # Equations (4) and (5) with simple tree accuracy 1/3 and S = 1 (string substitutions).
    assert c.understandability_accuracy == pytest.approx((1.3147 / 3 - 0.1039 - 0.4458) / 0.8689)
    assert c.quality_accuracy == pytest.approx((1.0192 / 3 - 0.0869 - 0.3553) / 0.6639)
    assert understandability_accuracy(1.0, 1) < 1.0
    assert quality_accuracy(0.5, 0) < quality_accuracy(1.0, 0)
