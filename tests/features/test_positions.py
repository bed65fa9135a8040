"""The positions behind feature values (what explanations mark) agree with the values."""

from __future__ import annotations

import pytest

from features.parsing import parse
from features.placeholders import STAND_IN, fill_placeholders, placeholder_spans
from features.resources import Resources
from features.sentence import Sentence
from features.spacy_parse import spacy_signals, tree_roots
from features.surface import repeated_bigrams, surface


@pytest.mark.parametrize(
    ("tokens", "expected"),
    [
        (["the", "the", "cat"], [0]),
        (["a", "b", "a", "b", "a", "b"], [2, 3, 4]),
        (["The", "the", "the"], [0, 1]),
        (["one"], []),
        ([], []),
    ],
)
def test_repeated_bigrams_are_where_the_ratio_counts(tokens, expected):
    assert repeated_bigrams(tokens) == expected
    sentence = Sentence.from_heads(tokens, list(range(len(tokens))))
    (row,) = surface([sentence])
    assert (row["repeat_bigram_ratio"] > 0) == bool(expected)
    assert row["repeat_bigram_ratio"] * max(len(tokens) - 1, 1) >= len(expected)


def test_tree_roots_name_each_fragment():
    sentence = Sentence.from_heads(["a", "b", "c", "d"], [1, 1, 3, 3])
    assert tree_roots(sentence) == [1, 1, 3, 3]
    (row,) = spacy_signals([sentence])
    assert row["extra_roots"] == len(set(tree_roots(sentence))) - 1


def test_placeholder_spans_are_what_fill_replaces():
    text = "X is near X. XBox and X-ray stay; (X) goes."
    spans = placeholder_spans(text, ["X"])
    assert [text[a:b] for a, b in spans] == ["X"] * 3
    rebuilt, pos = [], 0
    for a, b in spans:
        rebuilt += [text[pos:a], STAND_IN]
        pos = b
    assert "".join([*rebuilt, text[pos:]]) == fill_placeholders([text], ["X"])[0]
    assert placeholder_spans(text, []) == []


def test_link_grammar_null_tokens_come_from_the_same_parse():
    from features.linkgrammar import linkgrammar_features, linkgrammar_nulls

    sentences = parse(
        [
            "The company said profits rose in the first quarter.",
            "The dog don't ran away.",
            "The company said profits rose the in first quarter.",
        ],
        lemmas=False,
    )
    resources = Resources()
    pairs = linkgrammar_nulls(sentences, resources)
    assert [row for row, _ in pairs] == linkgrammar_features(sentences, resources)
    (_, whole), (_, one), (_, two) = pairs
    assert whole == []
    assert [sentences[1].tokens[i] for i in one] == ["n't"]
    assert len(two) == 2 and "the" in [sentences[2].tokens[i] for i in two]
