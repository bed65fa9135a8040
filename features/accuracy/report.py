"""Every reference-based metric for a batch of hypotheses, per segment and for the corpus.

Texts are parsed once (hypotheses and references together, duplicates shared). With several
references a segment keeps, for each accuracy, the best score over references (Bangalore et al.
2000, footnote 7) and says which reference won (`<metric>_ref`, 0-based); the counts reported
beside an accuracy are those of its winning reference. BLEU, chrF and NIST use all references
at once, as they were designed to.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from features.accuracy.alignment import EditCounts
from features.accuracy.bangalore import Comparison, compare
from features.accuracy.dependency import DependencyF
from features.accuracy.ngram import Bleu, Chrf, Nist
from features.parsing import parse, pipeline_name
from features.sentence import Sentence
from scorer.errors import InputError

__all__ = ["METRICS", "AccuracyReport", "score_accuracy"]

METRICS = (
    "simple_string_accuracy",
    "generation_string_accuracy",
    "simple_tree_accuracy",
    "generation_tree_accuracy",
    "understandability_accuracy",
    "quality_accuracy",
    "bleu",
    "chrf",
    "nist",
    "dependency_f",
)
# Which counts go beside which accuracy: (metric, prefix, count source, count fields).
_SIMPLE = (("S", "substitutions"), ("I", "insertions"), ("D", "deletions"), ("R", "ref_len"))
_GENERATION = (
    ("M", "moves"),
    ("I_prime", "move_insertions"),
    ("D_prime", "move_deletions"),
    ("S", "substitutions"),
    ("R", "ref_len"),
)
_FAMILIES = (
    ("simple_string_accuracy", "simple_string", "string", _SIMPLE),
    ("generation_string_accuracy", "generation_string", "string", _GENERATION),
    ("simple_tree_accuracy", "simple_tree", "tree", _SIMPLE),
    ("generation_tree_accuracy", "generation_tree", "tree", _GENERATION),
)
MAX_TOKENS = 1000  # the alignment is quadratic in length: refuse texts that would stall it


@dataclass(frozen=True)
class AccuracyReport:
    """`rows`: one flat dict per segment; `corpus`: corpus-level figures; `signatures`."""

    rows: list[dict[str, float | int]]
    corpus: dict[str, float]
    signatures: dict[str, str] = field(default_factory=dict)
    comparisons: list[list[Comparison]] = field(default_factory=list, repr=False)


def _check(hypotheses, references, reference_trees) -> None:
    if isinstance(hypotheses, str) or isinstance(references, str):
        raise InputError("give a list of hypotheses and a list of reference lists, not a string")
    if len(hypotheses) != len(references):
        raise InputError(
            f"{len(hypotheses)} hypotheses but {len(references)} reference lists; "
            "give one list of references per hypothesis"
        )
    for i, (h, refs) in enumerate(zip(hypotheses, references, strict=True)):
        if not isinstance(h, str):
            raise InputError(f"hypothesis {i} is {type(h).__name__}, expected a string")
        if isinstance(refs, str) or not refs:
            raise InputError(f"segment {i}: references must be a non-empty list of strings")
        for r in refs:
            if not isinstance(r, str) or not r.strip():
                raise InputError(f"segment {i}: a reference is empty or not a string")
    if reference_trees is not None:
        if len(reference_trees) != len(references):
            raise InputError(
                f"{len(reference_trees)} lists of reference trees for {len(references)} segments"
            )
        for i, (trees, refs) in enumerate(zip(reference_trees, references, strict=True)):
            if len(trees) > len(refs):
                raise InputError(f"segment {i}: {len(trees)} trees for {len(refs)} references")


def _best(values: Sequence[float]) -> int:
    return int(np.argmax(values))  # first best on ties: the earlier reference wins


def score_accuracy(
    hypotheses: Sequence[str],
    references: Sequence[Sequence[str]],
    *,
    reference_trees: Sequence[Sequence[Sentence | None]] | None = None,
    model: str | Sequence[str] | None = None,
    lowercase: bool = False,
    n_process: int = 1,
) -> AccuracyReport:
    """Score each hypothesis against its references with every metric in `METRICS`.

    `reference_trees[i][k]`, when given and not None, is a gold tree for reference k of segment i;
    its tokens then stand for that reference in the string and tree accuracies. Dependency F
    always compares spaCy's parses of both sides, so their labels agree.
    """
    _check(hypotheses, references, reference_trees)
    n_refs = [len(r) for r in references]
    texts = list(hypotheses) + [r for refs in references for r in refs]
    parsed = parse(texts, model=model, n_process=n_process)
    for text, sent in zip(texts, parsed, strict=True):
        if sent.n_tokens > MAX_TOKENS:
            raise InputError(
                f"a text has {sent.n_tokens} tokens (starts {text[:40]!r}); at most {MAX_TOKENS} "
                "are accepted: split it into sentences"
            )
    hyp_parses = parsed[: len(hypotheses)]
    ref_parses: list[list[Sentence]] = []
    start = len(hypotheses)
    for k in n_refs:
        ref_parses.append(parsed[start : start + k])
        start += k

    bleu, chrf, nist, depf = (
        Bleu(lowercase=lowercase),
        Chrf(lowercase=lowercase),
        Nist(),
        DependencyF(),
    )
    rows, all_comparisons = [], []
    bleu_stats, chrf_stats, dep_stats = [], [], []
    best_counts: dict[str, list[EditCounts]] = {m: [] for m, *_ in _FAMILIES}
    for i, hyp in enumerate(hyp_parses):
        trees = list(ref_parses[i])
        if reference_trees is not None:
            for k, gold in enumerate(reference_trees[i]):
                if gold is not None:
                    trees[k] = gold
        comparisons = [compare(hyp, tree, lowercase=lowercase) for tree in trees]
        all_comparisons.append(comparisons)
        row: dict[str, float | int] = {"index": i, "hyp_len": hyp.n_tokens}
        for metric, prefix, source, names in _FAMILIES:
            k = _best([getattr(c, metric) for c in comparisons])
            counts = getattr(comparisons[k], source)
            best_counts[metric].append(counts)
            row[metric] = getattr(comparisons[k], metric)
            row.update({f"{prefix}_{short}": getattr(counts, attr) for short, attr in names})
            row[f"{prefix}_ref"] = k
        for metric in ("understandability_accuracy", "quality_accuracy"):
            k = _best([getattr(c, metric) for c in comparisons])
            row[metric] = getattr(comparisons[k], metric)
            row[f"{metric.removesuffix('_accuracy')}_ref"] = k

        refs = list(references[i])
        b, c = bleu.segment_stats(hypotheses[i], refs), chrf.segment_stats(hypotheses[i], refs)
        bleu_stats.append(b)
        chrf_stats.append(c)
        row["bleu"] = bleu.from_stats(b, sentence=True)
        row["chrf"] = chrf.from_stats(c, sentence=True)
        row["nist"] = nist.sentence(_toks(hyp, lowercase), [_toks(t, lowercase) for t in trees])

        dstats = [depf.segment_stats(hyp, ref) for ref in ref_parses[i]]
        k = _best([depf.from_stats(s) for s in dstats])
        dep_stats.append(dstats[k])
        p, r, f = depf.precision_recall_f(dstats[k])
        row.update(dependency_f=f, dependency_precision=p, dependency_recall=r, dependency_ref=k)
        rows.append(row)

    corpus = _corpus(
        rows,
        best_counts,
        bleu,
        chrf,
        nist,
        depf,
        bleu_stats,
        chrf_stats,
        dep_stats,
        hyp_parses,
        ref_parses,
        reference_trees,
        lowercase,
    )
    parser = pipeline_name(model)
    case = "lc" if lowercase else "mixed"
    signatures = {
        "string": f"bangalore2000|tok:{parser}|case:{case}|ins:3|del:3|sub:4",
        "tree": f"bangalore2000|tree:{parser}+gold-conllu-if-given|case:{case}",
        "bleu": bleu.signature(max(n_refs, default=1)),
        "chrf": chrf.signature(max(n_refs, default=1)),
        "nist": nist.signature() + f"|tok:{parser}",
        "dependency_f": depf.signature(parser),
    }
    return AccuracyReport(rows, corpus, signatures, all_comparisons)


def _toks(sentence: Sentence, lowercase: bool) -> list[str]:
    return [t.lower() for t in sentence.tokens] if lowercase else list(sentence.tokens)


def _corpus(
    rows,
    best_counts,
    bleu,
    chrf,
    nist,
    depf,
    bleu_stats,
    chrf_stats,
    dep_stats,
    hyp_parses,
    ref_parses,
    reference_trees,
    lowercase,
) -> dict[str, float]:
    corpus: dict[str, float] = {"n_segments": len(rows)}
    if not rows:
        return corpus
    for metric in METRICS[:6]:
        corpus[f"mean_{metric}"] = float(np.mean([r[metric] for r in rows]))
    # Pooled: problems summed over the corpus over reference tokens summed (a micro average).
    for metric, *_ in _FAMILIES:
        total = sum(best_counts[metric], EditCounts())
        kind = "simple_accuracy" if metric.startswith("simple") else "generation_accuracy"
        corpus[f"pooled_{metric}"] = getattr(total, kind)
    corpus["bleu"] = bleu.from_stats(np.sum(bleu_stats, axis=0))
    corpus["chrf"] = chrf.from_stats(np.sum(chrf_stats, axis=0))
    refs_tokens = []
    for i, refs in enumerate(ref_parses):
        trees = list(refs)
        if reference_trees is not None:
            for k, gold in enumerate(reference_trees[i]):
                if gold is not None:
                    trees[k] = gold
        refs_tokens.append([_toks(t, lowercase) for t in trees])
    corpus["nist"] = nist.corpus([_toks(h, lowercase) for h in hyp_parses], refs_tokens)
    p, r, f = depf.precision_recall_f(np.sum(dep_stats, axis=0))
    corpus.update(dependency_f=f, dependency_precision=p, dependency_recall=r)
    return corpus
