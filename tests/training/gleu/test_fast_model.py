"""The shipped models/fast, loaded as the service loads it: spaCy, the LM and surface signals
only, so it must load and score without Link Grammar or the benepar parser, and still rank real
text above its word salad. Needs nothing from ../shared (every artefact ships)."""

from __future__ import annotations

import json
import sys

import pytest
from examples import shuffled

import features.constituency
import features.linkgrammar
from features.errors import ModelLoadError
from features.resources import MODELS_DIR
from scorer.model import load_model
from scorer.scoring import load_scorer

REAL = (
    "The company said its profit rose sharply in the first quarter.",
    "Shares of the bank fell after it reported a loss.",
    "The government expects inflation to slow next year.",
)
FEATURES = ["lm.v1", "spacy.v1", "surface.v2"]


def test_the_fast_card_lists_spacy_the_lm_and_surface_signals_only():
    card = json.loads((MODELS_DIR / "fast" / "card.json").read_text())
    assert sorted(card["features"]) == FEATURES
    assert {column.split("/")[0] for column in card["feature_columns"]} == set(FEATURES)
    # No Link Grammar or benepar artefact: only the LM's files are named.
    assert not any("benepar" in key for key in card["resources"])
    assert not any("benepar" in str(value) for value in card["resources"].values())
    pipeline, loaded = load_model("fast", MODELS_DIR)
    assert sorted(pipeline.named_steps["extract"].features_) == FEATURES
    assert loaded["feature_columns"] == card["feature_columns"]


def _refuse(*_args, **_kwargs):
    raise ModelLoadError("the fast model must not load Link Grammar or benepar")


@pytest.fixture
def without_linkgrammar_or_benepar(monkeypatch):
    # As on a machine without either: their imports fail, and so does any attempt to load them.
    monkeypatch.setitem(sys.modules, "linkgrammar", None)
    monkeypatch.setitem(sys.modules, "benepar", None)
    monkeypatch.setattr(features.linkgrammar, "_load", _refuse)
    monkeypatch.setattr(features.constituency, "_load", _refuse)
    monkeypatch.setattr(features.constituency, "load_parser", _refuse)


def test_the_fast_model_ranks_real_sentences_above_their_word_salad(
    without_linkgrammar_or_benepar,
):
    fast = load_scorer("fast")
    real = fast.score(list(REAL))
    salad = fast.score([shuffled(t, i) for i, t in enumerate(REAL)])
    assert all(r > s for r, s in zip(real, salad, strict=True))
    scored = fast.score_texts(REAL[:1], with_features=True)[0]
    assert {name.split("/")[0] for name in scored.features} == set(FEATURES)
