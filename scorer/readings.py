"""What a head may read beside the GLEU score and the feature columns: the readings of a text.

A text of several sentences is read whole and sentence by sentence; what the GLEU stage alone
cannot weigh by genre (its least and most fluent sentence, how many sentences, how long, the LM's
log10 probability of all of it) and what the text says again are columns a head may read
(`READINGS`), made here for texts (`reading_columns`, `text_readings`, `bundle_readings`), as are
the columns made from a sentence's row before a text's sentences are folded (`DERIVED`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

__all__ = [
    "DERIVED",
    "READINGS",
    "SAID_AGAIN",
    "TEXT_READINGS",
    "bundle_readings",
    "reading_columns",
    "text_readings",
    "with_derived",
]

# What the GLEU stage alone cannot weigh by genre: a text read both ways (whole, and sentence by
# sentence), its least and most fluent sentence, how many sentences, how long, and the LM's
# log10 probability of all of it. A second stage may read them beside the features.
READINGS = (
    "reading/whole",
    "reading/weighted",
    "reading/min",
    "reading/max",
    "reading/n_sentences",
    "reading/n_tokens",
    "reading/lm_sum",
    "reading/said_again",
    "reading/sentences_again",
)
# The readings of the text alone, no parse (`features.redundancy`): what it says again. A head
# may carry a fixed negative weight on SAID_AGAIN, so that saying more never scores higher.
SAID_AGAIN = "reading/said_again"
TEXT_READINGS = (SAID_AGAIN, "reading/sentences_again")

# Columns a head may read that no extractor yields, made from a sentence's row before the
# sentences of a text are folded: the n-gram LM's log10 probability of the sentence (it scores
# n tokens and the end of the sentence), so that under the "sum" reading it is the text's.
DERIVED: dict[str, tuple[str, str]] = {"lm.v1/logprob_sum": ("lm.v1/mean_logprob", "/n_tokens")}


def with_derived(
    rows: Sequence[Mapping[str, float]], names: Sequence[str]
) -> list[dict[str, float]]:
    """`rows` (per sentence) with the `DERIVED` columns among `names` added; new dicts, so
    cached rows are never changed."""
    wanted = [n for n in names if n in DERIVED]
    if not wanted or not rows:
        return list(rows)
    out = []
    for row in rows:
        row = dict(row)
        for name in wanted:
            mean, suffix = DERIVED[name]
            length = next(k for k in row if k.endswith(suffix))
            row[name] = row[mean] * (row[length] + 1.0)
        out.append(row)
    return out


def text_readings(texts: Sequence[str], split=None) -> dict[str, np.ndarray]:
    """`TEXT_READINGS` per text, from the text alone (`features.redundancy`); `split` (a
    `features.segment.Segmentation` of the same texts by sentence) saves splitting them again."""
    from features.redundancy import redundancy

    if split is None:
        from features.segment import segment

        split = segment(texts, by_sentence=True)
    found = [
        redundancy(t, [split.sentences[k] for k in index])
        for t, index in zip(texts, split.index, strict=True)
    ]
    return {
        f"reading/{name}": np.array([f[name] for f in found], dtype=float)
        for name in ("said_again", "sentences_again")
    }


def reading_columns(
    whole_values: Sequence[float],
    whole_rows: Sequence[Mapping[str, float]],
    split,
    split_values: Sequence[float],
) -> dict[str, np.ndarray]:
    """`READINGS` per text: `whole_values` and `whole_rows` are the GLEU scores and feature rows
    of the texts read whole; `split` (a `features.segment.Segmentation`) and `split_values`
    their sentences' GLEU scores. Length and LM sum come from the whole rows' token count and
    mean log-probability (the LM scores n tokens and the end of the sentence), 0 when the model
    has no such feature."""
    whole = np.asarray(whole_values, dtype=float)
    values = np.asarray(split_values, dtype=float)

    def column(suffix: str) -> np.ndarray:
        names = [k for k in whole_rows[0] if k.endswith(suffix)] if len(whole_rows) else []
        if not names:
            return np.zeros(len(whole))
        return np.array([r[names[0]] for r in whole_rows], dtype=float)

    n_tokens = column("/n_tokens")
    return {
        "reading/whole": whole,
        "reading/weighted": split.aggregate(values, "weighted"),
        "reading/min": split.aggregate(values, "min"),
        "reading/max": np.array([values[i].max() for i in split.index]),
        "reading/n_sentences": np.array([float(len(i)) for i in split.index]),
        "reading/n_tokens": n_tokens,
        "reading/lm_sum": column("/mean_logprob") * (n_tokens + 1),
    }


def bundle_readings(
    scorer, filled: Sequence[str], parsed=None, *, parse: bool = True, split=None, **options
) -> dict[str, np.ndarray]:
    """`FluencyScorer.readings`: the `READINGS` of texts whose placeholders are filled, from
    `scorer`'s rows and GLEU stage."""
    from features.segment import segment

    if split is None:
        split = segment(filled, by_sentence=True)
    said = text_readings(filled, split)
    if not parse:
        return said
    whole = segment(filled, by_sentence=False)
    sentences = list(dict.fromkeys(whole.sentences + split.sentences))
    rows = dict(zip(sentences, scorer.sentence_rows(sentences, parsed, **options), strict=True))
    whole_rows = [rows[t] for t in whole.sentences]
    split_values = scorer.decision([rows[t] for t in split.sentences])
    whole_values = whole.mean(scorer.decision(whole_rows))
    columns = reading_columns(whole_values, whole.mean_rows(whole_rows), split, split_values)
    return {**columns, **said}
