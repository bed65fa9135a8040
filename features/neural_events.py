"""The neural LM's tokens placed in the text, for explanations: each token SmolLM2 scored as a
`TokenEvent` (its characters in the text as given, its log-probability and its unigram
log-probability), beside `features.neural_lm`'s row of the same text, from the same passes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from features.neural_lm import load_neural, scored_passes, text_summary
from features.sentence import Sentence

__all__ = ["TokenEvent", "neural_events"]


@dataclass(frozen=True)
class TokenEvent:
    """One scored token: the characters of the text it covers (`start`, `end`: offsets into
    the text as given, end exclusive), its natural-log probability given the tokens before it,
    and its unigram log-probability (what SLOR subtracts)."""

    start: int
    end: int
    logprob: float
    unigram: float


def _char_offsets(text: str, offsets: Sequence[tuple[int, int]]) -> list[tuple[int, int]] | None:
    """The tokenizer's character offsets into the text with its whitespace runs made single
    spaces, mapped back onto the text as given; None when one falls outside that text."""
    normal = " ".join(text.split())
    if any(not 0 <= a <= b <= len(normal) for a, b in offsets):
        return None
    original = [i for i, ch in enumerate(text) if not ch.isspace()]  # non-space chars of text
    where, k = [], 0  # character of `normal` -> character of `text`
    for ch in normal:
        if ch == " ":
            where.append(original[k - 1] + 1 if k else 0)
        else:
            where.append(original[k])
            k += 1
    where.append(len(text))
    return [(where[a], where[b - 1] + 1 if b > a else where[a]) for a, b in offsets]


def neural_events(sentences: Sequence[Sentence], resources) -> list[tuple[dict, list]]:
    """`neural_features`' rows, each with its tokens as `TokenEvent`s (none when the tokens
    cannot be placed in the text), from the same forward passes."""
    lm = resources.get("neural", load_neural)
    encodings = [lm.encode(s.text) for s in sentences]
    tokens = [list(e.ids) for e in encodings]
    scored = [logprobs for logprobs, _ in scored_passes(lm, tokens)]
    out = []
    for s, enc, toks, logprobs in zip(sentences, encodings, tokens, scored, strict=True):
        row = text_summary(lm, s.text, toks, logprobs)
        offsets = _char_offsets(s.text, enc.offsets) if toks else []
        events = [
            TokenEvent(a, b, float(lp), float(lm.unigrams[t]))
            for (a, b), lp, t in zip(offsets or [], logprobs, toks, strict=False)
        ]
        out.append((row, events))
    return out
