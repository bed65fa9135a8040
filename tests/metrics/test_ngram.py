"""BLEU/chrF statistics agree with sacrebleu's own corpus scores; NIST with NLTK; dependency F."""

import math

import numpy as np
import pytest
import sacrebleu
from nltk.translate.nist_score import sentence_nist

from features import Sentence
from features.accuracy import Bleu, Chrf, DependencyF, Nist

HYPS = ["The cat sat on the mat.", "Stocks fell sharply on Monday", "", "a b c d e f"]
REFS_A = ["A cat sat on the mat.", "Shares fell sharply on Monday.", "Nothing here.", "a b c d"]
REFS_B = ["The cat was on the mat.", "Stocks dropped on Monday.", "Still nothing.", "f e d c b a"]


@pytest.mark.parametrize(
    ("metric", "reference"), [(Bleu(), sacrebleu.corpus_bleu), (Chrf(), sacrebleu.corpus_chrf)]
)
def test_summed_segment_stats_give_sacrebleus_corpus_score(metric, reference):
    refs = [[a, b] for a, b in zip(REFS_A, REFS_B, strict=True)]
    stats = metric.corpus_stats(HYPS, refs)
    assert stats.shape[0] == len(HYPS)
    expected = reference(HYPS, [REFS_A, REFS_B]).score
    assert metric.from_stats(stats.sum(0)) == pytest.approx(expected, abs=1e-9)


def test_sentence_bleu_uses_effective_order_like_sacrebleu():
    b = Bleu()
    got = b.from_stats(b.segment_stats(HYPS[1], [REFS_A[1]]), sentence=True)
    assert got == pytest.approx(sacrebleu.sentence_bleu(HYPS[1], [REFS_A[1]]).score)
    assert "nrefs:2" in b.signature(2) and "version:" in b.signature()


def test_nist_matches_nltk_and_survives_short_hypotheses():
    ref = ["the", "stock", "market", "fell", "sharply", "on", "monday", "after", "the", "report"]
    hyp = ["the", "market", "fell", "on", "monday", "after", "a", "report"]
    assert Nist().sentence(hyp, [ref]) == pytest.approx(sentence_nist([ref], hyp))
    for short in ([], ["the"], ["the", "market"]):
        value = Nist().sentence(short, [ref])
        assert math.isfinite(value) and value >= 0
    assert Nist().sentence([], [ref]) == 0.0


def test_dependency_f_counts_labelled_triples():
    # "dogs bark" : bark root, dogs nsubj;  "cats bark": same shape, other subject.
    ref = Sentence.from_heads(["dogs", "bark"], [1, 1], ["nsubj", "ROOT"])
    same = Sentence.from_heads(["Dogs", "bark"], [1, 1], ["nsubj", "ROOT"])
    other = Sentence.from_heads(["cats", "bark"], [1, 1], ["nsubj", "ROOT"])
    relabel = Sentence.from_heads(["dogs", "bark"], [1, 1], ["dobj", "ROOT"])
    f = DependencyF()
    assert f.from_stats(f.segment_stats(same, ref)) == 1.0  # forms are lower-cased
    # other: (<root>, root, bark) matches, (bark, nsubj, cats) does not: P = R = F = 1/2.
    assert np.array_equal(f.segment_stats(other, ref), [1, 2, 2])
    assert f.from_stats(f.segment_stats(relabel, ref)) == pytest.approx(0.5)
    assert f.precision_recall_f(np.array([0, 0, 3])) == (0.0, 0.0, 0.0)
