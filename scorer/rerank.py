"""Rerank candidates by fluency and, given references, accuracy.

combined = w_fluency * sigmoid(fluency) + sum over metrics m of w_m * m / scale_m

- fluency is the SVM's signed distance; the logistic squashes it into (0, 1) (0.5 on the
  hyperplane) so that it adds up with accuracies, which are at most 1;
- BLEU and chrF (0-100) are divided by 100; the Bangalore accuracies are used as they are (<= 1,
  negative when a candidate has more problems than the reference has words);
- weights are normalised to sum to 1. Defaults: fluency alone without references;
  with references `DEFAULT_WEIGHTS_WITH_REFS` (fluency 0.4, generation tree accuracy 0.3,
  chrF 0.3): fluency keeps a broken candidate down, tree accuracy rewards the reference's
  structure, chrF its words.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from features.accuracy import METRICS, score_accuracy
from scorer.deadline import in_chunks
from scorer.errors import InputError
from scorer.limits import Limits
from scorer.scoring import FluencyScorer

__all__ = [
    "DEFAULT_WEIGHTS",
    "DEFAULT_WEIGHTS_WITH_REFS",
    "Ranked",
    "RerankInput",
    "check_rerank",
    "check_weights",
    "combine",
    "rank",
    "rerank",
]

DEFAULT_WEIGHTS: dict[str, float] = {"fluency": 1.0}
DEFAULT_WEIGHTS_WITH_REFS: dict[str, float] = {
    "fluency": 0.4,
    "generation_tree_accuracy": 0.3,
    "chrf": 0.3,
}
_SCALE = {"bleu": 100.0, "chrf": 100.0, "nist": 10.0}


@dataclass(frozen=True)
class Ranked:
    index: int  # position in the input
    text: str
    fluency: float  # the head's score where the bundle has heads, else = gleu
    combined: float
    accuracy: dict[str, float] = field(default_factory=dict)
    gleu: float = float("nan")  # the GLEU stage's signed distance


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


def check_weights(weights: Mapping[str, float] | None, has_refs: bool) -> dict[str, float]:
    """The weights normalised to sum to 1; each must be a finite number >= 0, one above 0.

    Divided by the largest first, so weights near the float maximum (1e308) cannot overflow
    their sum to infinity."""
    if weights is None:
        return dict(DEFAULT_WEIGHTS_WITH_REFS if has_refs else DEFAULT_WEIGHTS)
    if not isinstance(weights, Mapping) or not weights:
        raise InputError("weights must be a non-empty object of {name: number}")
    allowed = ("fluency", *METRICS)
    out = {}
    for name, w in weights.items():
        if name not in allowed:
            raise InputError(f"unknown weight {name!r}; one of {', '.join(allowed)}")
        if isinstance(w, bool) or not isinstance(w, int | float) or not math.isfinite(w) or w < 0:
            raise InputError(f"weight {name!r} must be a finite number >= 0, got {w!r}")
        if name != "fluency" and not has_refs:
            raise InputError(f"weight {name!r} needs references; give references or drop it")
        out[name] = float(w)
    largest = max(out.values())
    if largest <= 0:
        raise InputError("weights sum to 0: give at least one positive weight")
    scaled = {k: v / largest for k, v in out.items()}
    total = math.fsum(scaled.values())
    return {k: v / total for k, v in scaled.items()}


def combine(fluency: float, accuracy: Mapping[str, float], weights: Mapping[str, float]) -> float:
    value = weights.get("fluency", 0.0) * _sigmoid(fluency)
    for name, w in weights.items():
        if name != "fluency":
            value += w * accuracy[name] / _SCALE.get(name, 1.0)
    return value


@dataclass(frozen=True)
class RerankInput:
    """A rerank call's inputs, checked: build it with `check_rerank`, run it with `rank`."""

    candidates: list[str]
    references: list[str] | None
    weights: dict[str, float]  # normalised to sum to 1
    top_k: int | None


def check_rerank(
    candidates: Sequence[str],
    references: Sequence[str] | None = None,
    *,
    weights: Mapping[str, float] | None = None,
    top_k: int | None = None,
    limits: Limits | None = None,
) -> RerankInput:
    """Every check of a rerank call, once, before any work: counts, lengths, characters and the
    cost of the alignments (`limits`), the weights, `top_k`."""
    cands, refs = (limits or Limits()).rerank(candidates, references)
    used = check_weights(weights, refs is not None)
    if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1):
        raise InputError(f"top_k must be a positive integer, got {top_k!r}")
    return RerankInput(cands, refs, used, top_k)


def rank(
    scorer: FluencyScorer, inputs: RerankInput, check: Callable[[], None] | None = None
) -> list[Ranked]:
    """Candidates best first. Each candidate is parsed once; the parse serves both scores.

    `check` is called between chunks of work (`scorer.deadline`); whatever it raises stops
    the call."""
    candidates, refs, weights = inputs.candidates, inputs.references, inputs.weights
    accuracy: list[dict[str, float]] = [{} for _ in candidates]
    if refs is None:  # fluency alone: cached candidates are not even parsed
        scores = in_chunks(scorer.score_texts, candidates, check)
    else:
        parses = in_chunks(scorer.annotate, candidates + refs, check)
        scores = in_chunks(scorer.score_sentences, parses[: len(candidates)], check)
        known = {t: p for t, p in zip(candidates + refs, parses, strict=True)}
        report = score_accuracy(
            candidates,
            [refs] * len(candidates),
            parses=known,
            model=scorer.spacy_model,
            check=check,
        )
        accuracy = [{m: float(row[m]) for m in METRICS} for row in report.rows]
    ranked = [
        Ranked(i, c, s.score, combine(s.score, acc, weights), acc, s.gleu)
        for i, (c, s, acc) in enumerate(zip(candidates, scores, accuracy, strict=True))
    ]
    ranked.sort(key=lambda r: (-r.combined, r.index))
    return ranked[: inputs.top_k] if inputs.top_k else ranked


def rerank(
    scorer: FluencyScorer,
    candidates: Sequence[str],
    references: Sequence[str] | None = None,
    *,
    weights: Mapping[str, float] | None = None,
    top_k: int | None = None,
    limits: Limits | None = None,
    check: Callable[[], None] | None = None,
    genre: str | None = None,
) -> list[Ranked]:
    """Candidates best first: `check_rerank`, then `rank`; fluency from the bundle's head for
    `genre` (`FluencyScorer.for_genre`; None: the head it scores with already)."""
    scorer = scorer.for_genre(genre)
    inputs = check_rerank(candidates, references, weights=weights, top_k=top_k, limits=limits)
    return rank(scorer, inputs, check)
