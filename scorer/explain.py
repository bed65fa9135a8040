"""Why a text scores as it does: the places in it the features react to, and the features
that moved its score.

`explain_texts` parses each text once, as `FluencyScorer.score_texts` does, and reads every
feature from that parse with the positions behind the values (which words Link Grammar skips,
which benepar nodes are FRAG or X, which tokens the language model finds unlikely in their
context...): the score is computed from the same rows, so it is the score `/v1/score` gives,
and explaining costs little more than scoring. Spans (`scorer.spans`) come only from the
extractors the model reads, and are character offsets into the text as sent (Python `str`
indices: Unicode code points), whatever placeholders were filled and however many sentences it
holds.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from features import registry
from features.constituency import parse_constituency
from features.extract import extract
from features.linkgrammar import NULL_SEARCH, linkgrammar_nulls
from features.lm import lm_events
from features.neural_events import neural_events
from features.placeholders import fill_placeholders
from features.segment import segment
from features.sentence import Sentence
from scorer.contributions import Contributions, calibrated, contributions, summed
from scorer.errors import FeatureError
from scorer.readings import with_derived
from scorer.scoring import FluencyScorer
from scorer.spans import (
    KINDS,
    LM_THRESHOLD,
    LM_THRESHOLD_MEANS,
    NEURAL_THRESHOLD,
    Span,
    find_spans,
)

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

# What `Contribution.typical` is: the scaler's mean, the point the linear terms are measured from.
TYPICAL_MEANS = "the training data's mean (real and generated text alike)"


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
    "neural.v2": neural_events,
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


def explain_texts(
    scorer: FluencyScorer,
    texts: Sequence[str],
    *,
    by_sentence: bool | None = None,
    aggregate: str | None = None,
    locate_nulls: bool = False,
    genre: str | None = None,
) -> list[Explanation]:
    """Score and explain raw texts (callers check the input), one parse serving both.
    `by_sentence` and `aggregate` read a text of several sentences as `score_texts` does (by
    default as the service scores); `genre` names the bundle's head to score with
    (`FluencyScorer.for_genre`; None: the head it scores with already).

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
    scorer = scorer.for_genre(genre)
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
    head = getattr(scorer, "head", None)
    if head is not None and head.derived:
        rows = with_derived(rows, head.derived)
    gleu = seg.aggregate(values, how)
    text_rows = seg.aggregate_rows(rows, how, values)
    fluency = gleu
    if how == "sum":  # sentence by sentence, each sentence's intercept counted once
        explained = summed(contributions(scorer.gleu_svm, rows), seg.index)
    else:
        explained = contributions(scorer.gleu_svm, text_rows)
    if head is not None:
        readings = None
        if head.needs_readings:
            readings = scorer.readings(filled, parse=head.needs_parsed_readings)
        fluency = head.apply(gleu, text_rows, readings)
        # A linear second stage is read back onto the fluency it serves; another explains GLEU.
        onto = calibrated(explained, head, text_rows, readings)
        explains, explained = ("fluency", onto) if onto is not None else ("gleu", explained)
    else:
        explains = "fluency"  # the GLEU score is the fluency
    position = {s: k for k, s in enumerate(seg.sentences)}
    out = []
    for text, fill, score, g, contrib, index in zip(
        texts, filled, fluency, gleu, explained, seg.index, strict=True
    ):
        pieces = [(seg.sentences[k], position[seg.sentences[k]]) for k in index]
        spans = find_spans(
            text,
            fill,
            pieces,
            parsed,
            details,
            used,
            placeholders=scorer.placeholders,
            searched=searched,
        )
        out.append(Explanation(text, float(score), spans, contrib, len(index), float(g), explains))
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
            # A linear head's score in its parts, which add up to it (`calibrated`).
            **({"parts": c.parts} if c.parts is not None else {}),
        },
    }
