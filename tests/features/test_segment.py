"""Texts into sentences at the writer's own sentence-final punctuation, and values folded back."""

from __future__ import annotations

import numpy as np
import pytest

from features.segment import segment, split_sentences


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "The bank said profit rose. It expects more.",
            ["The bank said profit rose.", "It expects more."],
        ),
        ("Is it? Yes! Surely.", ["Is it?", "Yes!", "Surely."]),
        # Abbreviations and initials are tokens of their own: no split inside them.
        (
            "Mr. Smith went to the U.S. in 1990. He stayed.",
            ["Mr. Smith went to the U.S. in 1990.", "He stayed."],
        ),
        ("1950 da is carl a. wirtanen.", ["1950 da is carl a. wirtanen."]),
        # WebNLG-style lower-cased, tokenised output.
        (
            "the club is in rome . it was founded in 1900 .",
            ["the club is in rome .", "it was founded in 1900 ."],
        ),
        ("No punctuation at all", ["No punctuation at all"]),
        # Pieces with no word join a neighbour instead of becoming sentences of their own.
        ("It fell. . .", ["It fell. . ."]),
        ("... Then it rose.", ["... Then it rose."]),
        ("  It rose.   It fell.  ", ["It rose.", "It fell."]),
    ],
)
def test_split_sentences_at_final_punctuation(text, expected):
    assert [s for s, _ in split_sentences(text)] == expected


def test_every_piece_is_a_substring_with_a_token_count():
    text = "Shares fell 3%. The index, however, closed higher on Friday."
    parts = split_sentences(text)
    assert [n for _, n in parts] == [5, 10]  # Shares fell 3 % .  The index , however , ...
    assert all(s in text for s, _ in parts)


def test_odd_input_is_one_sentence_never_nothing():
    for text in [".", "\u200b\u0007", "😀😀", "x"]:
        parts = split_sentences(text)
        assert len(parts) == 1 and parts[0][1] >= 1


def test_segmentation_shares_sentences_and_weights_by_tokens():
    seg = segment(
        ["Prices rose sharply. Sales fell.", "Sales fell.", "Prices rose sharply. Sales fell."]
    )
    assert seg.sentences == ["Prices rose sharply.", "Sales fell."]
    assert [list(i) for i in seg.index] == [[0, 1], [1], [0, 1]]
    np.testing.assert_allclose(seg.weights[0], [4 / 7, 3 / 7])
    np.testing.assert_allclose(seg.mean([1.0, 8.0]), [(4 + 24) / 7, 8.0, (4 + 24) / 7])
    rows = seg.mean_rows([{"x": 1.0, "y": 0.0}, {"x": 8.0, "y": 7.0}])
    assert rows[1] == {"x": 8.0, "y": 7.0}
    assert rows[0] == pytest.approx({"x": 4.0, "y": 3.0})


def test_whole_texts_when_not_by_sentence():
    seg = segment(["Prices rose sharply. Sales fell."], by_sentence=False)
    assert seg.sentences == ["Prices rose sharply. Sales fell."]


def test_the_one_sentence_shortcut_agrees_with_the_sentencizer():
    from features.segment import _sentencizer_split, _surely_one_sentence

    texts = [
        "The company said profits rose in the first quarter.",
        "profits the quarter in rose said first company The",
        '"It rose," he said."',
        "It rose (sharply).",
        "It rose!?",
        "  padded text .  ",
        "It fell. . .",
        "\u200b\u0007",
        ".",
        "Prices rose 5% to $10.",
        "the club is in rome",
        "Was it? No",  # not taken: a split is possible
        "Mr. Smith left",  # not taken: a full stop inside
    ]
    taken = [t for t in texts if _surely_one_sentence(t)]
    assert "Was it? No" not in taken and "Mr. Smith left" not in taken
    assert len(taken) == len(texts) - 2
    for text in taken:
        pieces = _sentencizer_split(text)
        assert [p for p, _ in pieces] == [s for s, _ in split_sentences(text)] == [text.strip()]


def test_the_shortcut_reads_the_sentencizers_own_sentence_ends():
    # Read from spaCy's class, not from a pipeline built for it: they must be the same set.
    from features.segment import _sentence_ends, _sentencizer

    assert _sentence_ends() == frozenset(_sentencizer().get_pipe("sentencizer").punct_chars)
    assert {".", "!", "?", "\u3002"} <= _sentence_ends()
