"""The heads of a bundle: its second stages, the GLEU score and features mapped onto people's scale.

A bundle's first stage is its GLEU stage (`scorer.gleu_stage`); its heads, each fitted on
human scores z-normalised within each judgement file, read its GLEU score and a few columns,
so their output reads "standard deviations above the average judged output". The card's
`heads` holds them by genre, the general head under `heads["general"]` (`card_heads`; a card
written by 0.10.0 or earlier keeps the general head in a section `calibration`, still read).
A section names the inputs in order and the linear weights, served as NumPy arithmetic: no
head is unpickled.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from features.errors import ModelLoadError

__all__ = [
    "DERIVED",
    "GENERAL",
    "GLEU_INPUT",
    "READINGS",
    "SAID_AGAIN",
    "TEXT_READINGS",
    "Calibration",
    "bundle_readings",
    "card_heads",
    "head_columns",
    "load_calibration",
    "load_genre_heads",
    "load_head_section",
    "reading_columns",
    "text_readings",
    "with_derived",
    "without_general_head",
]

GLEU_INPUT = "gleu"
GENERAL = "general"  # the head of every genre, in the card's `heads` beside the genre heads
_OLD_GENERAL = "calibration"  # where cards written by 0.10.0 or earlier keep the general head
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


@dataclass(frozen=True)
class Calibration:
    model: Any  # fitted regressor with `predict`
    inputs: tuple[str, ...]  # "gleu", then feature columns, then any of READINGS
    aggregate: str | None = None  # the reading it was fitted on (None: the scorer's default)
    # Each input's range in the fit (None: unbounded); inputs are clipped to it before the
    # regressor reads them, so it never extrapolates past what people judged.
    clip: tuple[np.ndarray, np.ndarray] | None = None

    @property
    def needs_readings(self) -> bool:
        return any(c in READINGS for c in self.inputs)

    @property
    def needs_parsed_readings(self) -> bool:
        """Whether it reads a reading made from parses, not only `TEXT_READINGS`."""
        return any(c in READINGS and c not in TEXT_READINGS for c in self.inputs)

    @property
    def derived(self) -> tuple[str, ...]:
        """The `DERIVED` columns it reads (added to each sentence's row before folding)."""
        return tuple(c for c in self.inputs if c in DERIVED)

    def apply(
        self,
        gleu: Sequence[float],
        rows: Sequence[Mapping[str, float]],
        readings: Mapping[str, Sequence[float]] | None = None,
    ) -> np.ndarray:
        """Calibrated fluency per text, from its GLEU score, its (aggregated) feature row and,
        when the stage reads them, its `READINGS` (`reading_columns`)."""
        if not len(gleu):
            return np.empty(0)
        blocks = [np.asarray(gleu, dtype=float)[:, None]]
        columns = [c for c in self.inputs[1:] if c not in READINGS]
        if columns:
            blocks.append(np.array([[row[c] for c in columns] for row in rows], dtype=float))
        wanted = [c for c in self.inputs[1:] if c in READINGS]
        if wanted:
            if readings is None:
                raise ModelLoadError("this head reads READINGS: pass `readings`")
            blocks.append(np.column_stack([np.asarray(readings[c], dtype=float) for c in wanted]))
        X = np.hstack(blocks)
        if self.clip is not None:
            X = np.clip(X, *self.clip)
        return np.asarray(self.model.predict(X), dtype=float)


class LinearStage:
    """A linear second stage as NumPy arithmetic: X @ coef + intercept. The card carries it
    (each head's `linear`), so serving a linear head imports no scikit-learn (about 1 s and
    140 MiB a process, as for the GLEU stage's `scorer.gleu_stage`)."""

    def __init__(self, coef: Sequence[float], intercept: float):
        self.coef = np.asarray(coef, dtype=np.float64)
        self.intercept = float(intercept)

    def predict(self, X) -> np.ndarray:
        return np.asarray(X, dtype=np.float64) @ self.coef + self.intercept


def head_columns(card: Mapping[str, Any]) -> list[str]:
    """The columns of the extractors only the card's heads read (`head_features`), or a
    ModelLoadError when one is not registered here."""
    from features import registry
    from features.errors import FeatureError

    out = []
    for name in card.get("head_features") or ():
        try:
            out.extend(registry.get(name).columns)
        except FeatureError as exc:
            raise ModelLoadError(f"a head reads {name!r}, not available here: {exc}") from exc
    return out


def card_heads(card: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """{genre: card section} of every head the card holds, the general head first: its
    `heads`, where the general head is `heads["general"]`, or, in a card written by 0.10.0
    or earlier, its `calibration`."""
    heads = card.get("heads") or {}
    if not isinstance(heads, Mapping):
        raise ModelLoadError("the card's heads must map a genre to a head")
    general = heads.get(GENERAL) or card.get(_OLD_GENERAL)
    out: dict[str, Mapping[str, Any]] = {GENERAL: general} if general else {}
    out.update((str(genre), section) for genre, section in heads.items() if genre != GENERAL)
    return out


def without_general_head(card: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of `card` with its general head removed (new and old places), genre heads kept."""
    out = {k: v for k, v in card.items() if k != _OLD_GENERAL}
    if isinstance(out.get("heads"), Mapping):
        out["heads"] = {k: v for k, v in out["heads"].items() if k != GENERAL}
    return out


def load_calibration(folder: str | Path, card: Mapping[str, Any]) -> Calibration | None:
    """The bundle's general head (`card_heads`), or None when its card has none."""
    section = card_heads(card).get(GENERAL)
    return load_head_section(folder, card, section, what="general head") if section else None


def load_genre_heads(folder: str | Path, card: Mapping[str, Any]) -> dict[str, Calibration]:
    """{genre: head} of the card's genre heads: the second stages fitted for one genre each
    (the general head is `load_calibration`'s)."""
    return {
        genre: load_head_section(folder, card, section, what=f"head {genre!r}")
        for genre, section in card_heads(card).items()
        if genre != GENERAL
    }


def load_head_section(
    folder: str | Path,
    card: Mapping[str, Any],
    section: Mapping[str, Any],
    *,
    what: str = "general head",
) -> Calibration:
    """One second stage of a bundle from its card section, from the card's linear weights; a
    section without them (a pickled head, which is never unpickled) is refused."""
    inputs = tuple(section.get("inputs") or ())
    if not inputs or inputs[0] != GLEU_INPUT:
        raise ModelLoadError(f"{folder}: the card's {what} inputs must start with 'gleu'")
    known = {*card.get("feature_columns", []), *head_columns(card), *READINGS, *DERIVED}
    missing = [c for c in inputs[1:] if c not in known]
    order = [c in READINGS for c in inputs[1:]]
    if order != sorted(order):
        raise ModelLoadError(f"{folder}: the card's {what} inputs put readings last")
    if missing:
        raise ModelLoadError(f"{folder}: the {what} reads columns the model lacks: {missing}")
    clip = _clip(folder, section.get("clip"), len(inputs), what)
    linear = section.get("linear")
    if not linear:  # a head pickled beside the card, as early bundles kept one, is not unpickled
        raise ModelLoadError(
            f"{folder}: the card's {what} has no linear weights; a pickled head is not served: "
            "choose the heads again (python -m training.heads --write)"
        )
    coef = linear.get("coef", [])
    if len(coef) != len(inputs):
        raise ModelLoadError(
            f"{folder}: the card's linear {what} has {len(coef)} weights for {len(inputs)} inputs"
        )
    stage = LinearStage(coef, linear["intercept"])  # NumPy arithmetic: no scikit-learn
    return Calibration(stage, inputs, section.get("aggregate"), clip)


def _clip(folder, section: Mapping[str, Any] | None, n: int, what: str):
    """The card's `clip` bounds as two arrays (None in the card: unbounded), or None."""
    if not section:
        return None
    low = [-np.inf if v is None else float(v) for v in section.get("low", [])]
    high = [np.inf if v is None else float(v) for v in section.get("high", [])]
    if len(low) != n or len(high) != n:
        raise ModelLoadError(
            f"{folder}: the card's {what} clip has {len(low)} and {len(high)} bounds for {n} inputs"
        )
    return np.asarray(low), np.asarray(high)


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
