"""`fluency compare --metric fluency` reads what orders systems best held out
(`scorer.commands.compare.system_reader`): the general head, or the GLEU stage alone where the
card's held-out table puts it higher; with a genre, the genre's head. The header names it."""

from __future__ import annotations

import copy

import pytest

from features.resources import MODELS_DIR
from scorer.cli import main
from scorer.commands.compare import system_reader
from scorer.heads_report import head_row
from scorer.scoring import load_scorer


@pytest.fixture(scope="module")
def served():
    return load_scorer(MODELS_DIR / "default")


def _general(scorer):
    return scorer.heads_report()["general"]


def test_the_general_head_orders_systems_best_on_the_default_card_and_is_read(served):
    entry = _general(served)
    head = head_row(entry)["system"]["accuracy"]
    others = [r["system"]["accuracy"] for r in entry["table"][1:] if r.get("system")]
    assert head > max(others)  # above the GLEU stage and every single input, held out
    scorer, reads = system_reader(served)
    assert scorer is served
    assert reads == f"head general: system pairs ordered {head:.3f} ({entry['held_out']})"


def test_the_gleu_stage_is_read_where_the_card_puts_it_higher(served, monkeypatch):
    entry = copy.deepcopy(_general(served))
    for row in entry["table"]:
        if row["label"].endswith("gleu (weighted)"):
            row["system"]["accuracy"] = 0.99
    monkeypatch.setattr(type(served), "heads_report", lambda self: {"general": entry})
    scorer, reads = system_reader(served)
    assert scorer.head is None and scorer.name.endswith("GLEU")
    assert reads.startswith("the GLEU stage alone: system pairs ordered 0.990")
    # A named genre reads its own head, whatever the general table says.
    genre = next(g for g in served.genres if g != "general")
    scorer, reads = system_reader(served.for_genre(genre), genre)
    assert scorer.head is not None and reads == f"head {genre}"


def test_compare_names_what_it_reads_in_its_header(tmp_path, capsys):
    good, bad = tmp_path / "good.txt", tmp_path / "bad.txt"
    good.write_text("The cat sat on the mat.\nA dog barked at the postman.\n")
    bad.write_text("mat the on sat cat the.\npostman the at barked dog a.\n")
    argv = ["compare", "--system", str(good), "--system", str(bad), "--trials", "99"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "# reads head general: system pairs ordered" in out
