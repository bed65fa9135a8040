"""`fluency score` and `fluency accuracy` over files: text, JSON Lines and Parquet in and out,
every input column kept, order kept, and a row that cannot be scored costs only itself."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from scorer.cli import main

GOOD = ["The bank said that profits would rise.", "A farmer denied a sharp fall in exports."]
TOO_LONG = "the cat sat " * 100_000  # 1,200,000 characters: over spaCy's max_length


def _scores(out: str) -> list[float]:
    return [float(line) for line in out.splitlines()]


def test_a_line_too_long_to_parse_gets_nan_and_a_warning_the_others_are_scored(
    small, tmp_path, capsys
):
    path = tmp_path / "in.txt"
    path.write_text(f"{GOOD[0]}\n{TOO_LONG}\n\n{GOOD[1]}\n")
    assert main(["score", str(path), *small]) == 0
    out, err = capsys.readouterr()
    scores = _scores(out)
    assert len(scores) == 4
    assert math.isnan(scores[1]) and math.isnan(scores[2])
    assert all(math.isfinite(s) for s in (scores[0], scores[3]))
    assert "line 2 not scored" in err and "1,200,000 characters" in err
    assert "line 3" not in err  # an empty line is a segment, unscored without a warning
    assert "Traceback" not in err

    assert main(["score", str(path), *small, "--format", "json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert rows[1]["score"] is None and "parser's limit" in rows[1]["reason"]
    assert rows[2] == {"score": None}
    assert rows[0]["score"] == pytest.approx(scores[0], abs=1e-6) and rows[0]["features"]


def test_a_row_the_parser_fails_on_alone_is_found_and_the_batch_still_scored(small_models):
    from scorer.batch import score_rows
    from scorer.scoring import load_scorer

    scorer = load_scorer("small", models_dir=small_models)
    real = scorer.score_texts

    def fails_on_boom(texts, **kw):
        if any("boom" in t for t in texts):
            raise RuntimeError("parser failed\nsecond line")
        return real(texts, **kw)

    scorer.score_texts = fails_on_boom
    out = score_rows(scorer, [GOOD[0], "boom goes the parser.", GOOD[1], 7])
    assert [o.score is not None for o in out] == [True, False, True, False]
    assert out[1].reason == "RuntimeError: parser failed"
    assert out[3].reason == "not a string but int"
    assert out[0].score.score == real([GOOD[0]])[0].score


def test_an_invisible_only_line_is_empty_like_a_blank_one(small, tmp_path, capsys):
    lines = tmp_path / "in.txt"
    lines.write_text("\u200b\ufeff\n\nThe cat sat on the mat.\n", encoding="utf-8")
    assert main(["score", *small, str(lines)]) == 0
    out = capsys.readouterr()
    scores = out.out.split()
    assert scores[:2] == ["nan", "nan"] and math.isfinite(float(scores[2]))
    assert "warning" not in out.err


def test_jsonl_in_and_out_keeps_every_field_and_the_order(small, tmp_path, capsys):
    rows = [
        {"id": 3, "text": GOOD[0], "meta": {"system": "a"}},
        {"id": 1, "text": ""},
        {"id": 2, "note": "no text field"},
        {"id": 9, "text": GOOD[1], "meta": {"system": "b"}},
    ]
    src, dst = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["score", "--in", str(src), "--out", str(dst), *small]) == 0
    assert "row 3 not scored: not a string but NoneType" in capsys.readouterr().err
    out = [json.loads(line) for line in dst.read_text().splitlines()]
    assert [r["id"] for r in out] == [3, 1, 2, 9]
    for before, after in zip(rows, out, strict=True):
        assert {k: after[k] for k in before} == before
    assert out[0]["reason"] is None and isinstance(out[0]["score"], float)
    assert out[1]["score"] is None and out[1]["reason"].startswith("empty")
    assert out[2]["score"] is None and out[2]["reason"]


def test_parquet_in_and_out_keeps_the_schema_and_adds_score_and_reason(small, tmp_path):
    frame = pd.DataFrame(
        {"id": [5, 4, 3], "text": [GOOD[0], TOO_LONG, GOOD[1]], "weight": [0.5, 1.0, 2.0]}
    )
    src, dst = tmp_path / "in.parquet", tmp_path / "out.parquet"
    frame.to_parquet(src, index=False)
    assert main(["score", "--in", str(src), "--out", str(dst), *small, "--chunk", "2"]) == 0
    out = pd.read_parquet(dst)
    assert list(out.columns) == ["id", "text", "weight", "score", "reason"]
    pd.testing.assert_frame_equal(out[frame.columns], frame)
    assert out["score"].isna().tolist() == [False, True, False]
    assert out["reason"].isna().tolist() == [True, False, True]

    # The same texts as a plain file give the same scores, to the last digit (same batches).
    txt = tmp_path / "in.txt"
    txt.write_text("\n".join(frame["text"]) + "\n")
    jsonl = tmp_path / "out.jsonl"
    assert main(["score", "--in", str(txt), "--out", str(jsonl), *small, "--chunk", "2"]) == 0
    plain = [json.loads(line)["score"] for line in jsonl.read_text().splitlines()]
    assert plain[0] == out["score"][0] and plain[2] == out["score"][2] and plain[1] is None


def test_a_missing_text_column_and_a_doubled_input_are_clear_errors(small, tmp_path, capsys):
    src = tmp_path / "in.parquet"
    pd.DataFrame({"sentence": ["A text."]}).to_parquet(src)
    assert main(["score", "--in", str(src), "--out", str(tmp_path / "o.jsonl"), *small]) == 2
    err = capsys.readouterr().err
    assert "no column 'text'" in err and "sentence" in err and "--text-column" in err
    assert main(["score", str(src), "--in", str(src), *small]) == 2
    assert "give the input once" in capsys.readouterr().err
    (tmp_path / "bad.parquet").write_text("not parquet")
    assert main(["score", "--in", str(tmp_path / "bad.parquet"), *small]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_text_column_names_the_text_and_stdout_gets_one_score_a_row(small, tmp_path, capsys):
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps({"sentence": GOOD[0]}) + "\n" + json.dumps({"sentence": ""}) + "\n")
    assert main(["score", "--in", str(src), "--text-column", "sentence", *small]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2 and out[1] == "nan" and math.isfinite(float(out[0]))


def test_accuracy_over_a_parquet_table_with_reference_columns(tmp_path, capsys):
    frame = pd.DataFrame(
        {
            "id": ["a", "b", "c"],
            "hyp": ["The cat sat on the mat.", "A dog barked.", "Birds sing."],
            "ref": ["A cat sat on the mat.", "", "Birds sing."],
            "more": [["The cat sat on the mat."], ["The dog barked."], []],
        }
    )
    src, dst = tmp_path / "in.parquet", tmp_path / "out.parquet"
    frame.to_parquet(src, index=False)
    argv = ["accuracy", "--in", str(src), "--out", str(dst), "--text-column", "hyp"]
    assert main([*argv, "--ref-column", "ref", "--ref-column", "more"]) == 0
    assert "row 2 not scored: a reference is empty" in capsys.readouterr().err
    out = pd.read_parquet(dst)
    assert out["id"].tolist() == ["a", "b", "c"]
    assert out["simple_string_accuracy"][2] == 1.0
    assert out["simple_string_accuracy"][0] == 1.0  # the second reference matches better
    assert math.isnan(out["bleu"][1]) and out["reason"][1].startswith("a reference is empty")
    assert out["index"].tolist()[::2] == [0, 2]


def test_accuracy_from_files_keeps_its_stdout_and_nulls_an_unscorable_line(tmp_path, capsys):
    hyp, ref = tmp_path / "h.txt", tmp_path / "r.txt"
    hyp.write_text(f"The cat sat on the mat.\n{TOO_LONG}\nBirds sing.\n")
    ref.write_text("A cat sat on the mat.\nA text.\nBirds sing.\n")
    assert main(["accuracy", "--hyp", str(hyp), "--ref", str(ref)]) == 0
    out, err = capsys.readouterr()
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["index"] for r in rows] == [0, 1, 2]
    assert rows[1]["bleu"] is None and "parser's limit" in rows[1]["reason"]
    assert rows[2]["simple_string_accuracy"] == 1.0
    assert "line 2 not scored" in err and "Traceback" not in err
