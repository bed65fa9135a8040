"""What a text says again, explained: `fluency explain`, `/v1/explain` and the ranking page
mark the repeated stretch "said again", and a head that carries a weight on it gives that
weight's contribution, which adds up with the rest to the score."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scorer.cli import main
from scorer.explain import explain_texts
from scorer.scoring import load_scorer
from scorer.web import create_app

FIRST = "Shares of the bank rose five percent in early trading."
SECOND = "Analysts said the merger would close before the end of the year."
PARAGRAPH = f"{FIRST} {SECOND}"
REPEATED = f"{FIRST} {SECOND} {SECOND}"
PAGE_JS = Path(__file__).resolve().parents[2] / "scorer" / "web" / "static" / "page.js"


@pytest.fixture(scope="module")
def default():
    return load_scorer("default")


def _weight(scorer) -> float:
    from scorer.readings import SAID_AGAIN

    head = scorer.head
    return -dict(zip(head.inputs, head.coef, strict=True)).get(SAID_AGAIN, 0.0)


def test_the_shipped_general_head_carries_a_weight_and_the_repetition_costs_it(default):
    assert _weight(default) > 0
    once, again = default.score([PARAGRAPH, REPEATED])
    assert again < once


def test_explain_marks_the_stretch_said_again_and_its_part_adds_up(default):
    (e,) = explain_texts(default, [REPEATED])
    marked = [REPEATED[s.start : s.end] for s in e.spans if s.kind == "said_again"]
    assert marked == [SECOND.rstrip(".")]  # the words, not the full stop
    assert e.spans[-1].start == REPEATED.rindex(SECOND)
    c = e.contributions
    assert e.explains == "fluency" and c.exact
    assert c.parts["said again"] < 0
    assert sum(c.parts.values()) == pytest.approx(e.fluency, abs=1e-9)
    listed = c.intercept + sum(x.contribution for x in c.features) + c.residual
    assert listed == pytest.approx(e.fluency, abs=1e-9)
    (plain,) = explain_texts(default, [PARAGRAPH])
    assert not [s for s in plain.spans if s.kind == "said_again"]
    assert plain.contributions.parts.get("said again", 0.0) == 0.0


def test_the_command_line_and_the_service_say_it_too(tmp_path, capsys):
    path = tmp_path / "in.txt"
    path.write_text(REPEATED + "\n", encoding="utf-8")
    assert main(["explain", str(path), "--model", "default", "--top", "50"]) == 0
    (row,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    kinds = {(REPEATED[s["start"] : s["end"]], s["kind"]) for s in row["spans"]}
    assert (SECOND.rstrip("."), "said_again") in kinds
    assert row["contributions"]["parts"]["said again"] < 0
    app = create_app({"TESTING": True, "MODELS": "default"})
    answer = app.test_client().post("/v1/explain", json={"sentences": [REPEATED]}).get_json()
    (item,) = answer["explanations"]
    assert any(s["kind"] == "said_again" for s in item["spans"])
    parts = item["contributions"]["parts"]
    assert sum(parts.values()) == pytest.approx(item["fluency"], abs=1e-9)


def test_the_page_names_the_mark():
    assert 'said_again: "said again"' in PAGE_JS.read_text(encoding="utf-8")
