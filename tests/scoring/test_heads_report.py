"""A card says what its model is; the held-out tables behind its heads are in heads_report.json
beside it, named with their SHA-256. Every shipped card is small, the tables it left out are
the file's, the READMEs' tables come from that file, an older card with the tables inside
still loads and serves them, and a missing or corrupt file is refused only where the tables
are asked for: scoring never reads it."""

from __future__ import annotations

import json
import shutil

import pytest

from features.resources import MODELS_DIR
from scorer.bundle import sha256_file
from scorer.bundles import genres_of
from scorer.errors import ReportUnavailableError
from scorer.heads import without_tables
from scorer.heads_report import (
    REPORT_FILE,
    REPORT_POINTER,
    head_row,
    lean_card,
    read_heads_report,
)
from scorer.scoring import load_scorer
from training.heads.report.cards import HEADS_BEGIN, HEADS_END, heads_markdown

CARDS = sorted(MODELS_DIR.glob("*/card.json"))
TIERS = ("default", "fast", "full", "neural")
MAX_CARD_BYTES = 100_000
TEXTS = [
    "The company said its profit rose sharply in the first quarter.",
    "profit the rose company quarter said first sharply in its the.",
    "The Eagle is a coffee shop near Burger King. It serves Italian food. It serve food food.",
]


def _card(tier: str) -> dict:
    return json.loads((MODELS_DIR / tier / "card.json").read_text())


@pytest.mark.parametrize("path", CARDS, ids=[p.parent.name for p in CARDS])
def test_every_shipped_card_is_under_100_kb(path):
    size = path.stat().st_size
    assert size < MAX_CARD_BYTES, f"{path} is {size} bytes: its tables belong in {REPORT_FILE}"
    card = json.loads(path.read_text())
    assert card == lean_card(card)  # no table left anywhere in it


@pytest.mark.parametrize("tier", TIERS)
def test_the_card_names_its_report_and_keeps_each_heads_own_figures(tier):
    card = _card(tier)
    pointer = card[REPORT_POINTER]
    assert pointer["file"] == REPORT_FILE
    assert sha256_file(MODELS_DIR / tier / REPORT_FILE) == pointer["sha256"]
    report = read_heads_report(MODELS_DIR / tier, card)
    assert set(report) == set(card["heads_report"]) and set(card["heads"]) <= set(report)
    for genre, entry in report.items():
        lean = card["heads_report"][genre]
        # The card: the entry without its tables, its own and those of what was tried beside it.
        assert without_tables(entry) == {k: v for k, v in lean.items() if k != "head"}, (
            tier,
            genre,
        )
        for tried in entry.get("also_tried", ()):  # their tables are the report's alone
            assert tried.get("table"), (tier, genre)
        if entry.get("table"):
            # The head, then what it was judged against (a linear head: every input tried).
            assert entry["table"][0]["label"] == "head" and len(entry["table"]) > 3
            assert lean["head"] == entry["table"][0], (tier, genre)
    for genre, section in card["heads"].items():  # the head's own summary, held out
        row = card["heads_report"][genre]["head"]
        assert {"rho", "rho_95", "tau", "tau_95"} <= set(row), (tier, genre)
        decided = card["heads_report"][genre]["decision"]
        if decided.startswith("shipped the general head"):  # the genre serves the general head
            assert section == {**card["heads"]["general"], "genre": genre}, (tier, genre)
        else:
            assert section["selection"]["decision"] == decided


@pytest.mark.parametrize("tier", TIERS)
def test_the_readme_tables_are_the_reports(tier):
    """The README's heads block as `python -m training.heads --write` writes it, from the lean
    card and the report file."""
    from scorer.bundle import read_card

    folder = MODELS_DIR / tier
    card = read_card(tier, MODELS_DIR)[1]  # a learned head's weights joined from beside it
    readme = (folder / "README.md").read_text(encoding="utf-8")
    lines = heads_markdown(card, read_heads_report(folder, card))
    assert "\n".join([HEADS_BEGIN, *lines, HEADS_END]) in readme
    assert sum(line.startswith("| best single input: ") for line in lines) >= len(card["heads"])


def _copy(tmp_path, name: str = "default"):
    folder = tmp_path / name
    shutil.copytree(MODELS_DIR / name, folder)
    return folder


def _old_form(tmp_path):
    """A copy of the default as 0.12.1 wrote it: the tables in its card, no report file."""
    folder = _copy(tmp_path)
    card = json.loads((folder / "card.json").read_text())
    report = read_heads_report(folder, card)
    card.pop(REPORT_POINTER)
    card["heads_report"] = report
    for genre, section in card["heads"].items():
        section["selection"]["table"] = report[genre]["table"]
    (folder / REPORT_FILE).unlink()
    (folder / "card.json").write_text(json.dumps(card, indent=2, sort_keys=True) + "\n")
    return folder, card, report


def test_an_old_card_with_its_tables_inside_loads_scores_and_reports_them(tmp_path):
    _, _, report = _old_form(tmp_path)
    assert (tmp_path / "default" / "card.json").stat().st_size > 5 * MAX_CARD_BYTES
    old, new = load_scorer("default", models_dir=tmp_path), load_scorer("default")
    for genre in new.genres:
        assert old.score(TEXTS, genre=genre) == new.score(TEXTS, genre=genre), genre
    assert old.heads_report() == report == new.heads_report()
    assert genres_of(old) == genres_of(new)  # each head's held-out figures, from either card
    assert lean_card(old.card) == {k: v for k, v in new.card.items() if k != REPORT_POINTER}
    assert all(head_row(e) == e["table"][0] for e in report.values() if e.get("table"))


@pytest.mark.parametrize("damage", ["missing", "corrupt"])
def test_a_missing_or_corrupt_report_is_refused_only_when_asked_for(tmp_path, damage):
    folder = _copy(tmp_path)
    path = folder / REPORT_FILE
    if damage == "missing":
        path.unlink()
    else:
        path.write_text(path.read_text().replace('"rho": 0.', '"rho": 0.9', 1))
    broken, shipped = load_scorer("default", models_dir=tmp_path), load_scorer("default")
    for genre in shipped.genres:
        assert broken.score(TEXTS, genre=genre) == shipped.score(TEXTS, genre=genre), genre
    assert genres_of(broken) == genres_of(shipped)
    words = "is missing" if damage == "missing" else "corrupt or was replaced"
    with pytest.raises(ReportUnavailableError, match=words):
        broken.heads_report()


def test_a_report_outside_the_bundle_folder_is_refused(tmp_path):
    folder = _copy(tmp_path)
    card = json.loads((folder / "card.json").read_text())
    card[REPORT_POINTER]["file"] = "../fast/" + REPORT_FILE
    with pytest.raises(ReportUnavailableError, match="bundle's own folder"):
        read_heads_report(folder, card)
    with pytest.raises(ReportUnavailableError, match="folder is not known"):
        read_heads_report(None, _card("default"))


def test_a_lean_entry_drops_its_table_and_keeps_only_the_decision_of_what_was_tried():
    entry = {
        "decision": "shipped",
        "table": [{"label": "head"}],
        "also_tried": [{"decision": "not shipped", "table": [{"label": "head"}], "taught": {}}],
    }
    lean = without_tables(entry)
    tried = {"decision": "not shipped"}  # what was decided; its figures are in the sentence
    assert lean == {"decision": "shipped", "also_tried": [tried]}
    assert entry["also_tried"][0]["table"]  # the entry itself is left as it was
