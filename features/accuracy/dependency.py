"""Dependency F-score (Riezler & Maxwell 2005, after Crouch et al. 2002).

Both hypothesis and reference are parsed by the same parser; each gives a multiset of labelled
(head, relation, dependent) triples over lower-cased word forms, the root as a triple with head
"<root>" (so two identical one-word sentences agree). Precision is matches over hypothesis
triples, recall matches over reference triples, F their harmonic mean. Row statistics
[matches, n_hyp, n_ref] add up over a corpus, so a significance test resamples them without
re-parsing.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from features.sentence import Sentence

__all__ = ["DependencyF", "triples"]


def triples(sentence: Sentence) -> Counter[tuple[str, str, str]]:
    out: Counter[tuple[str, str, str]] = Counter()
    words = [t.lower() for t in sentence.tokens]
    for i, h in enumerate(sentence.heads):
        head = "<root>" if h == i else words[h]
        out[(head, sentence.deps[i].lower(), words[i])] += 1
    return out


class DependencyF:
    name = "dependency_f"

    def segment_stats(self, hypothesis: Sentence, reference: Sentence) -> np.ndarray:
        hyp, ref = triples(hypothesis), triples(reference)
        matches = sum((hyp & ref).values())
        return np.array([matches, sum(hyp.values()), sum(ref.values())], dtype=float)

    @staticmethod
    def precision_recall_f(totals: np.ndarray) -> tuple[float, float, float]:
        matches, n_hyp, n_ref = (float(x) for x in totals)
        p = matches / n_hyp if n_hyp else 0.0
        r = matches / n_ref if n_ref else 0.0
        return p, r, (2 * p * r / (p + r) if p + r else 0.0)

    def from_stats(self, totals: np.ndarray) -> float:
        return self.precision_recall_f(totals)[2]

    def signature(self, parser: str = "spacy") -> str:
        return f"depf|triples:labelled|case:lower|parser:{parser}"
