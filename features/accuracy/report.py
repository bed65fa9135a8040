"""Every reference-based metric for a batch of hypotheses, per segment and for the corpus.

Texts are parsed once (hypotheses and references together, duplicates shared). With several
references a segment keeps, for each accuracy, the best score over references (Bangalore et al.
2000, footnote 7) and says which reference won (`<metric>_ref`, 0-based); the counts reported
beside an accuracy are those of its winning reference. BLEU, chrF and NIST use all references
at once, as they were designed to.
"""

from __future__ import annotations

import itertools
import multiprocessing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from features.accuracy.alignment import EditCounts
from features.accuracy.bangalore import Comparison, compare
from features.accuracy.dependency import DependencyF
from features.accuracy.ngram import Bleu, Chrf, Nist
from features.errors import InputError
from features.parsing import load_nlp, parse, pipeline_name
from features.sentence import Sentence

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


@dataclass
class _Part:
    """Everything a run over some segments contributes to the corpus figures."""

    rows: list[dict[str, float | int]]
    bleu: list[np.ndarray]
    chrf: list[np.ndarray]
    dep: list[np.ndarray]
    counts: dict[str, list[EditCounts]]
    hyp_tokens: list[list[str]]
    ref_tokens: list[list[list[str]]]
    comparisons: list[list[Comparison]]


def _score_part(
    hypotheses, references, reference_trees, model, lowercase, offset=0, known=None, check=None
) -> _Part:
    """Parse a slice of the segments (hypotheses and references together, once) and score it.

    `known`: parses the caller already has, by text (the service shares the fluency parse).
    `check`: called before each alignment; whatever it raises stops the work.
    """
    check = check or (lambda: None)
    n_refs = [len(r) for r in references]
    texts = list(hypotheses) + [r for refs in references for r in refs]
    known = known or {}
    todo = [t for t in texts if t not in known]
    # Accuracy reads tokens and trees only: skip the lemmatizer.
    fresh = dict(zip(todo, parse(todo, model=model, lemmas=False), strict=True))
    parsed = [known.get(t) or fresh[t] for t in texts]
    for text, sent in zip(texts, parsed, strict=True):
        if sent.n_tokens > MAX_TOKENS:
            raise InputError(
                f"a text has {sent.n_tokens} tokens (starts {text[:40]!r}); at most {MAX_TOKENS} "
                "are accepted: split it into sentences"
            )
    hyp_parses, ref_parses, start = parsed[: len(hypotheses)], [], len(hypotheses)
    for k in n_refs:
        ref_parses.append(parsed[start : start + k])
        start += k

    bleu, chrf, nist, depf = (
        Bleu(lowercase=lowercase),
        Chrf(lowercase=lowercase),
        Nist(),
        DependencyF(),
    )
    part = _Part([], [], [], [], {m: [] for m, *_ in _FAMILIES}, [], [], [])
    for i, hyp in enumerate(hyp_parses):
        trees = list(ref_parses[i])
        if reference_trees is not None:
            for k, gold in enumerate(reference_trees[i]):
                if gold is not None:
                    trees[k] = gold
        comparisons = []
        for tree in trees:
            check()
            comparisons.append(compare(hyp, tree, lowercase=lowercase))
        part.comparisons.append(comparisons)
        row: dict[str, float | int] = {"index": offset + i, "hyp_len": hyp.n_tokens}
        for metric, prefix, source, names in _FAMILIES:
            k = _best([getattr(c, metric) for c in comparisons])
            counts = getattr(comparisons[k], source)
            part.counts[metric].append(counts)
            row[metric] = getattr(comparisons[k], metric)
            row.update({f"{prefix}_{short}": getattr(counts, attr) for short, attr in names})
            row[f"{prefix}_ref"] = k
        for metric in ("understandability_accuracy", "quality_accuracy"):
            k = _best([getattr(c, metric) for c in comparisons])
            row[metric] = getattr(comparisons[k], metric)
            row[f"{metric.removesuffix('_accuracy')}_ref"] = k

        refs = list(references[i])
        b, c = bleu.segment_stats(hypotheses[i], refs), chrf.segment_stats(hypotheses[i], refs)
        part.bleu.append(b)
        part.chrf.append(c)
        row["bleu"] = bleu.from_stats(b, sentence=True)
        row["chrf"] = chrf.from_stats(c, sentence=True)
        hyp_tokens = _toks(hyp, lowercase)
        ref_tokens = [_toks(t, lowercase) for t in trees]
        part.hyp_tokens.append(hyp_tokens)
        part.ref_tokens.append(ref_tokens)
        row["nist"] = nist.sentence(hyp_tokens, ref_tokens)

        dstats = [depf.segment_stats(hyp, ref) for ref in ref_parses[i]]
        k = _best([depf.from_stats(s) for s in dstats])
        part.dep.append(dstats[k])
        p, r, f = depf.precision_recall_f(dstats[k])
        row.update(dependency_f=f, dependency_precision=p, dependency_recall=r, dependency_ref=k)
        part.rows.append(row)
    return part


def _score_chunk(args) -> _Part:
    return _score_part(*args)


def _run(
    hypotheses, references, reference_trees, model, lowercase, n_process, known, check
) -> _Part:
    """Score in `n_process` forked workers, each parsing and scoring a contiguous slice.

    Parsing and the alignments are both CPU-bound, so whole slices go to workers (spaCy's own
    `n_process` would parallelise the parse only). The pipeline is loaded before the fork and
    shared copy-on-write.
    """
    n = len(hypotheses)
    if n_process <= 1 or n < 200:
        return _score_part(
            hypotheses, references, reference_trees, model, lowercase, 0, known, check
        )
    load_nlp(model)
    bounds = np.linspace(0, n, n_process + 1).astype(int)
    jobs = [
        (
            list(hypotheses[a:b]),
            list(references[a:b]),
            None if reference_trees is None else list(reference_trees[a:b]),
            model,
            lowercase,
            int(a),
        )
        for a, b in itertools.pairwise(bounds)
    ]
    with multiprocessing.get_context("fork").Pool(n_process) as pool:
        parts = pool.map(_score_chunk, jobs)
    merged = parts[0]
    for part in parts[1:]:
        for name in ("rows", "bleu", "chrf", "dep", "hyp_tokens", "ref_tokens", "comparisons"):
            getattr(merged, name).extend(getattr(part, name))
        for metric in merged.counts:
            merged.counts[metric].extend(part.counts[metric])
    return merged


def score_accuracy(
    hypotheses: Sequence[str],
    references: Sequence[Sequence[str]],
    *,
    reference_trees: Sequence[Sequence[Sentence | None]] | None = None,
    model: str | Sequence[str] | None = None,
    lowercase: bool = False,
    n_process: int = 1,
    parses: Mapping[str, Sentence] | None = None,
    check: Callable[[], None] | None = None,
) -> AccuracyReport:
    """Score each hypothesis against its references with every metric in `METRICS`.

    `reference_trees[i][k]`, when given and not None, is a gold tree for reference k of segment i;
    its tokens then stand for that reference in the string and tree accuracies and NIST.
    Dependency F always compares spaCy's parses of both sides, so their labels agree.
    `n_process` > 1 scores slices of at least 100 segments in parallel processes. `parses`:
    spaCy parses the caller already made, by text, used instead of parsing again. `check`:
    called before each alignment (one process only); an exception it raises (a deadline passed)
    stops the work and propagates.
    """
    _check(hypotheses, references, reference_trees)
    part = _run(hypotheses, references, reference_trees, model, lowercase, n_process, parses, check)
    bleu, chrf, nist, depf = (
        Bleu(lowercase=lowercase),
        Chrf(lowercase=lowercase),
        Nist(),
        DependencyF(),
    )
    corpus: dict[str, float] = {"n_segments": len(part.rows)}
    if part.rows:
        for metric in METRICS[:6]:
            corpus[f"mean_{metric}"] = float(np.mean([r[metric] for r in part.rows]))
        # Pooled: problems summed over the corpus over reference tokens summed (micro average).
        for metric, *_ in _FAMILIES:
            total = sum(part.counts[metric], EditCounts())
            kind = "simple_accuracy" if metric.startswith("simple") else "generation_accuracy"
            corpus[f"pooled_{metric}"] = getattr(total, kind)
        corpus["bleu"] = bleu.from_stats(np.sum(part.bleu, axis=0))
        corpus["chrf"] = chrf.from_stats(np.sum(part.chrf, axis=0))
        corpus["nist"] = nist.corpus(part.hyp_tokens, part.ref_tokens)
        p, r, f = depf.precision_recall_f(np.sum(part.dep, axis=0))
        corpus.update(dependency_f=f, dependency_precision=p, dependency_recall=r)

    parser = pipeline_name(model)
    case = "lc" if lowercase else "mixed"
    n_refs = max((len(r) for r in references), default=1)
    signatures = {
        "string": f"bangalore2000|tok:{parser}|case:{case}|ins:3|del:3|sub:4",
        "tree": f"bangalore2000|tree:{parser}+gold-conllu-if-given|case:{case}",
        "bleu": bleu.signature(n_refs),
        "chrf": chrf.signature(n_refs),
        "nist": nist.signature() + f"|tok:{parser}",
        "dependency_f": depf.signature(parser),
    }
    return AccuracyReport(part.rows, corpus, signatures, part.comparisons)


def _toks(sentence: Sentence, lowercase: bool) -> list[str]:
    return [t.lower() for t in sentence.tokens] if lowercase else list(sentence.tokens)
