"""`score_accuracy`: every metric per segment and for the corpus, through the real parser."""

import math

import pytest
import sacrebleu
from examples import TABLE1_HEADS, TABLE1_HYP, TABLE1_REF

from features import Sentence
from features.accuracy import METRICS, score_accuracy
from scorer.errors import InputError


def test_table1_through_the_python_api_with_the_papers_tree():
    tree = Sentence.from_heads(TABLE1_REF.split(), TABLE1_HEADS)
    row = score_accuracy([TABLE1_HYP], [[TABLE1_REF]], reference_trees=[[tree]]).rows[0]
    assert [round(row[m], 2) for m in METRICS[:4]] == [0.44, 0.56, 0.33, 0.67]
    assert (row["simple_string_S"], row["simple_string_I"], row["simple_string_D"]) == (1, 2, 2)
    assert row["generation_string_M"] == 1 and row["generation_tree_M"] == 3
    assert (row["simple_tree_I"], row["simple_tree_D"], row["simple_tree_S"]) == (3, 3, 0)
    assert row["simple_string_R"] == 9


def test_every_metric_is_present_and_finite():
    report = score_accuracy(
        ["The cat sat on the mat.", "", "Dogs\u00a0bark \u202eloudly\x07 ☃ 😀"],
        [["The cat sat on the mat."], ["Something."], ["Dogs bark loudly."]],
    )
    for row in report.rows:
        for metric in METRICS:
            assert math.isfinite(row[metric]) and row[metric] <= 100 + 1e-9
    assert report.rows[0]["simple_tree_accuracy"] == 1.0
    assert report.rows[0]["bleu"] == pytest.approx(100.0)
    assert report.rows[1]["simple_string_accuracy"] == 0.0
    assert set(report.signatures) >= {"string", "tree", "bleu", "chrf", "nist", "dependency_f"}


def test_best_reference_wins_and_is_named():
    hyp = "The cat sat on the mat."
    row = score_accuracy([hyp], [["A dog lay on a rug.", hyp]]).rows[0]
    assert row["simple_string_accuracy"] == 1.0
    assert row["simple_string_ref"] == 1 and row["generation_tree_ref"] == 1
    assert row["dependency_ref"] == 1 and row["dependency_f"] == 1.0


def test_corpus_bleu_and_chrf_are_sacrebleus():
    hyps = ["The cat sat on the mat.", "Stocks fell on Monday."]
    refs = ["A cat sat on the mat.", "Shares fell sharply on Monday."]
    corpus = score_accuracy(hyps, [[r] for r in refs]).corpus
    assert corpus["bleu"] == pytest.approx(sacrebleu.corpus_bleu(hyps, [refs]).score)
    assert corpus["chrf"] == pytest.approx(sacrebleu.corpus_chrf(hyps, [refs]).score)
    assert corpus["n_segments"] == 2
    assert -1 < corpus["mean_simple_string_accuracy"] < 1


@pytest.mark.parametrize(
    ("hyps", "refs", "message"),
    [
        (["a", "b"], [["a"]], "2 hypotheses but 1 reference lists"),
        (["a"], [[""]], "empty"),
        (["a"], [[]], "non-empty list"),
        ([3], [["a"]], "expected a string"),
        ("a", [["a"]], "not a string"),
    ],
)
def test_bad_input_is_a_clear_error(hyps, refs, message):
    with pytest.raises(InputError, match=message):
        score_accuracy(hyps, refs)


def test_very_long_text_is_refused_not_stalled():
    long = " ".join(["word"] * 1500)
    with pytest.raises(InputError, match="at most"):
        score_accuracy([long], [["word"]])


def test_parallel_scoring_equals_serial_scoring():
    hyps = [
        f"The {w} rose {i} percent in trading on Monday ." for i, w in enumerate(["index"] * 110)
    ]
    hyps += [f"Shares of company {i} fell sharply ." for i in range(110)]
    refs = [[h.replace("rose", "climbed").replace("fell", "dropped")] for h in hyps]
    serial = score_accuracy(hyps, refs, n_process=1)
    parallel = score_accuracy(hyps, refs, n_process=2)
    assert serial.rows == parallel.rows
    assert serial.corpus == pytest.approx(parallel.corpus)
