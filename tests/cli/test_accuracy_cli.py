"""`fluency accuracy`: Table 1 through the command line, formats, and clear errors."""

import json

import pytest
import sacrebleu
from examples import TABLE1_HYP, TABLE1_REF

from scorer.cli import main


@pytest.fixture
def files(tmp_path):
    hyp = tmp_path / "hyp.txt"
    ref = tmp_path / "ref.txt"
    hyp.write_text(f"{TABLE1_HYP}\nThe cat sat on the mat.\n", encoding="utf-8")
    ref.write_text(f"{TABLE1_REF}\nA cat sat on the mat.\n", encoding="utf-8")
    return hyp, ref


def test_table1_through_the_cli_with_the_papers_gold_tree(tmp_path, data_dir, capsys):
    hyp, ref = tmp_path / "h.txt", tmp_path / "r.txt"
    hyp.write_text(TABLE1_HYP + "\n")
    ref.write_text(TABLE1_REF + "\n")
    argv = ["accuracy", "--hyp", str(hyp), "--ref", str(ref)]
    assert main([*argv, "--ref-conllu", str(data_dir / "table1.conllu")]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(rows) == 1
    row = rows[0]
    assert round(row["simple_string_accuracy"], 2) == 0.44
    assert round(row["generation_string_accuracy"], 2) == 0.56
    assert round(row["simple_tree_accuracy"], 2) == 0.33
    assert round(row["generation_tree_accuracy"], 2) == 0.67
    assert (row["simple_string_S"], row["simple_string_I"], row["simple_string_D"]) == (1, 2, 2)
    assert (row["generation_tree_M"], row["simple_tree_I"], row["simple_tree_D"]) == (3, 3, 3)
    for key in (
        "understandability_accuracy",
        "quality_accuracy",
        "bleu",
        "chrf",
        "nist",
        "dependency_f",
    ):
        assert key in row


def test_gold_trees_alone_serve_as_references(tmp_path, data_dir, capsys):
    hyp = tmp_path / "h.txt"
    hyp.write_text(TABLE1_HYP + "\n")
    assert (
        main(["accuracy", "--hyp", str(hyp), "--ref-conllu", str(data_dir / "table1.conllu")]) == 0
    )
    row = json.loads(capsys.readouterr().out)
    assert round(row["generation_tree_accuracy"], 2) == 0.67


def test_tsv_has_a_header_and_one_line_per_hypothesis(files, capsys):
    hyp, ref = files
    assert main(["accuracy", "--hyp", str(hyp), "--ref", str(ref), "--format", "tsv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = lines[0].split("\t")
    assert len(lines) == 3 and "simple_string_accuracy" in header and "dependency_f" in header
    assert lines[1].split("\t")[header.index("simple_string_accuracy")] == "0.444444"


def test_corpus_prints_corpus_bleu_with_its_signature(files, capsys):
    hyp, ref = files
    assert main(["accuracy", "--hyp", str(hyp), "--ref", str(ref), "--corpus"]) == 0
    out = json.loads(capsys.readouterr().out)
    hyps = hyp.read_text().splitlines()
    refs = ref.read_text().splitlines()
    assert out["bleu"] == pytest.approx(sacrebleu.corpus_bleu(hyps, [refs]).score)
    assert out["signatures"]["bleu"].startswith("nrefs:1|")
    assert "mean_generation_tree_accuracy" in out and "nist" in out


def test_two_references_are_both_used(files, tmp_path, capsys):
    hyp, ref = files
    ref2 = tmp_path / "ref2.txt"
    ref2.write_text("x\nThe cat sat on the mat.\n")
    assert main(["accuracy", "--hyp", str(hyp), "--ref", str(ref), "--ref", str(ref2)]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert rows[1]["simple_string_accuracy"] == 1.0 and rows[1]["simple_string_ref"] == 1


def test_mismatched_line_counts_are_an_error_not_a_truncation(files, tmp_path, capsys):
    hyp, _ = files
    short = tmp_path / "short.txt"
    short.write_text("only one line\n")
    assert main(["accuracy", "--hyp", str(hyp), "--ref", str(short)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fluency: error:") and "2 lines" in err and "1" in err


def test_missing_file_and_bad_conllu_are_clear_errors(files, tmp_path, capsys):
    hyp, ref = files
    assert main(["accuracy", "--hyp", str(tmp_path / "nope.txt"), "--ref", str(ref)]) == 2
    assert "cannot read" in capsys.readouterr().err
    bad = tmp_path / "bad.conllu"
    bad.write_text("1\tword\n")
    assert main(["accuracy", "--hyp", str(hyp), "--ref", str(ref), "--ref-conllu", str(bad)]) == 2
    assert "error" in capsys.readouterr().err
