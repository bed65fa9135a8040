"""What a bundle is, in a few sentences written from its card: its GLEU stage's extractors and
each head's inputs and reading. The card's `summary` and what `GET /v1/models` says of a model
both come from here, so neither can say something its heads no longer do.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from features.errors import ModelLoadError
from scorer.contributions import group_of
from scorer.gleu_stage import stage_file
from scorer.heads import GENERAL, GLEU_INPUT, Head, card_heads

__all__ = ["READ_AS", "SCALES", "summarize"]

# How a head reads a text of several sentences (`features.segment.AGGREGATES`), in words.
READ_AS = {
    "whole": "read whole",
    "weighted": "read by sentence",
    "mean": "read by sentence, plain mean",
    "min": "read by its least fluent sentence",
    "sum": "its sentences summed",
}
SCALES = (
    "fluency is in standard deviations of people's ratings around the average rated output; "
    "gleu is the GLEU stage's signed distance (> 0 looks like real text)."
)


def summarize(card: Mapping[str, Any]) -> str:
    """E.g. "GLEU stage: a linear ranking SVM over 37 columns of surface.v2, spacy.v1, lm.v1.
    General head: the GLEU score alone, read by sentence. Genre heads: mt (the GLEU score and
    spacy.v1/logprob_sum, its sentences summed). fluency is in ..."."""
    columns = card.get("feature_columns") or []
    svm = "a linear ranking SVM" if stage_file(card) else "an SVM"
    extractors = ", ".join(str(f) for f in card.get("features", []))
    n = len(columns)
    parts = [f"GLEU stage: {svm} over {n} column{'' if n == 1 else 's'} of {extractors}."]
    heads = card_heads(card)
    general = heads.pop(GENERAL, None)
    if general:
        parts.append(f"General head: {_head(general)}.")
    else:
        parts.append("No general head: fluency is the GLEU score.")
    if heads:
        genres = ", ".join(f"{genre} ({_head(section)})" for genre, section in heads.items())
        parts.append(f"Genre heads: {genres}.")
    if general or heads:
        parts.append(_carried(card.get("carried_heads")))
        parts.append(SCALES)
    return " ".join(p for p in parts if p)


def _carried(section: Any) -> str:
    """'Heads carried over from the default tier ...' for a retrained bundle
    (`training.gleu.carry`), '' for any other."""
    if not isinstance(section, Mapping) or not isinstance(section.get("gleu_map"), Mapping):
        return ""
    m = section["gleu_map"]
    return (
        f"Heads carried over from the {section.get('from')} tier: this GLEU score mapped onto "
        f"its scale (r = {float(m['pearson']):.3f} on {m['n_texts']} held-out texts)."
    )


def _head(section: Mapping[str, Any]) -> str:
    """'the GLEU score and surface.v2/repeat_bigram_ratio, read whole': what a head reads (inputs
    whose weight is 0 left out) and how it reads a text."""
    try:
        head = Head.from_section(section)
    except ModelLoadError as exc:  # a pickled head, or weights of the wrong sizes
        return f"not served ({exc})"
    names, groups, read = [], {}, head.read()
    for c in read:  # a learned head's hundreds of state columns are one group
        label = group_of(c)
        if label is None:
            names.append("the GLEU score" if c == GLEU_INPUT else c)
        else:
            groups[label] = groups.get(label, 0) + 1
    names += [f"{n} columns of {label}" for label, n in groups.items()]
    reads = "the GLEU score alone" if read == [GLEU_INPUT] else _and(names) or "a constant"
    how = READ_AS.get(str(head.reading), "read as the scorer's default")
    return f"{reads}, {how}"


def _and(names: list[str]) -> str:
    return " and ".join(names) if len(names) < 3 else f"{', '.join(names[:-1])} and {names[-1]}"
