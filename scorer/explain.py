"""Why a text scores as it does: the places in it the features react to, and the features
that moved its score.

`explain_texts` parses each text once, as `FluencyScorer.score_texts` does, and reads every
feature from that parse with the positions behind the values (which words Link Grammar skips,
which benepar nodes are FRAG or X, which tokens the language model finds unlikely in their
context...): the score is computed from the same rows, so it is the score `/v1/score` gives,
and explaining costs little more than scoring. Spans come only from the extractors the model
reads, and are character offsets into the text as sent (Python `str` indices: Unicode code
points), whatever placeholders were filled and however many sentences it holds.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from features import registry
from features.constituency import parse_constituency, word_tokens
from features.extract import extract
from features.linkgrammar import NULL_SEARCH, linkgrammar_nulls
from features.lm import lm_events
from features.neural_lm import neural_events
from features.placeholders import STAND_IN, fill_placeholders, placeholder_spans
from features.segment import segment
from features.sentence import Sentence
from features.spacy_parse import tree_roots
from features.surface import is_junk, repeated_bigrams
from scorer.calibration import with_derived
from scorer.contributions import Contributions, calibrated, contributions
from scorer.errors import FeatureError
from scorer.scoring import FluencyScorer

__all__ = [
    "KINDS",
    "LM_THRESHOLD",
    "LM_THRESHOLD_MEANS",
    "NEURAL_THRESHOLD",
    "TYPICAL_MEANS",
    "Explanation",
    "Span",
    "as_dict",
    "explain_texts",
]

# log10 p(word | the words before it) - log10 p(word): below this the context makes the word
# 5 times less likely than its frequency alone (the per-token term of SLOR, so rare words and
# names are not marked for being rare). About 1.5% of the tokens of plain sentences fall
# below it (tests/web/data/sentences.txt: 1,018 events, 1st percentile -0.86, 2nd -0.65).
LM_THRESHOLD = -0.7
LM_THRESHOLD_MEANS = "log10 p(word | the words before it) - log10 p(word)"
# The same for SmolLM2's tokens (neural.v1), natural log: below it the context makes the token
# about 3,000 times less likely than its frequency alone. 1.5% of the tokens of plain sentences
# fall below it (tests/web/data/sentences.txt through `neural_events`: 970 tokens, 1st
# percentile -8.38, 2nd -7.45); a sentence's first token, seen after nothing, is the usual one.
NEURAL_THRESHOLD = -8.0
# What `Contribution.typical` is: the scaler's mean, the point the linear terms are measured from.
TYPICAL_MEANS = "the training data's mean (real and generated text alike)"

KINDS = {
    "link_grammar_null": "linkgrammar.v5",
    "dependency_fragment": "spacy.v1",
    "constituency_fragment": "constituency.v1",
    "lm_unlikely": "lm.v1",
    "neural_unlikely": "neural.v1",
    "repeated_ngram": "surface.v2",
    "symbol_debris": "surface.v2",
}


@dataclass(frozen=True)
class Span:
    start: int  # character offsets into the text as sent, end exclusive
    end: int
    kind: str  # one of KINDS
    detail: str  # the reason, in words


@dataclass(frozen=True)
class Explanation:
    text: str  # as sent
    fluency: float  # the same score as FluencyScorer.score_texts
    spans: list[Span]
    contributions: Contributions  # of what `explains` names
    n_sentences: int = 1
    gleu: float = float("nan")  # the SVM's distance; `fluency` too unless the bundle calibrates
    explains: str = "gleu"  # "fluency" where a linear second stage is read back onto it


# Extractors whose rows come with the positions behind them, by exact versioned name: a new
# version of one is extracted the ordinary way (and gives no spans) until it is listed here.
_DETAILED: dict[str, Callable] = {
    "linkgrammar.v5": linkgrammar_nulls,
    "constituency.v1": parse_constituency,
    "lm.v1": lm_events,
    "neural.v1": neural_events,
}


def _rows_and_details(scorer: FluencyScorer, sentences: Sequence[Sentence], null_search: int = 1):
    """Feature rows (key for key what `extract` yields) and the details of each extractor."""
    specs = [registry.get(n) for n in scorer.features]
    plain = [s.name for s in specs if s.name not in _DETAILED]
    values = extract(sentences, plain, scorer.resources) if plain else [{} for _ in sentences]
    details: dict[str, list] = {}
    for spec in specs:
        if spec.name not in _DETAILED:
            continue
        func = _DETAILED[spec.name]
        if func is linkgrammar_nulls:
            func = functools.partial(func, max_nulls=null_search)
        pairs = func(list(sentences), scorer.resources)
        for merged, (got, _) in zip(values, pairs, strict=True):
            if set(got) != set(spec.names):
                raise FeatureError(f"{spec.name} yielded {sorted(got)}, not {sorted(spec.names)}")
            merged.update({f"{spec.name}/{k}": float(v) for k, v in got.items()})
        details[spec.name] = [d for _, d in pairs]
    rows = [{col: v[col] for spec in specs for col in spec.columns} for v in values]
    return rows, details, {s.name for s in specs}


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
    sentence: Sentence, details: dict[str, list], k: int, used: set[str], searched: int
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
    if "neural.v1" in details:
        found.append(("neural_unlikely", _neural_unlikely(sentence, details["neural.v1"][k])))
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


def _pieces(filled: str, parts: Sequence[str]) -> list[tuple[str, int]]:
    """The sentences `segment` made of a filled text (in order), each with the offset of its
    first non-blank character (where its parse, which strips the ends, begins)."""
    out, pos = [], 0
    for part in parts:
        stripped = part.strip()
        at = filled.find(stripped, pos) if stripped else pos
        at = pos if at < 0 else at
        out.append((part, at))
        pos = at + len(stripped)
    return out


def explain_texts(
    scorer: FluencyScorer,
    texts: Sequence[str],
    *,
    by_sentence: bool | None = None,
    aggregate: str | None = None,
    locate_nulls: bool = False,
) -> list[Explanation]:
    """Score and explain raw texts (callers check the input), one parse serving both.
    `by_sentence` and `aggregate` read a text of several sentences as `score_texts` does (by
    default as the service scores).

    The contributions explain the GLEU score (the SVM's distance), exactly for a linear model
    under every aggregate (each folds the rows as it folds the scores). A bundle with a linear
    second stage maps that score, feature values and readings onto its `fluency` with fixed
    weights: the contributions are then read back onto the fluency, and add up to it
    (`scorer.contributions.calibrated`; `explains` says which). A non-linear second stage is
    not decomposed: the contributions explain the GLEU score.

    Link Grammar's parse for the features looks for at most one null word; a sentence that
    needs more gets one span over all of it. `locate_nulls=True` parses such a sentence again
    allowing up to NULL_SEARCH null words, to mark which: it costs more than the features' own
    parse (see `features.linkgrammar.NULL_SEARCH`), so it is off unless asked for."""
    texts = list(texts)
    filled = fill_placeholders(texts, scorer.placeholders)
    how = scorer.aggregate_for(by_sentence, aggregate)
    seg = segment(filled, by_sentence=how != "whole")
    parsed = scorer.annotate(seg.sentences)
    searched = NULL_SEARCH if locate_nulls else 1
    rows, details, used = _rows_and_details(scorer, parsed, searched)
    for text, row in zip(seg.sentences, rows, strict=True):
        scorer.cache.put(text, row)
    values = scorer.decision(rows)
    calibration = getattr(scorer, "calibration", None)
    if calibration is not None and calibration.derived:
        rows = with_derived(rows, calibration.derived)
    gleu = seg.aggregate(values, how)
    text_rows = seg.aggregate_rows(rows, how, values)
    fluency = gleu
    explained = contributions(scorer.head, text_rows)
    if calibration is not None:
        readings = scorer.readings(filled) if calibration.needs_readings else None
        fluency = calibration.apply(gleu, text_rows, readings)
        # A linear second stage is read back onto the fluency it serves; another explains GLEU.
        onto = calibrated(explained, calibration, text_rows, readings)
        explains, explained = ("fluency", onto) if onto is not None else ("gleu", explained)
    else:
        explains = "fluency"  # the GLEU score is the fluency
    position = {s: k for k, s in enumerate(seg.sentences)}
    out = []
    for text, fill, score, g, contrib, index in zip(
        texts, filled, fluency, gleu, explained, seg.index, strict=True
    ):
        starts, ends = _offset_maps(text, scorer.placeholders)
        spans = set()
        for piece, at in _pieces(fill, [seg.sentences[k] for k in index]):
            k = position[piece]
            sentence = parsed[k]
            offsets = _token_offsets(sentence)
            for first, last, kind, detail in _token_spans(sentence, details, k, used, searched):
                a, b = at + offsets[first][0], at + offsets[last][1]
                start, end = _trim(text, starts[a], ends[b - 1])
                if start < end:
                    spans.add(Span(start, end, kind, detail))
        ordered = sorted(spans, key=lambda s: (s.start, -s.end, s.kind, s.detail))
        out.append(
            Explanation(text, float(score), ordered, contrib, len(index), float(g), explains)
        )
    return out


def as_dict(explanation: Explanation, *, top: int = 10) -> dict:
    """The JSON form `/v1/explain` and `fluency explain` give: the `top` contributions and
    `rest`, the sum of the others, so intercept + listed + rest + residual = the score that
    `explains` names: the fluency, unless a non-linear second stage leaves only gleu exact."""
    c = explanation.contributions
    listed, rest = c.top(top)
    return {
        "fluency": explanation.fluency,
        "gleu": explanation.gleu,
        "explains": explanation.explains,
        "spans": [
            {"start": s.start, "end": s.end, "kind": s.kind, "detail": s.detail}
            for s in explanation.spans
        ],
        "contributions": {
            "method": c.method,
            "exact": c.exact,
            "intercept": c.intercept,
            "features": [
                {
                    "feature": x.feature,
                    "value": x.value,
                    "typical": x.typical,
                    "contribution": x.contribution,
                }
                for x in listed
            ],
            "rest": rest,
            "residual": c.residual,
        },
    }
