"""Cheap surface signals. The model needs them to discount length in the other features."""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Sequence

from features.registry import feature
from features.sentence import Sentence


@feature(
    "surface.v1",
    names=("n_tokens", "log_n_tokens", "punct_ratio", "non_alpha_ratio", "repeat_bigram_ratio"),
)
def surface(sentences: Sequence[Sentence], resources=None) -> list[dict[str, float]]:
    """Length in tokens (and its log: LM and parser scores drift with length); the share of
    punctuation tokens and of tokens with no letter (markup, numbers, debris); the share of
    adjacent token pairs that repeat an earlier pair (stutter such as "the the")."""
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
            }
        )
    return out
