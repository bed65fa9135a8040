"""A learned head's weights kept beside the card (`scorer.head_weights`): the shipped neural
bundle loads them whole and scores as its heads say; a missing, altered or corrupt weights file
is refused at load, naming it; writing a card makes the large heads lean again."""

from __future__ import annotations

import json
import shutil

import pytest

from features.resources import MODELS_DIR
from scorer.bundle import read_card
from scorer.errors import ModelLoadError
from scorer.head_weights import MAX_INLINE, POINTER, WEIGHTS_FILE, join_weights, write_weights


def test_the_neural_card_is_lean_and_loads_whole():
    on_disk = json.loads((MODELS_DIR / "neural" / "card.json").read_text())
    assert on_disk[POINTER]["file"] == WEIGHTS_FILE
    lean = [g for g, h in on_disk["heads"].items() if "inputs" not in h]
    assert "general" in lean and "summaries" in lean
    _, card = read_card("neural", MODELS_DIR)
    for genre in lean:
        head = card["heads"][genre]
        assert len(head["inputs"]) == len(head["linear"]["coef"]) > MAX_INLINE


def test_a_written_card_keeps_small_heads_inline_and_reads_back_the_same(tmp_path):
    _, card = read_card("neural", MODELS_DIR)
    lean = write_weights(tmp_path, card)
    assert len(json.dumps(lean)) < 100_000
    assert lean["heads"]["mt"] == card["heads"]["mt"]  # two inputs: in the card
    assert join_weights(tmp_path, json.loads(json.dumps(lean))) == card
    small = {k: v for k, v in card.items() if k != "heads"} | {"heads": {"mt": card["heads"]["mt"]}}
    assert POINTER not in write_weights(tmp_path, small)
    assert not (tmp_path / WEIGHTS_FILE).exists()  # a stale file goes with its heads


@pytest.mark.parametrize("damage", ["missing", "altered", "corrupt"])
def test_a_bundle_whose_weights_file_is_damaged_is_refused_naming_it(tmp_path, damage):
    folder = tmp_path / "neural"
    shutil.copytree(MODELS_DIR / "neural", folder)
    path = folder / WEIGHTS_FILE
    if damage == "missing":
        path.unlink()
    elif damage == "altered":
        weights = json.loads(path.read_text())
        weights["general"]["coef"][0] += 1.0
        path.write_text(json.dumps(weights))
    else:
        path.write_bytes(path.read_bytes()[:1000])
    with pytest.raises(ModelLoadError, match=WEIGHTS_FILE):
        read_card(folder, tmp_path)
