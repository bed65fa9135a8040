"""BLEU and chrF through sacrebleu, NIST through NLTK.

BLEU and chrF keep sacrebleu's per-segment sufficient statistics (the same private methods
sacrebleu's own paired tests use), so corpus and sentence scores come from one extraction and a
significance test can resample rows. Sentence BLEU uses effective order, as sacrebleu advises.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from nltk.translate.nist_score import corpus_nist, sentence_nist
from sacrebleu.metrics import BLEU, CHRF

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
        return float(metric._compute_score_from_stats([round(x) for x in totals]).score)

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

    def signature(self) -> str:
        return f"nist|n:{self.n}|impl:nltk"
