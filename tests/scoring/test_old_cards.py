"""A bundle written by 0.10.0 or earlier names its GLEU stage `head` (file `head.json`) and keeps
its general head under `calibration`; it loads and scores as the same bundle written today, and
saving the model again writes the new names."""

from __future__ import annotations

import json
import shutil

import pytest

from features.resources import MODELS_DIR
from scorer.gleu_stage import GLEU_STAGE_FILE, LinearGleuStage
from scorer.heads import GENERAL, card_heads
from scorer.scoring import load_scorer

TEXTS = [
    "The company said its profit rose sharply in the first quarter.",
    "profit the rose company quarter said first sharply in its the.",
    "The Eagle is a coffee shop near Burger King. It serves Italian food. It serve food food.",
]


def _old_form(tmp_path, name: str = "default"):
    """A copy of a shipped bundle with its card and files as 0.10.0 wrote them."""
    folder = tmp_path / name
    shutil.copytree(MODELS_DIR / name, folder)
    card = json.loads((folder / "card.json").read_text())
    stage = card.pop("gleu_stage")
    card["head"] = {**stage, "file": "head.json"}
    (folder / GLEU_STAGE_FILE).rename(folder / "head.json")
    heads = dict(card["heads"])
    card["calibration"] = heads.pop(GENERAL)
    card["heads"] = heads
    (folder / "card.json").write_text(json.dumps(card, indent=2, sort_keys=True) + "\n")
    return folder, card


def test_an_old_card_loads_and_scores_every_head_as_the_new_one(tmp_path):
    _, card = _old_form(tmp_path)
    assert "general" not in card["heads"] and "gleu_stage" not in card
    old, new = load_scorer("default", models_dir=tmp_path), load_scorer("default")
    assert isinstance(old.gleu_svm, LinearGleuStage)  # the linear stage, not the pickle
    assert old.genres == new.genres and new.genres[0] == "general"
    assert {"data-to-text", "mt", "summaries"} <= set(new.genres)
    for genre in old.genres:
        a = old.score_texts(TEXTS, genre=genre)
        b = new.score_texts(TEXTS, genre=genre)
        assert [s.score for s in a] == [s.score for s in b], genre
        assert [s.gleu for s in a] == [s.gleu for s in b], genre
    assert card_heads(card) == card_heads(new.card)


def test_an_old_card_whose_head_file_changed_is_refused(tmp_path):
    from scorer.errors import ModelLoadError

    folder, _ = _old_form(tmp_path)
    path = folder / "head.json"
    path.write_text(path.read_text().replace('"intercept": ', '"intercept": 1'))
    with pytest.raises(ModelLoadError, match="corrupt or was replaced"):
        load_scorer("default", models_dir=tmp_path)


def test_the_bare_gleu_stage_of_either_card_has_no_general_head(tmp_path):
    _old_form(tmp_path)
    for scorer in (load_scorer("default", models_dir=tmp_path), load_scorer("default")):
        bare = scorer.gleu_stage()
        assert bare.head is None and bare.genres == ["general"]
        assert GENERAL not in card_heads(bare.card)
        assert set(card_heads(bare.card)) == set(scorer.genres) - {GENERAL}
        how = scorer.aggregate_for()  # read as the general head reads a text
        assert [s.score for s in bare.score_texts(TEXTS, aggregate=how)] == [
            s.gleu for s in scorer.score_texts(TEXTS)
        ]


def test_a_head_that_reads_an_extractor_this_code_lacks_is_refused_clearly():
    """A card whose heads read an extractor of their own (`head_features`) not registered
    here: a ModelLoadError naming it, never a KeyError at the first request."""
    from scorer.errors import ModelLoadError
    from scorer.heads import head_columns

    assert head_columns({}) == []
    assert len(head_columns({"head_features": ["neural_states.v1"]})) == 576
    with pytest.raises(ModelLoadError, match=r"neural_states\.v9"):
        head_columns({"head_features": ["neural_states.v9"]})


def test_a_head_pickled_beside_the_card_is_refused_not_unpickled(tmp_path):
    # Early bundles kept a non-linear head as `calibration.joblib`, named by its hash in the
    # card; a head is served only from the card's linear weights, so such a card is refused.
    from scorer.errors import ModelLoadError
    from scorer.heads import read_head

    card = json.loads((MODELS_DIR / "default" / "card.json").read_text())
    section = {k: v for k, v in card["heads"][GENERAL].items() if k != "linear"}
    section["sha256"] = "0" * 64
    (tmp_path / "calibration.joblib").write_bytes(b"not to be unpickled")
    with pytest.raises(ModelLoadError, match="no linear weights"):
        read_head(tmp_path, card, section)
