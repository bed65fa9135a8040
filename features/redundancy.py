"""What a text says again: a reading of the whole text, not of one sentence.

A generator stuck in a beam or a sampling loop repeats itself: a sentence said twice, a
paragraph said over, a phrase looped. Each sentence of such a text can be fluent, so nothing a
parser or a language model sees in one sentence tells it from the text said once, and a language
model finds text it has just read easy to predict. These signals read the text whole:

- `said_again`: the share of the text's word 3-grams already said earlier in it (0 for a text
  that never repeats itself, towards 1 for one said over and over);
- `sentences_again`: the share of its sentences that repeat an earlier one, exactly or nearly
  (at least `NEAR` of their 3-grams said in one earlier sentence);
- `said_again_spans`: the character spans of the stretches said before, for explanations.

Words are lower-cased runs of letters, digits and apostrophes: punctuation and spacing do not
hide a repetition. No library counts repeated n-grams of a text with their character offsets
(NLTK's `ngrams` gives the n-grams, not where they stand), so the few lines are here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = [
    "NEAR",
    "N",
    "redundancy",
    "said_again",
    "said_again_spans",
    "sentences_again",
]

N = 3  # words an n-gram
NEAR = 0.8  # a sentence with this share of its n-grams in one earlier sentence repeats it
_WORD = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)*")


def _words(text: str) -> list[re.Match]:
    return list(_WORD.finditer(text))


def _grams(words: Sequence[str], n: int = N) -> list[tuple[str, ...]]:
    return [tuple(words[i : i + n]) for i in range(len(words) - n + 1)]


def _repeated(words: Sequence[str], n: int = N) -> list[bool]:
    """For each n-gram of `words`, in order: whether it was said earlier in them."""
    seen: set[tuple[str, ...]] = set()
    out = []
    for gram in _grams(words, n):
        out.append(gram in seen)
        seen.add(gram)
    return out


def said_again(text: str, n: int = N) -> float:
    """The share of `text`'s word n-grams said earlier in it (0 for fewer than n words)."""
    words = [m.group().lower() for m in _words(text)]
    flags = _repeated(words, n)
    return sum(flags) / len(flags) if flags else 0.0


def sentences_again(sentences: Sequence[str], n: int = N, near: float = NEAR) -> float:
    """The share of `sentences` (one text's, in order) that repeat an earlier one: the same
    words, or at least `near` of their n-grams found in one earlier sentence."""
    if len(sentences) < 2:
        return 0.0
    words = [tuple(m.group().lower() for m in _words(s)) for s in sentences]
    grams = [set(_grams(w, n)) for w in words]
    again = 0
    for k in range(1, len(sentences)):
        for j in range(k):
            if words[k] == words[j] and words[k]:
                again += 1
                break
            if grams[k] and len(grams[k] & grams[j]) >= near * len(grams[k]):
                again += 1
                break
    return again / len(sentences)


def said_again_spans(text: str, n: int = N) -> list[tuple[int, int]]:
    """Character spans (start, end) of `text` covered by n-grams said earlier in it, the
    overlapping ones joined: the stretches a reader would mark as said again."""
    found = _words(text)
    flags = _repeated([m.group().lower() for m in found], n)
    spans: list[tuple[int, int]] = []
    for i, again in enumerate(flags):
        if not again:
            continue
        start, end = found[i].start(), found[i + n - 1].end()
        if spans and start <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(end, spans[-1][1]))
        else:
            spans.append((start, end))
    return spans


def redundancy(text: str, sentences: Sequence[str] | None = None) -> dict[str, float]:
    """Both signals of `text` ({"said_again", "sentences_again"}); `sentences`: its sentences,
    split as the scorer splits them (`features.segment.split_sentences`, the default)."""
    if sentences is None:
        from features.segment import split_sentences

        sentences = [s for s, _ in split_sentences(text)] if text.strip() else []
    return {"said_again": said_again(text), "sentences_again": sentences_again(sentences)}
