"""`fluency explain`: one JSON line per input line, the score `score_texts` gives, spans that
point into the line."""

from __future__ import annotations

import json

import pytest

from scorer.cli import main
from scorer.scoring import load_scorer

LINES = ["The company said that profits would rise.", "", "rise would profits 🙂 🙂 the the said."]


def test_each_line_is_explained_in_order(small, small_models, tmp_path, capsys):
    path = tmp_path / "in.txt"
    path.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    assert main(["explain", str(path), *small, "--top", "2"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["line"] for r in rows] == [1, 2, 3]
    assert [r["text"] for r in rows] == LINES
    assert rows[1]["fluency"] is None
    expected = load_scorer("small", models_dir=small_models).score_texts([LINES[0], LINES[2]])
    for row, score in zip([rows[0], rows[2]], expected, strict=True):
        assert row["fluency"] == pytest.approx(score.score, abs=1e-9)
        c = row["contributions"]
        assert len(c["features"]) == 2
        total = c["intercept"] + sum(f["contribution"] for f in c["features"]) + c["rest"]
        assert total == pytest.approx(row["fluency"], abs=1e-6)
    marked = {(LINES[2][s["start"] : s["end"]], s["kind"]) for s in rows[2]["spans"]}
    assert ("🙂 🙂", "symbol_debris") in marked and ("the the", "repeated_ngram") in marked
