"""The artefacts extractors declare: shipped, recorded by the default card, overridable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from features import registry
from features.resources import ARTEFACTS, MODELS_DIR, UNIGRAM_FILE, Resources, artefacts_for


@pytest.mark.parametrize("spec", registry.all_specs(), ids=lambda s: s.name)
def test_every_declared_artefact_ships(spec):
    for artefact in spec.artefacts:
        assert artefact.default.is_file(), f"{spec.name} needs {artefact.default}"
        # Ours ship in the models folder; a file of an installed package (the SmolLM2 weights)
        # lives in that package.
        home = artefact.default.parent if artefact.package else MODELS_DIR
        assert artefact.default.resolve().is_relative_to(home.resolve())
        if artefact.package:
            assert artefact.default.parent.name == artefact.package


def test_the_default_card_records_exactly_what_its_features_declare():
    card = json.loads((MODELS_DIR / "default" / "card.json").read_text())
    keys = {a.key for name in card["features"] for a in registry.get(name).artefacts}
    assert {k for k in card["resources"] if not k.endswith("_sha256")} == keys
    for key in keys:
        assert (MODELS_DIR / card["resources"][key]).is_file()


def test_a_given_path_wins_and_a_unigram_table_is_looked_for_beside_its_lm(tmp_path):
    lm, unigrams = ARTEFACTS["lm"]
    assert unigrams.path(Resources()) == unigrams.default
    elsewhere = Resources(lm_path=tmp_path / "lm.binary")
    assert lm.path(elsewhere) == tmp_path / "lm.binary"
    assert unigrams.path(elsewhere) == tmp_path / UNIGRAM_FILE
    given = Resources(lm_path=tmp_path / "lm.binary", unigram_path=Path("/x/u.tsv"))
    assert unigrams.path(given) == Path("/x/u.tsv")


def test_components_without_files_declare_none():
    assert artefacts_for(("spacy", "linkgrammar")) == ()
