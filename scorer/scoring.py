"""`FluencyScorer`: texts in, GLEU scores out (the SVM's signed distance to its hyperplane)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from features.parsing import parse
from features.resources import MODELS_DIR, Resources
from features.sentence import Sentence
from scorer.errors import InputError, ModelLoadError
from scorer.model import load_model

__all__ = ["FluencyScorer", "Score", "check_texts", "load_configured", "load_scorer"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Score:
    text: str
    score: float  # > 0: on the side of real sentences; larger is more fluent
    features: dict[str, float] = field(default_factory=dict)


def check_texts(
    texts: Sequence[Any],
    *,
    max_batch: int | None = None,
    max_chars: int | None = None,
    what: str = "sentences",
) -> list[str]:
    """Refuse what cannot be scored, with a reason: not a list, not strings, empty, too many,
    too long. Control characters and odd Unicode are scored as they are."""
    if isinstance(texts, str) or not isinstance(texts, Sequence):
        raise InputError(f"{what} must be a list of strings, got {type(texts).__name__}")
    if not texts:
        raise InputError(f"{what} is empty: give at least one text")
    if max_batch is not None and len(texts) > max_batch:
        raise InputError(f"{len(texts)} {what}, at most {max_batch} per call")
    out = []
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise InputError(f"{what}[{i}] is {type(t).__name__}, expected a string")
        if not t.strip():
            raise InputError(f"{what}[{i}] is empty or whitespace: nothing to score")
        if max_chars is not None and len(t) > max_chars:
            raise InputError(f"{what}[{i}] has {len(t)} characters, at most {max_chars}")
        out.append(t)
    return out


class FluencyScorer:
    """A loaded model with the resources (LM, parsers) its features need, loaded once."""

    def __init__(
        self,
        pipeline,
        card: dict[str, Any],
        *,
        spacy_model: str | None = None,
        resources: Resources | None = None,
    ):
        self.pipeline = pipeline
        self.card = card
        self.spacy_model = spacy_model
        self.resources = resources or Resources(spacy_model=spacy_model)

    @property
    def name(self) -> str:
        return str(self.card.get("name", "unnamed"))

    def annotate(self, texts: Sequence[str]) -> list[Sentence]:
        return parse(texts, model=self.spacy_model)

    def features(self, sentences: Sequence[Sentence]) -> list[dict[str, float]]:
        return self.pipeline.named_steps["extract"].transform(sentences, self.resources)

    def score_sentences(
        self, sentences: Sequence[Sentence], *, with_features: bool = False
    ) -> list[Score]:
        """Score already-parsed sentences (so a caller that also needs the parse shares it)."""
        rows = self.features(sentences)
        tail = self.pipeline[1:]
        values = tail.decision_function(rows) if rows else []
        return [
            Score(s.text, float(v), row if with_features else {})
            for s, v, row in zip(sentences, values, rows, strict=True)
        ]

    def score(self, texts: Sequence[str]) -> list[float]:
        """One fluency score per text, same order."""
        texts = check_texts(texts)
        return [s.score for s in self.score_sentences(self.annotate(texts))]

    def score_detailed(self, texts: Sequence[str]) -> list[Score]:
        texts = check_texts(texts)
        return self.score_sentences(self.annotate(texts), with_features=True)


def load_scorer(
    path: str | Path, *, models_dir: str | Path = MODELS_DIR, spacy_model: str | None = None
) -> FluencyScorer:
    """Load a model bundle (checked: place, hash, feature set) and the resources it names."""
    pipeline, card = load_model(path, models_dir)
    res = card.get("resources", {})

    def where(key: str) -> Path | None:
        """A recorded artefact: relative to `models_dir`, else to the shipped models/."""
        if not res.get(key):
            return None
        for base in (Path(models_dir), MODELS_DIR):
            if (base / res[key]).is_file():
                return base / res[key]
        raise ModelLoadError(
            f"model {path} needs {res[key]} ({key}), found neither in {models_dir} nor in "
            f"{MODELS_DIR}"
        )

    resources = Resources(
        spacy_model=spacy_model,
        lm_path=where("lm"),
        unigram_path=where("unigrams"),
        benepar_path=where("benepar"),
    )
    return FluencyScorer(pipeline, card, spacy_model=spacy_model, resources=resources)


def load_configured(model: str | Path | None, config: dict) -> FluencyScorer:
    """`load_scorer` with the settings of `scorer.config` (the CLI's `--model`, else the
    configured MODEL_PATH)."""
    return load_scorer(
        model or config["MODEL_PATH"],
        models_dir=config["MODELS_DIR"],
        spacy_model=config["SPACY_MODEL"],
    )
