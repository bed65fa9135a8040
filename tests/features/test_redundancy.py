"""What a text says again (`features.redundancy`): the share of its 3-grams said before, the
share of its sentences that repeat an earlier one, and where the repeated stretches stand."""

from __future__ import annotations

import pytest

from features.redundancy import redundancy, said_again, said_again_spans, sentences_again

SENTENCE = "The company said its net profit rose 12 percent in the third quarter."


def test_a_text_that_never_repeats_itself_says_nothing_again():
    assert said_again(SENTENCE) == 0.0
    assert said_again("Too short.") == 0.0
    assert redundancy(SENTENCE) == {"said_again": 0.0, "sentences_again": 0.0}


@pytest.mark.parametrize("times", [2, 4, 8])
def test_a_sentence_said_over_counts_every_3gram_after_the_first_saying(times):
    text = " ".join([SENTENCE] * times)
    words = 13  # in SENTENCE: 11 3-grams of its own, 2 more across each junction
    grams = words * times - 2
    new = 11 + 2  # the sentence's own 3-grams and the two across the first junction
    assert said_again(text) == pytest.approx((grams - new) / grams)
    assert redundancy(text)["sentences_again"] == pytest.approx((times - 1) / times)


def test_case_and_punctuation_do_not_hide_a_repetition():
    assert said_again("Profit rose sharply. PROFIT, rose sharply!") == pytest.approx(1 / 4)


def test_a_nearly_repeated_sentence_counts_an_unrelated_one_does_not():
    first = "Shares of the bank rose five percent in early trading on Monday."
    near = "Shares of the bank rose five percent in early trading on Tuesday."
    other = "Analysts said the merger would close before the end of the year."
    assert sentences_again([first, near]) == 0.5
    assert sentences_again([first, other]) == 0.0
    assert sentences_again([first]) == 0.0


def test_spans_cover_the_words_said_again_in_the_text_as_given():
    text = "Profit rose in March. Sales fell. Profit rose in March."
    spans = said_again_spans(text)
    assert [text[a:b] for a, b in spans] == ["Profit rose in March"]
    assert spans[0][0] == text.rindex("Profit")
    assert said_again_spans(SENTENCE) == []
