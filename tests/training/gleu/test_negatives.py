"""One-error negatives on real spaCy parses: each kind makes the error it names, and refuses a
sentence that has no place for it."""

from __future__ import annotations

import random

import pytest

from features.parsing import parse
from scorer.errors import InputError
from training.gleu.negatives import ALL_ERROR_KINDS, inject_error, inject_errors

TEXT = "The central bank raised its main interest rate by half a point on Thursday."


def _tokens(text: str) -> list[str]:
    from features.parsing import load_nlp

    return [t.text_with_ws for t in load_nlp()(text)]


def test_truncate_cuts_the_sentence_and_ends_it_with_a_full_stop():
    tokens = _tokens(TEXT)
    for seed in range(20):
        out = inject_error(tokens, "truncate", random.Random(seed))
        words, original = out.rstrip(".").split(), TEXT.rstrip(".").split()
        assert out.endswith(".") and not out.endswith(" .") and not out.endswith(",.")
        assert 0.4 * len(tokens) - 1 <= len(words) <= 0.8 * len(tokens)
        assert words == original[: len(words)]
    assert inject_error(_tokens("Prices rose."), "truncate", random.Random(0)) is None


def test_drop_verb_deletes_the_root_verb_only():
    (parsed,) = parse([TEXT])
    assert parsed.tokens[parsed.deps.index("ROOT")] == "raised"
    out = inject_error(
        _tokens(TEXT), "drop_verb", random.Random(0), tags=parsed.tags, deps=parsed.deps
    )
    assert out == TEXT.replace("raised ", "")
    (noun_phrase,) = parse(["The central bank of the small country."])  # root is a noun
    none = inject_error(
        _tokens(noun_phrase.text),
        "drop_verb",
        random.Random(0),
        tags=noun_phrase.tags,
        deps=noun_phrase.deps,
    )
    assert none is None
    with pytest.raises(InputError, match="needs the sentence's tags"):
        inject_error(_tokens(TEXT), "drop_verb", random.Random(0))


def test_inject_errors_cycles_every_kind_with_the_parse_it_needs():
    sentences = [_tokens(TEXT)] * len(ALL_ERROR_KINDS)
    made = inject_errors(sentences, ALL_ERROR_KINDS, seed=3)
    assert [kind for _, kind in made] == list(ALL_ERROR_KINDS)
    assert all(text != TEXT for text, _ in made)
    with pytest.raises(InputError, match="unknown error kind"):
        inject_error(_tokens(TEXT), "scramble", random.Random(0))


def test_noise_replaces_words_by_symbols_and_ranks_below_word_salad():
    from training.gleu.svm import level

    tokens = _tokens(TEXT)
    words = [t.strip() for t in tokens if any(c.isalpha() for c in t)]
    for seed in range(10):
        out = inject_error(tokens, "noise", random.Random(seed))
        kept = [w for w in out.split() if w.strip(".") in words]
        assert len(kept) <= 0.7 * len(words) + 1
        assert len(out.split()) == len(TEXT.split())  # words replaced, not added
    assert level("noise") < level("l=1") < level("swap") < level("real")


def _with_share(**share):
    """A small dataset made twice, plainly and with one `make_dataset` share option; the
    kinds of the texts the option changed."""
    from training.gleu.svm import make_dataset

    rng = random.Random(5)
    words = ["The", "bank", "said", "Prices", "rose", "in", "London", "and", "Paris", "today"]
    corpus = [[w + " " for w in rng.sample(words, 7)] + ["."] for _ in range(400)]
    plain, labels, kinds = make_dataset(corpus, n_positive=200, error_kinds=(), seed=3)
    changed_texts, labels2, kinds2 = make_dataset(
        corpus, n_positive=200, error_kinds=(), seed=3, **share
    )
    assert (labels2, kinds2) == (labels, kinds)
    changed = [k for a, b, k in zip(plain, changed_texts, kinds, strict=True) if a != b]
    return plain, changed_texts, kinds, changed


def test_lowercase_share_lowers_every_kind_alike():
    """`make_dataset(lowercase_share=...)` lower-cases about that share of the texts, drawn
    across all kinds, so case says nothing about the level; the kinds and labels stay."""
    from collections import Counter

    plain, lowered, kinds, changed = _with_share(lowercase_share=0.5)
    assert all(b in (a, a.lower()) for a, b in zip(plain, lowered, strict=True))
    assert 0.4 < len(changed) / len(plain) < 0.6
    share = Counter(changed)
    assert 0.3 < share["real"] / kinds.count("real") < 0.7  # real and generated alike
    assert 0.3 < (len(changed) - share["real"]) / (len(kinds) - kinds.count("real")) < 0.7


def test_bare_share_takes_the_final_punctuation_of_every_kind_alike():
    from collections import Counter

    plain, bare, kinds, changed = _with_share(bare_share=0.5)
    pairs = zip(plain, bare, strict=True)
    assert all(b == a or (a.startswith(b) and not b.endswith(".")) for a, b in pairs)
    assert 0.4 < len(changed) / len(plain) < 0.6
    share = Counter(changed)
    assert 0.3 < share["real"] / kinds.count("real") < 0.7  # real and generated alike


def test_fragment_keeps_one_to_four_consecutive_words_and_no_full_stop():
    # A generator that emits a stub ("null", "carl a. wirtanen discoverer"): a run of 1-4 words
    # of the sentence, nothing else, no final punctuation.
    tokens = _tokens(TEXT)
    original = TEXT.rstrip(".").split()
    sizes = set()
    for seed in range(30):
        out = inject_error(tokens, "fragment", random.Random(seed))
        words = out.split()
        assert 1 <= len(words) <= 4 and out == out.strip() and not out.endswith(".")
        starts = [i for i in range(len(original)) if original[i : i + len(words)] == words]
        assert starts, out
        sizes.add(len(words))
    assert sizes == {1, 2, 3, 4}
    assert inject_error(_tokens("Yes."), "fragment", random.Random(0)) is None


def test_binary_levels_tie_every_generated_kind_below_real():
    from training.gleu.svm import level

    kinds = ["l=1", "l=8", "swap", "noise", "fragment"]
    assert {level(k, "binary") for k in kinds} == {0.0}
    assert level("real", "binary") > 0
    assert level("l=1", "graded") < level("l=8", "graded")  # graded still orders them
    with pytest.raises(ValueError, match="levels"):
        level("real", "ordinal")


def test_repeat_says_a_run_of_words_twice_in_a_row():
    tokens = _tokens(TEXT)
    original = TEXT.replace(".", " .").split()  # the full stop apart, as a token
    sizes = set()
    for seed in range(40):
        out = inject_error(tokens, "repeat", random.Random(seed))
        assert out.endswith("Thursday.") and out.count(".") == 1
        words = out.replace(".", " .").split()
        size = len(words) - len(original)
        assert 2 <= size <= 6
        # removing one copy of the repeated run gives the sentence back
        runs = [
            i
            for i in range(len(original))
            if words[i : i + size] == words[i + size : i + 2 * size]
            and words[: i + size] + words[i + 2 * size :] == original
        ]
        assert runs, words
        sizes.add(size)
    assert len(sizes) >= 4
    assert inject_error(_tokens("Yes, no."), "repeat", random.Random(0)) is None


def test_garbage_puts_symbols_between_intact_words():
    from features.surface import is_junk

    tokens = _tokens(TEXT)
    for seed in range(10):
        out = inject_error(tokens, "garbage", random.Random(seed))
        junk = [w for w in out.split() if is_junk(w)]
        assert 1 <= len(junk) <= 3
        kept = "".join(w for w in out.split() if not is_junk(w))
        assert kept == TEXT.replace(" ", "")  # every word kept, in order
        assert all(is_junk(w) or any(c.isalnum() or c == "." for c in w) for w in out.split())
    assert inject_error(_tokens("Hello"), "garbage", random.Random(0)) is None
