"""Cheap surface signals. The model needs them to discount length in the other features.

`junk_ratio` counts symbols and emoji where words should be. The other signals miss them: Link
Grammar links the symbols as unknown words, spaCy parses them confidently, and SLOR's unigram
term offsets the language model's low probability. `non_alpha_ratio` cannot carry it, since
numbers and punctuation are non-alphabetic too and raters of restaurant and hotel outputs
favour them. With `junk_ratio` and the "garbage" negatives (`training/gleu/negatives.py`) symbol
debris scores far below every real sentence (figures: docs/model.md, "Negatives").
"""

from __future__ import annotations

import itertools
import math
import unicodedata
from collections.abc import Sequence

from features.registry import feature
from features.sentence import Sentence


def is_junk(token: str) -> bool:
    """No letter or digit, and a non-ASCII symbol that is not a currency sign: emoji, "★",
    "∑", "©". ASCII signs ("<", "+", "^") and currency ("$", "€") stay text."""
    if any(c.isalnum() for c in token):
        return False
    return any(ord(c) > 127 and unicodedata.category(c) in ("So", "Sk", "Sm") for c in token)


def repeated_bigrams(tokens: Sequence[str]) -> list[int]:
    """Where `repeat_bigram_ratio` counts a repeat: each i whose pair (tokens i, i + 1), case
    folded, occurred earlier or is one word twice ("the the"); a pair both is counted twice."""
    seen: set[tuple[str, str]] = set()
    out = []
    for i, (a, b) in enumerate(itertools.pairwise(tokens)):
        pair = (a.lower(), b.lower())
        if pair in seen or pair[0] == pair[1]:
            out.append(i)
        seen.add(pair)
    return out


@feature(
    "surface.v2",
    names=(
        "n_tokens",
        "log_n_tokens",
        "punct_ratio",
        "non_alpha_ratio",
        "repeat_bigram_ratio",
        "junk_ratio",
    ),
)
def surface(sentences: Sequence[Sentence], resources=None) -> list[dict[str, float]]:
    """Length in tokens (and its log: LM and parser scores drift with length); the share of
    punctuation tokens and of tokens with no letter (markup, numbers, debris); the share of
    adjacent token pairs that repeat an earlier pair (stutter such as "the the"); the share of
    tokens that are symbols or emoji (`is_junk`; 0 to 1, lower is more fluent)."""
    out = []
    for s in sentences:
        n = len(s.tokens)
        punct = sum(all(unicodedata.category(c).startswith("P") for c in t) for t in s.tokens)
        non_alpha = sum(not any(c.isalpha() for c in t) for t in s.tokens)
        bigrams = [(a.lower(), b.lower()) for a, b in zip(s.tokens, s.tokens[1:], strict=False)]
        repeats = len(bigrams) - len(set(bigrams)) + sum(a == b for a, b in bigrams)
        out.append(
            {
                "n_tokens": float(n),
                "log_n_tokens": math.log1p(n),
                "punct_ratio": punct / n if n else 0.0,
                "non_alpha_ratio": non_alpha / n if n else 0.0,
                "repeat_bigram_ratio": repeats / len(bigrams) if bigrams else 0.0,
                "junk_ratio": sum(map(is_junk, s.tokens)) / n if n else 0.0,
            }
        )
    return out
