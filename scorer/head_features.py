"""Scoring with a head that reads only what the GLEU stage does not: the features only the
bundle's heads read (its card's `head_features`), SmolLM2's layer-20 states on the neural tier.

Such a head (the neural tier's general head: a ridge on the states, its GLEU and log-probability
weights 0) needs neither the GLEU stage's parses and SVM nor SmolLM2's log-probabilities: its
texts are read by those extractors alone, which parse nothing (the states come from the pass
cut after layer 20, `features.neural_states.state_passes`). The score is the head's, the same
as through the whole bundle (tests/scoring/test_head_features.py); `gleu` is not computed
(NaN, `null` over HTTP). A head that reads anything else, a request for the feature rows, an
explanation or the "min" reading, takes the whole bundle's path.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from features.placeholders import fill_placeholders
from features.rows import FeatureRows
from features.segment import segment
from scorer.readings import TEXT_READINGS, text_readings

__all__ = ["head_feature_rows", "reads_head_features_only", "score_by_head_features"]


def _head_only(scorer) -> tuple[str, ...]:
    gleu = set(scorer.gleu_svm.features)
    return tuple(f for f in scorer.card.get("head_features") or () if f not in gleu)


def reads_head_features_only(scorer, how: str) -> bool:
    """Whether `scorer`'s head, reading texts `how`, weighs nothing but columns of the
    features only heads read and what the text says again (`TEXT_READINGS`, from the text
    alone): no GLEU score, no GLEU-stage feature, no reading of parses, no clip."""
    head = scorer.head
    coef = getattr(head, "coef", None)
    if head is None or coef is None or how == "min" or head.clip is not None:
        return False
    if head.needs_parsed_readings or head.derived or len(coef) != len(head.inputs):
        return False
    only = set(_head_only(scorer))
    read = [c for c, w in zip(head.inputs, coef, strict=True) if w != 0 and c not in TEXT_READINGS]
    return bool(read) and all(c.partition("/")[0] in only for c in read)


def head_feature_rows(scorer) -> FeatureRows:
    """The rows of the features only heads read, kept as long as the scorer's own rows (one
    object for a bundle and the copies `for_genre` makes of it)."""
    key = (_head_only(scorer), id(scorer.resources))
    found = scorer.head_rows.get(key)
    if found is None:
        size = scorer.rows.memory.size
        found = scorer.head_rows[key] = FeatureRows(key[0], scorer.resources, memory=size)
    return found


def score_by_head_features(scorer, texts: Sequence[str], how: str) -> list[tuple[float, int]]:
    """(fluency, sentences read) of each text, for `FluencyScorer.score_texts` with a head
    `reads_head_features_only` accepts (module docstring)."""
    head = scorer.head
    filled = fill_placeholders(texts, scorer.placeholders)
    seg = segment(filled, by_sentence=how != "whole")
    full = [scorer.rows.memory.get(t) for t in seg.sentences]  # the whole bundle's rows, if any
    todo = [t for t, row in zip(seg.sentences, full, strict=True) if row is None]
    fresh = dict(zip(todo, head_feature_rows(scorer).rows(todo), strict=True))
    rows = [fresh[t] if row is None else row for t, row in zip(seg.sentences, full, strict=True)]
    unread = [c for c, w in zip(head.inputs[1:], head.coef[1:], strict=True) if w == 0]
    text_rows = [{**dict.fromkeys(unread, 0.0), **row} for row in seg.aggregate_rows(rows, how)]
    readings = None
    if head.needs_readings:  # what the text says again, from the text alone
        readings = text_readings(filled, seg if how != "whole" else None)
    fluency = head.apply(np.zeros(len(texts)), text_rows, readings)
    return [(float(f), len(i)) for f, i in zip(fluency, seg.index, strict=True)]
