"""spaCy dependency signals, and the confidence-recording parser that feeds them."""

import math
import random

import numpy as np
import pytest
import spacy

from features import parse
from features.extract import extract
from features.parsing import load_nlp
from features.spacy_parse import NAMES, crossing_arcs

REAL = [
    "The company said it expected profits to rise in the second half of the year.",
    "Shares of the bank fell sharply after the announcement on Tuesday.",
    "The government will announce new measures to support farmers next week.",
    "Analysts said the merger would create the largest steel producer in Europe.",
    "Oil prices rose for a third day as supplies tightened.",
    "The central bank left interest rates unchanged at its meeting.",
    "She told reporters that the talks had made good progress.",
    "Exports of wheat and corn increased by ten percent last month.",
]


def _shuffled(text: str, seed: int) -> str:
    words = text.rstrip(".").split()
    random.Random(seed).shuffle(words)
    return " ".join(words)


@pytest.fixture(scope="module")
def plain_nlp():
    """spaCy's own pipeline, untouched: the reference for the parse."""
    return spacy.load(load_nlp().meta["lang"] + "_" + load_nlp().meta["name"], exclude=["ner"])


def test_confidence_parser_gives_spacys_own_parse(plain_nlp):
    texts = REAL + [_shuffled(t, i) for i, t in enumerate(REAL)] + ["a", "Der Hund bellt laut."]
    ours = parse(texts)
    for sent, doc in zip(ours, plain_nlp.pipe(texts), strict=True):
        assert sent.tokens == tuple(t.text for t in doc)
        assert sent.heads == tuple(t.head.i for t in doc)
        assert sent.deps == tuple(t.dep_ for t in doc)
        # Arc-eager shifts every word once; spaCy's variant may also re-push ("unshift") and
        # split sentences, so a bound of 4n, not 2n. Each value is a log-probability.
        assert len(doc) <= len(sent.transition_logprobs) <= 4 * len(doc)
        assert all(lp <= 1e-9 and math.isfinite(lp) for lp in sent.transition_logprobs)


def test_without_confidence_the_parse_is_the_same():
    with_lp, without = parse(REAL), parse(REAL, confidence=False)
    assert [s.heads for s in with_lp] == [s.heads for s in without]
    assert all(s.transition_logprobs == () for s in without)


def test_real_sentences_look_better_than_their_shuffles():
    real = extract(parse(REAL), ["spacy.v1"])
    shuffled = extract(parse([_shuffled(t, i) for i, t in enumerate(REAL)]), ["spacy.v1"])

    def mean(rows, name):
        return np.mean([r[f"spacy.v1/{name}"] for r in rows])

    assert mean(real, "logprob_mean") > mean(shuffled, "logprob_mean")
    assert mean(real, "unsure_move_ratio") < mean(shuffled, "unsure_move_ratio")
    assert mean(real, "extra_roots") < mean(shuffled, "extra_roots")
    assert mean(real, "root_is_verb") >= mean(shuffled, "root_is_verb")


def test_crossing_arcs():
    # 0->2, 1->3 cross (0 < 1 < 2 < 3); root 2 points to itself.
    assert crossing_arcs([2, 3, 2, 2]) == 2
    assert crossing_arcs([1, 1, 1]) == 0  # projective
    assert crossing_arcs([0]) == 0


@pytest.mark.parametrize(
    "text",
    ["", "   ", "a", "word " * 500, "\x00\x07 hello \u200b world \ufeff", "Der Hund bellt laut."],
)
def test_bad_input_gives_finite_values(text):
    (row,) = extract(parse([text]), ["spacy.v1"])
    assert set(row) == {f"spacy.v1/{n}" for n in NAMES}
    assert all(math.isfinite(v) for v in row.values())
