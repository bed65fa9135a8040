"""Scoring a batch of rows where one bad row costs only itself: a null score and a reason.

`FluencyScorer.score_texts` and `score_accuracy` take a batch whole, and one text spaCy refuses
(over `nlp.max_length` characters, a million by default) or one empty reference fails the whole
call. Files of millions of rows must not stop at such a row, nor lose its neighbours: rows that
are bound to fail are set aside first (cheap checks); if the batch still fails, each row is
scored on its own, so only the rows that fail alone get no score. Rows keep their order.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover - spaCy and the model load only when a row is scored
    from scorer.scoring import FluencyScorer, Score

__all__ = ["EMPTY", "AccuracyBatch", "Outcome", "accuracy_rows", "parser_limit", "score_rows"]

logger = logging.getLogger(__name__)

EMPTY = "empty: nothing to score"  # an empty line is a segment too: kept, quietly unscored


@dataclass(frozen=True)
class Outcome:
    """One row's result: `score` (None when not scored) and why not (`reason`)."""

    score: Score | None = None
    reason: str | None = None


def parser_limit(spacy_model: str | Sequence[str] | None = None) -> int:
    """The longest text, in characters, the spaCy pipeline accepts (`nlp.max_length`)."""
    from features.parsing import load_nlp

    return int(load_nlp(spacy_model).max_length)


def _why_not(text: Any, limit: int | None) -> str | None:
    from scorer.limits import is_blank

    if not isinstance(text, str):
        return f"not a string but {type(text).__name__}"
    if is_blank(text):  # whitespace and invisible format characters only, as in check_texts
        return EMPTY
    if limit is not None and len(text) > limit:
        return f"{len(text):,} characters, more than the parser's limit of {limit:,}"
    return None


def _failure(exc: Exception) -> str:
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {first[:300]}" if first else type(exc).__name__


def score_rows(
    scorer: FluencyScorer,
    texts: Sequence[Any],
    *,
    with_features: bool = False,
    aggregate: str | None = None,
) -> list[Outcome]:
    """One `Outcome` per text, same order; a text that cannot be scored gets a reason instead.

    `aggregate` is how a text of several sentences is read (`FluencyScorer.score_texts`; None:
    the scorer's default). The length check is on the whole text either way: splitting it into
    sentences runs spaCy over the whole of it too."""
    limit = parser_limit(scorer.spacy_model)
    out = [Outcome(reason=_why_not(t, limit)) for t in texts]
    todo = [i for i, o in enumerate(out) if o.reason is None]

    def run(rows: list[int]) -> None:
        scored = scorer.score_texts(
            [texts[i] for i in rows], with_features=with_features, aggregate=aggregate
        )
        for i, s in zip(rows, scored, strict=True):
            out[i] = Outcome(score=s)

    try:
        if todo:
            run(todo)
    except Exception as exc:  # one row failed the batch: find it, score the others
        logger.info("a batch of %d texts failed (%s); scoring them one by one", len(todo), exc)
        for i in todo:
            try:
                run([i])
            except Exception as one:
                out[i] = Outcome(reason=_failure(one))
    return out


@dataclass
class AccuracyBatch:
    """`rows[i]`: segment i's metrics, or None (then `reasons[i]` says why); `corpus` and
    `signatures` cover the scored segments only."""

    rows: list[dict[str, Any] | None]
    reasons: list[str | None]
    corpus: dict[str, float] = field(default_factory=dict)
    signatures: dict[str, str] = field(default_factory=dict)

    def keys(self) -> list[str]:
        return next((list(r) for r in self.rows if r is not None), [])


def _hyp_why_not(text: Any, limit: int) -> str | None:
    """An empty hypothesis is scored (it misses every reference token); a missing one is not."""
    return None if isinstance(text, str) and not text.strip() else _why_not(text, limit)


def _refs_why_not(refs: Any) -> str | None:
    if isinstance(refs, str) or not isinstance(refs, Sequence) or not refs:
        return "no reference: give at least one per hypothesis"
    if any(not isinstance(r, str) or not r.strip() for r in refs):
        return "a reference is empty or not a string"
    return None


def accuracy_rows(
    hypotheses: Sequence[Any],
    references: Sequence[Any],
    *,
    reference_trees: Sequence[Sequence[Any]] | None = None,
    **options: Any,
) -> AccuracyBatch:
    """`score_accuracy`, row by row only where it must be: see the module's docstring.
    `options` go to `score_accuracy` (model, lowercase, n_process)."""
    from features.accuracy import score_accuracy

    limit = parser_limit(options.get("model"))
    reasons: list[str | None] = [
        _hyp_why_not(h, limit) or _refs_why_not(r)
        for h, r in zip(hypotheses, references, strict=True)
    ]
    for i, refs in enumerate(references):
        if reasons[i] is None and any(len(r) > limit for r in refs):
            reasons[i] = f"a reference is longer than the parser's limit of {limit:,} characters"

    def run(idx: list[int]):
        return score_accuracy(
            [hypotheses[i] for i in idx],
            [list(references[i]) for i in idx],
            reference_trees=[reference_trees[i] for i in idx] if reference_trees else None,
            **options,
        )

    good = [i for i, r in enumerate(reasons) if r is None]
    try:
        report = run(good)
    except Exception as exc:
        logger.info("accuracy over %d segments failed (%s); one by one", len(good), exc)
        for i in good:
            try:
                run([i])
            except Exception as one:
                reasons[i] = _failure(one)
        good = [i for i, r in enumerate(reasons) if r is None]
        report = run(good)
    rows: list[dict[str, Any] | None] = [None] * len(reasons)
    for i, row in zip(good, report.rows, strict=True):
        rows[i] = {**row, "index": i} if "index" in row else row  # the row's, not the subset's
    return AccuracyBatch(rows, reasons, report.corpus, report.signatures)
