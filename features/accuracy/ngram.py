"""BLEU and chrF through sacrebleu, NIST through NLTK.

BLEU and chrF keep sacrebleu's per-segment sufficient statistics (the same private methods
sacrebleu's own paired tests use), so corpus and sentence scores come from one extraction and a
significance test can resample rows. Sentence BLEU uses effective order, as sacrebleu advises.
NIST has per-segment statistics too (`Nist.corpus_stats`), with the information weights fixed
once from all the corpus's references, as mteval does, so resampling never recounts n-grams.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np
from sacrebleu.metrics import BLEU, CHRF

from features.errors import InputError

__all__ = ["Bleu", "Chrf", "Nist"]


class _Sacre:
    name = ""

    def __init__(self, corpus_metric, sentence_metric) -> None:
        self._corpus, self._sentence = corpus_metric, sentence_metric

    def segment_stats(self, hypothesis: str, references: Sequence[str]) -> np.ndarray:
        return np.asarray(
            self._corpus._extract_corpus_statistics([hypothesis], [[r] for r in references])[0],
            dtype=float,
        )

    def corpus_stats(
        self, hypotheses: Sequence[str], references: Sequence[Sequence[str]]
    ) -> np.ndarray:
        return np.vstack(
            [self.segment_stats(h, r) for h, r in zip(hypotheses, references, strict=True)]
        )

    def from_stats(self, totals: np.ndarray, *, sentence: bool = False) -> float:
        metric = self._sentence if sentence else self._corpus
        score = float(metric._compute_score_from_stats([round(x) for x in totals]).score)
        return min(score, 100.0)  # sacrebleu's exp(log(...)) can give 100.00000000000004

    def signature(self, n_refs: int = 1) -> str:
        """sacrebleu's signature, with the number of references actually used."""
        self._corpus.num_refs = n_refs  # sacrebleu sets it while scoring; we score from stats
        return str(self._corpus.get_signature())


class Bleu(_Sacre):
    """BLEU (Papineni et al. 2002), 0-100, sacrebleu defaults (13a tokens, exp smoothing)."""

    name = "bleu"

    def __init__(self, *, lowercase: bool = False) -> None:
        super().__init__(BLEU(lowercase=lowercase), BLEU(lowercase=lowercase, effective_order=True))


class Chrf(_Sacre):
    """chrF2 (Popović 2015), 0-100, sacrebleu defaults."""

    name = "chrf"

    def __init__(self, *, lowercase: bool = False) -> None:
        super().__init__(CHRF(lowercase=lowercase), CHRF(lowercase=lowercase))


class Nist:
    """NIST (Doddington 2002) with NLTK, n = 5, over the tokens our parser produced.

    NLTK divides by zero when a hypothesis has fewer than n tokens; like mteval we then stop at
    the highest order the hypothesis has (n = its length), and an empty hypothesis scores 0.
    """

    name = "nist"

    def __init__(self, n: int = 5) -> None:
        self.n = n

    def sentence(self, hypothesis: Sequence[str], references: Sequence[Sequence[str]]) -> float:
        from nltk.translate.nist_score import sentence_nist  # nltk: ~3 s to import: only when used

        hyp = list(hypothesis)
        refs = [list(r) for r in references if r]
        if not hyp or not refs:
            return 0.0
        try:
            value = sentence_nist(refs, hyp, n=min(self.n, len(hyp)))
        except ZeroDivisionError:
            return 0.0
        return float(value) if math.isfinite(value) else 0.0

    def corpus(
        self, hypotheses: Sequence[Sequence[str]], references: Sequence[Sequence[Sequence[str]]]
    ) -> float:
        from nltk.translate.nist_score import corpus_nist  # nltk: ~3 s to import: only when used

        hyps = [list(h) for h in hypotheses]
        refs = [[list(r) for r in rs] for rs in references]
        if not any(hyps):
            return 0.0
        n = min(self.n, max(len(h) for h in hyps))
        try:
            value = corpus_nist(refs, hyps, n=n)
        except ZeroDivisionError:
            return 0.0
        return float(value) if math.isfinite(value) else 0.0

    # Sufficient statistics, one row per segment, for resampling (training/significance.py):
    # [numerator_1..n, denominator_1..n, hyp_len, ref_len summed over the n orders].
    # numerator_i: information-weighted i-gram matches against the reference NLTK picks for
    # order i (the best (precision, numerator, denominator, length) tuple); denominator_i: the
    # hypothesis's i-gram count. NLTK adds the picked reference's length once per order, so we
    # keep that sum; its hyp_len is likewise counted n times, hence `n * hyp_len` in from_stats.

    def information_weights(
        self, references: Sequence[Sequence[Sequence[str]]]
    ) -> dict[tuple[str, ...], float]:
        """info(w1..wk) = log2(count(w1..wk-1) / count(w1..wk)) over every reference token of
        the corpus (Doddington 2002, eq. 2; unigrams divide the total reference length)."""
        from nltk.util import ngrams  # nltk: ~3 s to import: only when used

        freq: Counter[tuple[str, ...]] = Counter()
        total = 0
        for refs in references:
            for ref in refs:
                for i in range(1, self.n + 1):
                    freq.update(ngrams(ref, i))
                total += len(ref)
        return {
            g: math.log2((freq[g[:-1]] if len(g) > 1 else total) / count)
            for g, count in freq.items()
        }

    def segment_stats(
        self,
        hypothesis: Sequence[str],
        references: Sequence[Sequence[str]],
        *,
        weights: Mapping[tuple[str, ...], float],
    ) -> np.ndarray:
        """One row of statistics; `weights` from `information_weights` over the whole corpus."""
        from nltk.util import ngrams  # nltk: ~3 s to import: only when used

        if not references:
            raise InputError("NIST needs at least one reference per segment; got none")
        hyp, n = list(hypothesis), self.n
        row = np.zeros(2 * n + 2)
        row[2 * n] = len(hyp)
        for i in range(1, n + 1):
            hyp_ngrams = Counter(ngrams(hyp, i)) if len(hyp) >= i else Counter()
            n_hyp = sum(hyp_ngrams.values())
            candidates = []
            for ref in references:
                ref_ngrams = Counter(ngrams(list(ref), i)) if len(ref) >= i else Counter()
                num = sum(weights[g] * c for g, c in (hyp_ngrams & ref_ngrams).items())
                candidates.append((num / n_hyp if n_hyp else 0, num, n_hyp, len(ref)))
            _, num, den, ref_len = max(candidates)  # NLTK's choice, ties included
            row[i - 1], row[n + i - 1] = num, den
            row[2 * n + 1] += ref_len
        return row

    def corpus_stats(
        self,
        hypotheses: Sequence[Sequence[str]],
        references: Sequence[Sequence[Sequence[str]]],
    ) -> np.ndarray:
        """Rows for every segment; the information weights come from all `references` once."""
        if len(hypotheses) != len(references):
            raise InputError(
                f"{len(hypotheses)} hypotheses but {len(references)} reference lists; "
                "give one list of references per hypothesis"
            )
        weights = self.information_weights(references)
        rows = [
            self.segment_stats(h, r, weights=weights)
            for h, r in zip(hypotheses, references, strict=True)
        ]
        return np.vstack(rows) if rows else np.zeros((0, 2 * self.n + 2))

    def from_stats(self, totals: np.ndarray) -> float:
        """NIST from summed rows. An order no hypothesis reaches (denominator 0) adds nothing,
        where NLTK would divide by zero (`corpus` then lowers n, with the same result)."""
        # nltk: ~3 s to import: only when used
        from nltk.translate.nist_score import nist_length_penalty

        n = self.n
        num, den = np.asarray(totals[:n], float), np.asarray(totals[n : 2 * n], float)
        hyp_len, ref_len = float(totals[2 * n]), float(totals[2 * n + 1])
        if ref_len <= 0 or hyp_len <= 0:
            return 0.0
        precision = float(np.sum(num[den > 0] / den[den > 0]))
        return precision * nist_length_penalty(ref_len, n * hyp_len)

    def signature(self) -> str:
        return f"nist|n:{self.n}|impl:nltk"
