"""Where in a text the features react: spans of the words an extractor objects to, as
character offsets into the text as sent (Python `str` indices: Unicode code points).

Each extractor the model reads that can say where (`KINDS`) gives its reasons on the tokens of a
parsed sentence (Link Grammar's null words, dependency fragments, benepar's FRAG and X nodes,
tokens the language models find unlikely in context, repeats, symbol debris), and the text
itself where it says something again (`features.redundancy`); `find_spans` maps them back
through the sentences a text was split into and the placeholders filled in it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from features.constituency import word_tokens
from features.placeholders import STAND_IN, placeholder_spans
from features.redundancy import said_again_spans
from features.sentence import Sentence
from features.spacy_parse import tree_roots
from features.surface import is_junk, repeated_bigrams

__all__ = [
    "KINDS",
    "LM_THRESHOLD",
    "LM_THRESHOLD_MEANS",
    "NEURAL_THRESHOLD",
    "SAID_AGAIN_DETAIL",
    "Span",
    "find_spans",
]

# log10 p(word | the words before it) - log10 p(word): below this the context makes the word
# 5 times less likely than its frequency alone (the per-token term of SLOR, so rare words and
# names are not marked for being rare). About 1.5% of the tokens of plain sentences fall
# below it (tests/web/data/sentences.txt: 1,018 events, 1st percentile -0.86, 2nd -0.65).
LM_THRESHOLD = -0.7
LM_THRESHOLD_MEANS = "log10 p(word | the words before it) - log10 p(word)"
# The same for SmolLM2's tokens (neural.v2), natural log: below it the context makes the token
# about 3,000 times less likely than its frequency alone. 1.5% of the tokens of plain sentences
# fall below it (tests/web/data/sentences.txt through `neural_events`: 970 tokens, 1st
# percentile -8.38, 2nd -7.45; measured on neural.v1, 0.11.0's llama.cpp values, which
# neural.v2's follow within a median 0.9 nats a text); a sentence's first token, seen after
# nothing, is the usual one.
NEURAL_THRESHOLD = -8.0

KINDS = {
    "link_grammar_null": "linkgrammar.v5",
    "dependency_fragment": "spacy.v1",
    "constituency_fragment": "constituency.v1",
    "lm_unlikely": "lm.v1",
    "neural_unlikely": "neural.v2",
    "repeated_ngram": "surface.v2",
    "symbol_debris": "surface.v2",
    "said_again": "redundancy",  # the text's own repetitions (features.redundancy), any model
}
SAID_AGAIN_DETAIL = "said again: these words were said earlier in the text"


@dataclass(frozen=True)
class Span:
    start: int  # character offsets into the text as sent, end exclusive
    end: int
    kind: str  # one of KINDS
    detail: str  # the reason, in words


def _token_offsets(sentence: Sentence) -> list[tuple[int, int]]:
    """Each token's (start, end) in `sentence.text`: spaCy's tokens are substrings of the text
    in order, with only whitespace between them."""
    out, pos = [], 0
    for token in sentence.tokens:
        start = sentence.text.find(token, pos) if token.strip() else pos
        start = pos if start < 0 else start
        out.append((start, start + len(token)))
        pos = start + len(token)
    return out


def _runs(indices: Sequence[int]) -> list[tuple[int, int]]:
    """Sorted token indices as runs of consecutive ones: (first, last)."""
    runs: list[list[int]] = []
    for i in sorted(set(indices)):
        if runs and i == runs[-1][1] + 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return [(a, b) for a, b in runs]


def _quote(sentence: Sentence, first: int, last: int) -> str:
    return " ".join(sentence.tokens[first : last + 1])


def _null_words(sentence: Sentence, nulls: list[int] | None, searched: int):
    if nulls is None:  # more than `searched` nulls needed (or the parse timed out)
        words = "one word" if searched == 1 else f"{searched} words"
        yield (
            0,
            sentence.n_tokens - 1,
            (f"Link Grammar finds no linkage of this sentence skipping at most {words}"),
        )
    for a, b in _runs(nulls or []):
        words = "words" if b > a else "word"
        yield (
            a,
            b,
            f'Link Grammar must skip the {words} "{_quote(sentence, a, b)}" to link the rest',
        )


def _fragments(sentence: Sentence):
    roots = tree_roots(sentence)
    order = sorted(set(roots))
    for rank, root in enumerate(order[1:], start=2):
        for a, b in _runs([i for i, r in enumerate(roots) if r == root]):
            yield (
                a,
                b,
                (
                    f"a separate dependency tree (fragment {rank} of {len(order)}): the parser "
                    "attaches these words to nothing before them"
                ),
            )


_FRAG_LABELS = {"FRAG": "a fragment", "X": "an unknown constituent"}


def _frag_nodes(sentence: Sentence, stats):
    if stats is None:
        return
    owners = word_tokens(sentence.tokens)
    for start, end, chain in stats.nodes:
        for label in chain.split("::"):
            if label in _FRAG_LABELS:
                yield (
                    owners[start],
                    owners[end - 1],
                    (
                        f"the constituency parser reads this as {label}, {_FRAG_LABELS[label]}: "
                        "no phrase of English it knows fits these words"
                    ),
                )


def _unlikely(sentence: Sentence, events):
    for event in events:
        surprise = event.logprob - event.unigram
        if surprise >= LM_THRESHOLD:
            continue
        at = event.token if event.token is not None else sentence.n_tokens - 1
        what = f'"{sentence.tokens[at]}"' if event.token is not None else "the text ending here"
        yield (
            at,
            at,
            (
                f"the language model finds {what} {10**-surprise:.0f} times less likely after the "
                f"words before it than on its own (log10 {surprise:+.2f})"
            ),
        )


def _neural_unlikely(sentence: Sentence, events):
    """SmolLM2 tokens far less likely in context than alone, on the spaCy tokens they cover."""
    offsets = _token_offsets(sentence)
    for event in events:
        surprise = event.logprob - event.unigram
        if surprise >= NEURAL_THRESHOLD:
            continue
        a, b = _trim(sentence.text, event.start, event.end)
        covered = [i for i, (s, e) in enumerate(offsets) if s < b and e > a]
        if not covered or b <= a:
            continue
        piece = sentence.text[a:b]
        yield (
            covered[0],
            covered[-1],
            (
                f'the neural language model finds "{piece}" {math.exp(-surprise):,.0f} times '
                f"less likely after the text before it than on its own (ln {surprise:+.1f})"
            ),
        )


def _repeats(sentence: Sentence):
    tokens = sentence.tokens
    for i in repeated_bigrams(tokens):
        twice = tokens[i].lower() == tokens[i + 1].lower()
        again = "one word twice" if twice else "the pair occurs earlier"
        yield i, i + 1, f'"{_quote(sentence, i, i + 1)}" repeats: {again}'


def _debris(sentence: Sentence):
    for a, b in _runs([i for i, t in enumerate(sentence.tokens) if is_junk(t)]):
        yield a, b, "symbols where words should be"


def _token_spans(
    sentence: Sentence, details: Mapping[str, list], k: int, used: set[str], searched: int
):
    """(first token, last token, kind, detail) of one parsed sentence (the k-th of the batch),
    from the extractors the model reads; `searched`: most null words Link Grammar looked for."""
    if sentence.n_tokens == 0:
        return []
    found = []
    if "linkgrammar.v5" in details:
        nulls = details["linkgrammar.v5"][k]
        found.append(("link_grammar_null", _null_words(sentence, nulls, searched)))
    if "spacy.v1" in used:
        found.append(("dependency_fragment", _fragments(sentence)))
    if "constituency.v1" in details:
        stats = details["constituency.v1"][k]
        found.append(("constituency_fragment", _frag_nodes(sentence, stats)))
    if "lm.v1" in details:
        found.append(("lm_unlikely", _unlikely(sentence, details["lm.v1"][k])))
    if "neural.v2" in details:
        found.append(("neural_unlikely", _neural_unlikely(sentence, details["neural.v2"][k])))
    if "surface.v2" in used:
        found += [("repeated_ngram", _repeats(sentence)), ("symbol_debris", _debris(sentence))]
    return [(a, b, kind, detail) for kind, items in found for a, b, detail in items]


def _offset_maps(text: str, placeholders: Sequence[str]) -> tuple[list[int], list[int]]:
    """For each character of the filled text: where it starts and ends in `text`. A stand-in
    maps, every character of it, to the whole placeholder it replaced."""
    starts, ends, pos = [], [], 0
    for a, b in placeholder_spans(text, placeholders):
        starts.extend(range(pos, a))
        ends.extend(range(pos + 1, a + 1))
        starts.extend([a] * len(STAND_IN))
        ends.extend([b] * len(STAND_IN))
        pos = b
    starts.extend(range(pos, len(text)))
    ends.extend(range(pos + 1, len(text) + 1))
    return starts, ends


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    """A span without the whitespace at its ends (a fragment may begin with a space token)."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _starts(filled: str, parts: Sequence[str]) -> list[int]:
    """Where each of the sentences `segment` made of a filled text (in order) begins: the offset
    of its first non-blank character (where its parse, which strips the ends, begins)."""
    out, pos = [], 0
    for part in parts:
        stripped = part.strip()
        at = filled.find(stripped, pos) if stripped else pos
        at = pos if at < 0 else at
        out.append(at)
        pos = at + len(stripped)
    return out


def find_spans(
    text: str,
    filled: str,
    sentences: Sequence[tuple[str, int]],
    parsed: Sequence[Sentence],
    details: Mapping[str, list],
    used: set[str],
    *,
    placeholders: Sequence[str],
    searched: int = 1,
) -> list[Span]:
    """The spans of one text (as sent), in order: `filled` is it with its placeholders filled,
    `sentences` the (sentence, k) its filled text was split into, in order, `parsed[k]` the
    parse of that sentence and `details[extractor][k]` what the extractor found in it; `used`
    names the extractors the model reads, `searched` the most null words Link Grammar looked
    for."""
    starts, ends = _offset_maps(text, placeholders)
    spans = set()
    begins = _starts(filled, [piece for piece, _ in sentences])
    for at, (_, k) in zip(begins, sentences, strict=True):
        sentence = parsed[k]
        offsets = _token_offsets(sentence)
        for first, last, kind, detail in _token_spans(sentence, details, k, used, searched):
            a, b = at + offsets[first][0], at + offsets[last][1]
            start, end = _trim(text, starts[a], ends[b - 1])
            if start < end:
                spans.add(Span(start, end, kind, detail))
    for a, b in said_again_spans(filled):
        start, end = _trim(text, starts[a], ends[b - 1])
        if start < end:
            spans.add(Span(start, end, "said_again", SAID_AGAIN_DETAIL))
    return sorted(spans, key=lambda s: (s.start, -s.end, s.kind, s.detail))
