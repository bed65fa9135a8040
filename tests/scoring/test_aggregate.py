"""How a text of several sentences becomes one score: the folds of `features.segment`, the
choice `score_texts` makes, and, on the shipped model, that two correct sentences score at
least as high as their run-on."""

from __future__ import annotations

import numpy as np
import pytest

from features.segment import AGGREGATES, DEFAULT_AGGREGATE, resolve_aggregate, segment
from scorer.errors import InputError


def test_every_fold_of_two_sentences_and_one():
    seg = segment(["Prices rose sharply. Sales fell.", "Sales fell."])
    values = [1.0, 8.0]  # "Prices rose sharply." (4 tokens), "Sales fell." (3 tokens)
    np.testing.assert_allclose(seg.aggregate(values, "weighted"), [(4 + 24) / 7, 8.0])
    np.testing.assert_allclose(seg.aggregate(values, "mean"), [4.5, 8.0])
    np.testing.assert_allclose(seg.aggregate(values, "min"), [1.0, 8.0])
    rows = [{"x": 1.0}, {"x": 8.0}]
    assert seg.aggregate_rows(rows, "min", values) == [{"x": 1.0}, {"x": 8.0}]
    assert seg.aggregate_rows(rows, "mean")[0] == pytest.approx({"x": 4.5})
    with pytest.raises(InputError, match="min"):
        seg.aggregate_rows(rows, "min")


def test_unknown_aggregate_is_refused_with_the_choices():
    with pytest.raises(InputError, match="weighted"):
        resolve_aggregate(aggregate="median")
    with pytest.raises(InputError, match="weighted"):
        segment(["A b."]).aggregate([1.0], "median")


def test_explicit_choices_win_over_the_default():
    assert resolve_aggregate() == DEFAULT_AGGREGATE in AGGREGATES
    assert resolve_aggregate(by_sentence=True) == "weighted"
    assert resolve_aggregate(by_sentence=False) == "whole"
    assert resolve_aggregate(by_sentence=False, aggregate="min") == "min"


# Two correct sentences and the same words run on as one (a comma splice or a missing stop).
PAIRS = [
    (
        "The bank cut its rates. Shares rose sharply in early trading.",
        "The bank cut its rates shares rose sharply in early trading.",
    ),
    (
        "The company reported a loss. Its shares fell five percent.",
        "The company reported a loss its shares fell five percent.",
    ),
    (
        "Oil prices rose on Monday. Traders expect further gains this week.",
        "Oil prices rose on Monday traders expect further gains this week.",
    ),
    (
        "The Golden Palace is a coffee shop. It is located in the city centre.",
        "The Golden Palace is a coffee shop it is located in the city centre.",
    ),
    (
        "The board met on Tuesday. It approved a new dividend.",
        "The board met on Tuesday, it approved a new dividend.",
    ),
]


@pytest.fixture(scope="module")
def default():
    from scorer.scoring import load_scorer

    return load_scorer("default")


def test_two_fluent_sentences_score_at_least_as_high_as_their_run_on(default):
    scores = default.score([t for pair in PAIRS for t in pair])
    for (two, run_on), s_two, s_run in zip(PAIRS, scores[0::2], scores[1::2], strict=True):
        assert s_two >= s_run, (two, s_two, run_on, s_run)


def test_a_single_sentence_scores_the_same_under_every_aggregate(default):
    text = ["The company said its profit rose sharply in the first quarter."]
    scores = {how: default.score(text, aggregate=how)[0] for how in AGGREGATES}
    assert max(scores.values()) - min(scores.values()) < 1e-9


def test_features_of_a_split_text_come_with_its_sentence_count(default):
    (scored,) = default.score_texts([PAIRS[0][0]], with_features=True)
    assert scored.n_sentences == (1 if DEFAULT_AGGREGATE == "whole" else 2)
    assert "surface.v2/n_tokens" in scored.features


@pytest.mark.parametrize("text", ["", "  \n", "\u200b\u200b\ufeff", "\u200d \u2060"])
def test_invisible_only_text_is_refused_like_empty_text(text):
    from scorer.errors import InputError
    from scorer.limits import check_texts, is_blank

    assert is_blank(text)
    with pytest.raises(InputError, match="nothing to score"):
        check_texts(["Hello there.", text])
    assert not is_blank("\u200bHi")
