"""spaCy's memory zones around each parse: new words leave the vocabulary as it was, and every
parse (tree, tags, move log-probabilities) and sentence split is what it is without them."""

from __future__ import annotations

import random
import string
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from features.parsing import load_nlp, parse, use_memory_zones
from features.segment import _sentencizer, split_sentences


def new_words(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choices(string.ascii_lowercase, k=9)) for _ in range(n)]


def texts_with_new_words(n: int, seed: int) -> list[str]:
    words = new_words(4 * n, seed)
    return [
        f"The {words[4 * i]} saw {words[4 * i + 1]} near the {words[4 * i + 2]}." for i in range(n)
    ]


@pytest.fixture
def zones() -> Iterator[None]:
    before = use_memory_zones(True)
    yield
    use_memory_zones(before)


@pytest.fixture
def no_zones() -> Iterator[None]:
    before = use_memory_zones(False)
    yield
    use_memory_zones(before)


def test_new_words_leave_the_vocabulary_as_it_was(zones):
    nlp = load_nlp()
    parse(["A first sentence to load the pipeline."], lemmas=False)
    n_strings = len(nlp.vocab.strings)
    texts = texts_with_new_words(30, seed=1)
    parsed = parse(texts, lemmas=False)
    assert len(nlp.vocab.strings) == n_strings
    assert all(w not in nlp.vocab.strings for w in parsed[0].tokens[1:2])
    assert parsed[0].tokens[1] == texts[0].split()[1]  # read before the zone ended


def test_without_zones_the_vocabulary_grows(no_zones):
    nlp = load_nlp()
    n_strings = len(nlp.vocab.strings)
    parse(texts_with_new_words(10, seed=2), lemmas=False)
    assert len(nlp.vocab.strings) >= n_strings + 30


def test_parses_are_the_same_with_and_without_zones():
    texts = [*texts_with_new_words(20, seed=3), "It rained. We stayed in.", "Dogs bark."]
    before = use_memory_zones(True)
    try:
        inside = parse(texts, lemmas=False)
        inside_lemmas = parse(texts)
        use_memory_zones(False)
        outside = parse(texts, lemmas=False)
        outside_lemmas = parse(texts)
    finally:
        use_memory_zones(before)
    assert inside == outside  # tokens, heads, labels, tags and every move's log-probability
    assert inside_lemmas == outside_lemmas
    assert all(s.transition_logprobs for s in inside)


def test_sentence_splits_are_the_same_and_the_splitter_keeps_no_new_word(zones):
    words = new_words(6, seed=4)
    text = f"{words[0]} {words[1]} went home. Then {words[2]} {words[3]} slept! {words[4]}?"
    nlp = _sentencizer()
    split_sentences("Warm. Up.")
    n_strings = len(nlp.vocab.strings)
    inside = split_sentences(text)
    assert len(nlp.vocab.strings) == n_strings
    use_memory_zones(False)
    assert split_sentences(text) == inside
    assert [s for s, _ in inside] == [
        f"{words[0]} {words[1]} went home.",
        f"Then {words[2]} {words[3]} slept!",
        f"{words[4]}?",
    ]


def test_threads_take_turns_in_the_zones(zones):
    # One zone at a time per process: a zone ending in one thread must not free the words of
    # a parse running in another.
    batches = [texts_with_new_words(8, seed=10 + k) for k in range(8)]
    use_memory_zones(False)
    expected = [parse(b, lemmas=False) for b in batches]
    use_memory_zones(True)
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda b: parse(b, lemmas=False), batches))
    assert got == expected
