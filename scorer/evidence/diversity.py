"""Diversity and corpus reproduction of generated text (Foster 2008, sections 4.1-4.2).

Foster counts, per output, tokens, types and their ratio (TTR), and averages over outputs; we
add distinct-n (distinct n-grams / n-grams, Li et al. 2016) per output and over the whole
system, where repetition *across* outputs shows. Corpus reproduction is Foster's precision
(share of generated tokens found in the reference), recall (share of reference tokens
reproduced) and their F, over token multisets, against the best-matching reference.
Tokens: sacrebleu's 13a tokenizer, so these agree with BLEU's tokens and need no parser.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from nltk.util import ngrams
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

from scorer.errors import InputError

__all__ = [
    "OutputDiversity",
    "corpus_reproduction",
    "output_diversity",
    "system_diversity",
    "tokenize",
]

_TOKENIZE = Tokenizer13a()


def tokenize(text: str, *, lowercase: bool = False) -> list[str]:
    tokens = _TOKENIZE(text).split()
    return [t.lower() for t in tokens] if lowercase else tokens


def _distinct(tokens: Sequence[str], n: int) -> tuple[int, int]:
    grams = list(ngrams(tokens, n)) if len(tokens) >= n else []
    return len(set(grams)), len(grams)


@dataclass(frozen=True)
class OutputDiversity:
    """One output. distinct_n is None-free: an output shorter than n has 0 of 0 -> 0.0."""

    n_tokens: int
    n_types: int
    ttr: float
    distinct: dict[int, float]


def output_diversity(text: str, *, max_n: int = 2, lowercase: bool = False) -> OutputDiversity:
    tokens = tokenize(text, lowercase=lowercase)
    distinct = {}
    for n in range(1, max_n + 1):
        uniq, total = _distinct(tokens, n)
        distinct[n] = uniq / total if total else 0.0
    n_types = len(set(tokens))
    return OutputDiversity(len(tokens), n_types, n_types / len(tokens) if tokens else 0.0, distinct)


def system_diversity(
    texts: Sequence[str], *, max_n: int = 2, lowercase: bool = False
) -> dict[str, float | int]:
    """Per-output figures averaged (as Foster), and distinct-n over all outputs pooled."""
    if isinstance(texts, str) or not texts:
        raise InputError("give a non-empty list of outputs, one string each")
    per = [output_diversity(t, max_n=max_n, lowercase=lowercase) for t in texts]
    out: dict[str, float | int] = {
        "n_outputs": len(per),
        "mean_tokens": float(np.mean([p.n_tokens for p in per])),
        "mean_types": float(np.mean([p.n_types for p in per])),
        "mean_ttr": float(np.mean([p.ttr for p in per])),
    }
    for n in range(1, max_n + 1):
        out[f"mean_distinct_{n}"] = float(np.mean([p.distinct[n] for p in per]))
    pooled = [tokenize(t, lowercase=lowercase) for t in texts]
    all_tokens = [t for toks in pooled for t in toks]
    out["n_tokens"] = len(all_tokens)
    out["n_types"] = len(set(all_tokens))
    out["corpus_ttr"] = out["n_types"] / len(all_tokens) if all_tokens else 0.0
    for n in range(1, max_n + 1):
        grams = [g for toks in pooled for g in (ngrams(toks, n) if len(toks) >= n else [])]
        out[f"distinct_{n}"] = len(set(grams)) / len(grams) if grams else 0.0
    return out


def _prf(hyp: Counter, ref: Counter) -> tuple[float, float, float]:
    matches = sum((hyp & ref).values())
    p = matches / sum(hyp.values()) if hyp else 0.0
    r = matches / sum(ref.values()) if ref else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def corpus_reproduction(
    hypotheses: Sequence[str], references: Sequence[Sequence[str]], *, lowercase: bool = False
) -> dict[str, float]:
    """Mean per-output precision, recall and F (Foster 2008, 4.1); per output, the reference
    with the best F counts (the earlier one on ties)."""
    if len(hypotheses) != len(references):
        raise InputError(
            f"{len(hypotheses)} hypotheses but {len(references)} reference lists; "
            "give one list of references per hypothesis"
        )
    rows = []
    for i, (hyp, refs) in enumerate(zip(hypotheses, references, strict=True)):
        if isinstance(refs, str) or not refs:
            raise InputError(f"segment {i}: references must be a non-empty list of strings")
        h = Counter(tokenize(hyp, lowercase=lowercase))
        rows.append(
            max(
                (_prf(h, Counter(tokenize(r, lowercase=lowercase))) for r in refs),
                key=lambda x: x[2],
            )
        )
    p, r, f = np.mean(rows, axis=0) if rows else (0.0, 0.0, 0.0)
    return {"precision": float(p), "recall": float(r), "f": float(f)}
