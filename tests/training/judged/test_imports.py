"""`fluency import-judgements`: MQM annotations and the WebNLG 2020 human evaluation become
judgement files that `fluency benchmark` reads, with the MQM weights of Freitag et al. (2021)
and each WebNLG rating on the line of its team's output; bad sources are clear errors."""

from __future__ import annotations

import json

import pytest

from features.errors import InputError
from scorer.cli import main
from scorer.evidence.benchmark_data import read_judged
from training.judged.imports import (
    cola_judgements,
    mqm_judgements,
    mqm_weight,
    webnlg2020_judgements,
)

HEADER = "system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity\n"


def _row(system, seg, rater, target, category, severity):
    return f"{system}\ttalk.1\t1\t{seg}\t{rater}\t源\t{target}\t{category}\t{severity}\n"


def test_mqm_weights_follow_freitag_et_al():
    assert mqm_weight("Fluency/Grammar", "Major") == 5.0
    assert mqm_weight("Accuracy/Mistranslation", "Minor") == 1.0
    assert mqm_weight("Fluency/Punctuation", "Minor") == 0.1
    assert mqm_weight("Fluency/Punctuation", "Major") == 5.0
    assert mqm_weight("Non-translation!", "Major") == 25.0
    assert mqm_weight("No-error", "No-error") == mqm_weight("Other", "Neutral") == 0.0


def test_an_mqm_file_becomes_one_judgement_per_output(tmp_path):
    tsv = tmp_path / "mqm.tsv"
    tsv.write_text(
        HEADER
        + _row("sysA", 7, "r1", "It <v>go</v> home.", "Fluency/Grammar", "Major")
        + _row("sysA", 7, "r1", "It go home<v>,</v>", "Fluency/Punctuation", "Minor")
        + _row("sysA", 7, "r1", "It go <v>home</v>.", "Accuracy/Mistranslation", "Major")
        + _row("sysA", 7, "r2", "It go home.", "Style/Awkward", "Minor")
        + _row("sysB", 7, "r1", "He goes home.", "No-error", "No-error")
        + _row("ref", 7, "r1", "He went home.", "No-error", "No-error"),
        encoding="utf-8",
    )
    rows = {r["system"]: r for r in mqm_judgements(tsv)}
    a = rows["sysA"]
    assert a["text"] == "It go home."  # spans unmarked
    # Rater 1: 5 + 0.1 + 5 (10.1 in all, 5.1 of fluency); rater 2: 1 (fluency). Averaged.
    assert a["scores"]["mqm"] == pytest.approx(-(10.1 + 1.0) / 2)
    assert a["scores"]["fluency"] == pytest.approx(-(5.1 + 1.0) / 2) == a["score"]
    assert rows["sysB"]["score"] == 0.0 and not rows["sysB"]["is_reference"]
    assert rows["ref"]["is_reference"] and {r["group"] for r in rows.values()} == {"7"}

    out = tmp_path / "judged" / "mqm.jsonl"
    assert main(["import-judgements", "mqm", str(tsv), "--out", str(out)]) == 0
    judged = read_judged(out, human_field="scores.fluency")
    assert judged.counts["n_references"] == 1 and len(judged.texts) == 2

    bad = tmp_path / "bad.tsv"
    bad.write_text("a\tb\n1\t2\n", encoding="utf-8")
    with pytest.raises(InputError, match="not an MQM annotation file"):
        mqm_judgements(bad)
    assert main(["import-judgements", "mqm", str(tmp_path / "none.tsv"), "--out", str(out)]) == 2


def _webnlg(folder, ratings, teams):
    results = folder / "evaluation/human-evaluation/results/en"
    results.mkdir(parents=True)
    (results / "english_humeval_data_all_teams.json").write_text(json.dumps(ratings))
    for team, lines in teams.items():
        out = folder / "submissions/rdf2text/en" / team
        out.mkdir(parents=True)
        (out / "primary.en").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _rating(team, sample, fluency):
    criteria = ("Correctness", "DataCoverage", "Relevance", "TextStructure")
    return {"submission_id": team, "sample_id": str(sample), "Fluency": fluency} | {
        c: 0.5 for c in criteria
    }


def test_webnlg2020_ratings_are_put_on_their_outputs_lines(tmp_path):
    ratings = [
        _rating("teamA", 2, 0.8),
        _rating("teamB", 2, -0.3),
        _rating("teamA", 3, 0.1),
        _rating("WebNLG-2020-reference", 2, 0.9),  # no outputs file: left out
    ]
    _webnlg(tmp_path, ratings, {"teamA": ["a1", "a2", "a3"], "teamB": ["b1", "b2", "b3"]})
    rows = webnlg2020_judgements(tmp_path)
    assert [(r["system"], r["group"], r["text"], r["score"]) for r in rows] == [
        ("teamA", "2", "a2", 0.8),
        ("teamB", "2", "b2", -0.3),
        ("teamA", "3", "a3", 0.1),
    ]
    assert rows[0]["scores"]["fluency"] == 0.8 and rows[0]["scores"]["correctness"] == 0.5

    missing = tmp_path / "missing"
    _webnlg(missing, [_rating("teamC", 1, 0.0)], {})
    with pytest.raises(InputError, match="no outputs for 'teamC'"):
        webnlg2020_judgements(missing)
    beyond = tmp_path / "beyond"
    _webnlg(beyond, [_rating("teamA", 9, 0.0)], {"teamA": ["a1"]})
    with pytest.raises(InputError, match="sample 9 is not a line"):
        webnlg2020_judgements(beyond)
    broken = tmp_path / "broken"
    _webnlg(broken, [{"submission_id": "teamA", "sample_id": "1"}], {"teamA": ["a1"]})
    with pytest.raises(InputError, match="rating 0 is unusable"):
        webnlg2020_judgements(broken)


def test_a_cola_file_keeps_its_labels_and_refuses_other_lines(tmp_path):
    tsv = tmp_path / "in_domain_dev.tsv"
    tsv.write_text(
        "gj04\t1\t\tThe sailors rode the breeze clear of the rocks.\n"
        "cj99\t0\t*\tAs you eat the most, you want the least.\n\n",
        encoding="utf-8",
    )
    rows = cola_judgements(tsv)
    assert [(r["text"][:10], r["score"], r["system"], r["group"]) for r in rows] == [
        ("The sailor", 1.0, "gj04", "1"),
        ("As you eat", 0.0, "cj99", "2"),
    ]
    bad = tmp_path / "bad.tsv"
    bad.write_text("gj04\tyes\t\tA sentence.\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"bad\.tsv:1: not a CoLA line"):
        cola_judgements(bad)
