"""Per-row statistics of several systems under one metric, ready for `scorer.evidence.significance`.

Every system answers the same inputs in the same order; row i of each matrix is its output for
input i. Per-sentence scores (fluency, the Bangalore accuracies) are one column whose mean is
the system score; BLEU, chrF, NIST and dependency F keep their sufficient statistics, so the
tests resample rows and never re-tokenise or re-parse.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from features.accuracy.report import METRICS
from scorer.errors import InputError

__all__ = ["CORPUS_METRICS", "SENTENCE_METRICS", "SystemStats", "score_texts", "system_stats"]

# The accuracy module's metric list, split by how they resample: per-sentence scores (with
# fluency) against corpus metrics rebuilt from sufficient statistics.
SENTENCE_METRICS = ("fluency", *(m for m in METRICS if m.endswith("_accuracy")))
CORPUS_METRICS = tuple(m for m in METRICS if not m.endswith("_accuracy"))


@dataclass(frozen=True)
class SystemStats:
    """`stats[name]`: (rows, k) matrix; `from_stats` None means the mean of column 0."""

    metric: str
    stats: dict[str, np.ndarray]
    from_stats: Callable[[np.ndarray], float] | None
    signature: str


def _check(systems: Mapping[str, Sequence[str]], references) -> int:
    if len(systems) < 2:
        raise InputError(f"need at least two systems to compare; got {len(systems)}")
    lengths = {name: len(h) for name, h in systems.items()}
    if len(set(lengths.values())) != 1:
        raise InputError(f"systems differ in length {lengths}; each needs one line per input")
    n = next(iter(lengths.values()))
    if n < 2:
        raise InputError(f"paired tests need at least 2 inputs; got {n}")
    if references is not None and len(references) != n:
        raise InputError(f"{len(references)} reference lists for {n} lines per system")
    return n


def system_stats(
    metric: str,
    systems: Mapping[str, Sequence[str]],
    references: Sequence[Sequence[str]] | None = None,
    *,
    scorer=None,
    spacy_model: str | None = None,
    lowercase: bool = False,
) -> SystemStats:
    """Statistics of every system under `metric`. `scorer`: a `FluencyScorer` for "fluency"."""
    if metric not in SENTENCE_METRICS + CORPUS_METRICS:
        raise InputError(
            f"unknown metric {metric!r}; choose from {SENTENCE_METRICS + CORPUS_METRICS}"
        )
    _check(systems, references)
    if metric == "fluency":
        if scorer is None:
            raise InputError("metric 'fluency' needs a fluency model (give --model)")
        stats = {s: _fluency(scorer, h) for s, h in systems.items()}
        genre = getattr(scorer, "genre", None)  # a genre head names itself in the signature
        head = f"|genre:{genre}" if genre else ""
        return SystemStats(metric, stats, None, f"fluency|model:{scorer.name}{head}|mean")
    if references is None:
        raise InputError(f"metric {metric!r} compares with references: give --ref")
    if metric in ("bleu", "chrf"):
        from features.accuracy import Bleu, Chrf

        m = Bleu(lowercase=lowercase) if metric == "bleu" else Chrf(lowercase=lowercase)
        stats = {s: m.corpus_stats(list(h), references) for s, h in systems.items()}
        n_refs = max(len(r) for r in references)
        return SystemStats(metric, stats, m.from_stats, m.signature(n_refs))
    return _parsed_stats(metric, systems, references, spacy_model, lowercase)


def score_texts(scorer, texts: Sequence[str]) -> list[float | None]:
    """Model scores, None for a blank output: the model refuses to score nothing."""
    out: list[float | None] = [None] * len(texts)
    keep = [i for i, t in enumerate(texts) if t.strip()]
    for i, value in zip(keep, scorer.score([texts[i] for i in keep]) if keep else [], strict=True):
        out[i] = float(value)
    return out


def _fluency(scorer, texts: Sequence[str]) -> np.ndarray:
    """One column of scores; NaN for a blank output (the paired tests then leave that row out
    of the pairs it is in: `all_pairs(..., missing="drop")`)."""
    return np.array([[np.nan if s is None else s] for s in score_texts(scorer, texts)])


def _parsed_stats(metric, systems, references, spacy_model, lowercase) -> SystemStats:
    from features.accuracy import DependencyF, Nist, score_accuracy
    from features.parsing import parse, pipeline_name

    texts = list(
        dict.fromkeys(
            [*(t for h in systems.values() for t in h), *(r for rs in references for r in rs)]
        )
    )
    parses = dict(zip(texts, parse(texts, model=spacy_model, lemmas=False), strict=True))
    parser = pipeline_name(spacy_model)

    def toks(text: str) -> list[str]:
        tokens = parses[text].tokens
        return [t.lower() for t in tokens] if lowercase else list(tokens)

    if metric == "nist":
        nist = Nist()
        ref_tokens = [[toks(r) for r in rs] for rs in references]
        weights = nist.information_weights(ref_tokens)  # from the references: the same for all
        stats = {
            s: np.vstack(
                [
                    nist.segment_stats(toks(t), r, weights=weights)
                    for t, r in zip(h, ref_tokens, strict=True)
                ]
            )
            for s, h in systems.items()
        }
        return SystemStats(metric, stats, nist.from_stats, f"{nist.signature()}|tok:{parser}")
    if metric == "dependency_f":
        depf = DependencyF()
        stats = {}
        for s, h in systems.items():
            rows = []
            for t, rs in zip(h, references, strict=True):
                candidates = [depf.segment_stats(parses[t], parses[r]) for r in rs]
                rows.append(max(candidates, key=depf.from_stats))  # best reference, as the report
            stats[s] = np.vstack(rows)
        return SystemStats(metric, stats, depf.from_stats, depf.signature(parser))
    stats = {}
    for s, h in systems.items():
        report = score_accuracy(
            list(h), references, model=spacy_model, lowercase=lowercase, parses=parses
        )
        stats[s] = np.array([[row[metric]] for row in report.rows], dtype=float)
    case = "lc" if lowercase else "mixed"
    return SystemStats(metric, stats, None, f"{metric}|bangalore2000|tok:{parser}|case:{case}|mean")
