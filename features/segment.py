"""Texts into sentences, and sentence values back into one value per text.

GLEU is a sentence-level score (Mutton et al. 2007): the model learns from single sentences, so a
text of three sentences, read whole, looks like three fragments (extra dependency roots, nulls in
Link Grammar, a FRAG at the top of the constituency tree) and scores as broken. Generators often
write several sentences (WebNLG 2017: 899 of 2,230 outputs; summaries, always), so a text is
split where its writer ended a sentence, each sentence is scored, and the text's score is the
mean of its sentences' scores weighted by their token counts. A single sentence is unchanged.

Read whole or split, and folded how: `AGGREGATES`. The default, "weighted", is the choice of
`fluency benchmark --aggregate all` over all eight development sets at once (docs/agreement.md):
it has the highest mean over the sets of both Spearman's rho (0.259; whole 0.246) and the
per-input Kendall tau (0.192; whole 0.155), and lifts multi-sentence summaries (Newsroom: rho
0.07 -> 0.39, tau 0.02 -> 0.33); it also scores two correct sentences above their run-on. Reading
whole agrees better on WebNLG 2017, MQM and E2E (rho 0.386 / 0.150 / 0.057 against 0.301 / 0.081 /
-0.002), where people rate outputs of several sentences lower and the whole reading, which
penalises a second root, carries that signal; `aggregate="whole"` keeps it.

The split is spaCy's rule-based `Sentencizer` (sentence-final punctuation tokens) on a blank
English tokenizer, not the statistical parser: where the parser splits a broken sentence into
fragments is itself the signal the features measure, and must not be taken away before they see
it. Tokenizer exceptions keep "Mr.", "U.S." and "a." whole; a piece with no letter or digit
("...", a stray ".") joins the sentence before it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from features.errors import InputError
from features.optional_imports import import_spacy
from features.parsing import memory_zone

__all__ = [
    "AGGREGATES",
    "DEFAULT_AGGREGATE",
    "Segmentation",
    "resolve_aggregate",
    "segment",
    "split_sentences",
]

# How a text's value is made from its sentences' values (`Segmentation.aggregate`):
# "whole": the text is not split, it is read as one sentence; "weighted": the mean of its
# sentences weighted by their token counts; "mean": the plain mean of its sentences; "min": its
# least fluent sentence (a text is as fluent as its worst sentence); "sum": its sentences'
# values added up (a log-probability summed over sentences is the text's, nearly: the mass a
# longer text loses stays in its score). One sentence: all the same.
AGGREGATES = ("whole", "weighted", "mean", "min", "sum")
DEFAULT_AGGREGATE = "weighted"


@functools.cache
def _sentencizer():
    nlp = import_spacy().blank("en")
    nlp.add_pipe("sentencizer")
    return nlp


@functools.cache
def _sentence_ends() -> frozenset[str]:
    # The characters `_sentencizer`'s component ends a sentence after (it is built with the
    # defaults), read from its class: building the blank pipeline costs about 0.3 s of a
    # process's start-up, and a text with none of them inside never needs it.
    import_spacy()
    from spacy.pipeline.sentencizer import Sentencizer

    return frozenset(Sentencizer.default_punct_chars)


def _surely_one_sentence(text: str) -> bool:
    """True when the sentencizer cannot split `text`: it starts a sentence only after a token
    that is one of its sentence-final characters, so a text with none of them before its
    trailing punctuation is one sentence. Most candidates a reranker sends are; the check
    skips building a Doc for them (splitting was 8% of scoring ten candidates with the
    fast model)."""
    ends = _sentence_ends()
    body = text.rstrip()
    while body and (body[-1] in ends or body[-1] in _CLOSERS or body[-1].isspace()):
        body = body[:-1]
    return bool(text.strip()) and not any(ch in ends for ch in body)


# Closing quotes and brackets after a sentence's end: punctuation tokens that start nothing.
_CLOSERS = frozenset("\"')]}\u2019\u201d\u00bb")


def split_sentences(text: str) -> list[tuple[str, int]]:
    """The sentences of `text`, each with its number of tokens, in order. The sentences are
    substrings of `text` (surrounding whitespace stripped); a text with no sentence-final
    punctuation inside is one sentence, itself. (For a text of one sentence the count is 1:
    only the sentences' shares of a text's tokens are ever used.)"""
    if _surely_one_sentence(text):
        return [(text.strip(), 1)]
    return _sentencizer_split(text)


def _sentencizer_split(text: str) -> list[tuple[str, int]]:
    nlp = _sentencizer()
    with memory_zone(nlp):  # its vocabulary grows with every new word too (features.parsing)
        doc = nlp(text)
        return _pieces(text, doc)


def _pieces(text: str, doc) -> list[tuple[str, int]]:
    pieces: list[list] = []  # [start_char, end_char, n_tokens]
    for sent in doc.sents:
        if not any(ch.isalnum() for ch in sent.text):
            if pieces:  # trailing punctuation or symbols: part of the sentence before
                pieces[-1][1] = sent.end_char
                pieces[-1][2] += len(sent)
                continue
        elif pieces and not any(ch.isalnum() for ch in text[pieces[-1][0] : pieces[-1][1]]):
            # a leading piece with no word ("... Then it rose.") joins the first real sentence
            pieces[-1][1] = sent.end_char
            pieces[-1][2] += len(sent)
            continue
        pieces.append([sent.start_char, sent.end_char, len(sent)])
    out = [(text[a:b].strip(), n) for a, b, n in pieces]
    out = [(s, n) for s, n in out if s]
    return out or [(text, max(len(doc), 1))]


@dataclass(frozen=True)
class Segmentation:
    """Distinct sentences of a batch of texts, and how to fold per-sentence values back."""

    sentences: list[str]  # each distinct sentence once, in first-seen order
    index: list[np.ndarray]  # per text: positions of its sentences in `sentences`
    weights: list[np.ndarray]  # per text: token shares of its sentences (sum 1)

    def mean(self, values: Sequence[float] | np.ndarray) -> np.ndarray:
        """Per-sentence values (shape (n_sentences,) or (n_sentences, k)) -> per text, the
        token-weighted mean (shape (n_texts,) or (n_texts, k))."""
        values = np.asarray(values, dtype=float)
        if len(self.index) == 0:
            return values[:0]
        return np.stack([w @ values[i] for i, w in zip(self.index, self.weights, strict=True)])

    def aggregate(self, values: Sequence[float] | np.ndarray, how: str) -> np.ndarray:
        """Per-sentence values (n_sentences,) -> one per text, folded as `how` says
        (`AGGREGATES`; "whole" segmentations hold one sentence a text, so any fold is exact)."""
        values = np.asarray(values, dtype=float)
        if how in ("whole", "weighted"):
            return self.mean(values)
        if len(self.index) == 0:
            return values[:0]
        if how == "mean":
            return np.array([values[i].mean() for i in self.index])
        if how == "min":
            return np.array([values[i].min() for i in self.index])
        if how == "sum":
            return np.array([values[i].sum() for i in self.index])
        raise InputError(f"unknown aggregate {how!r}; choose from {', '.join(AGGREGATES)}")

    def aggregate_rows(
        self,
        rows: Sequence[dict[str, float]],
        how: str,
        values: Sequence[float] | np.ndarray | None = None,
    ) -> list[dict[str, float]]:
        """Feature rows per sentence -> one per text, the way `aggregate` folds the scores:
        token-weighted or plain means; for "min", the row of the sentence whose value (`values`,
        the per-sentence scores) is lowest, so a text's features explain its score."""
        if how in ("whole", "weighted"):
            return self.mean_rows(rows)
        if how in ("mean", "sum"):
            each = [np.full(len(i), 1.0 if how == "sum" else 1.0 / len(i)) for i in self.index]
            return Segmentation(self.sentences, self.index, each).mean_rows(rows)
        if how == "min":
            if values is None:
                raise InputError('aggregate "min" needs the per-sentence values to pick rows')
            values = np.asarray(values, dtype=float)
            return [dict(rows[i[int(np.argmin(values[i]))]]) for i in self.index]
        raise InputError(f"unknown aggregate {how!r}; choose from {', '.join(AGGREGATES)}")

    def mean_rows(self, rows: Sequence[dict[str, float]]) -> list[dict[str, float]]:
        """Feature rows per sentence -> one row per text, each value its token-weighted mean
        (a single-sentence text keeps its row exactly). Each mean is an exactly rounded sum of
        exactly rounded products (`math.fsum`), the same on every CPU: a BLAS dot product sums
        in the order its kernel for the CPU picks, and the last bit it changes breaks ties
        between texts differently from one machine to the next."""
        if not rows:
            return [{} for _ in self.index]
        keys = list(rows[0])
        table = np.array([[r[k] for k in keys] for r in rows], dtype=float)
        out = []
        for i, w in zip(self.index, self.weights, strict=True):
            if len(i) == 1:
                out.append(dict(rows[i[0]]))
            else:
                terms = (np.asarray(w, dtype=float)[:, None] * table[i]).T.tolist()
                out.append({k: math.fsum(t) for k, t in zip(keys, terms, strict=True)})
        return out


def resolve_aggregate(by_sentence: bool | None = None, aggregate: str | None = None) -> str:
    """The aggregate a caller asked for: `aggregate` if given, else `by_sentence` (True: the
    token-weighted mean, False: whole), else `DEFAULT_AGGREGATE`."""
    if aggregate is not None:
        if aggregate not in AGGREGATES:
            raise InputError(
                f"unknown aggregate {aggregate!r}; choose from {', '.join(AGGREGATES)}"
            )
        return aggregate
    if by_sentence is not None:
        return "weighted" if by_sentence else "whole"
    return DEFAULT_AGGREGATE


def segment(texts: Sequence[str], *, by_sentence: bool = True) -> Segmentation:
    """Split every text (`split_sentences`); a sentence that occurs twice is kept once. With
    `by_sentence=False` each text is taken whole, as one sentence (the glue test's items: one
    sentence of n tokens each by construction, whatever punctuation the glue put inside)."""
    position: dict[str, int] = {}
    index, weights = [], []
    for text in texts:
        parts = split_sentences(text) if by_sentence else [(text, 1)]
        ids = [position.setdefault(s, len(position)) for s, _ in parts]
        n = np.array([n for _, n in parts], dtype=float)
        index.append(np.array(ids, dtype=int))
        weights.append(n / n.sum())
    return Segmentation(list(position), index, weights)
