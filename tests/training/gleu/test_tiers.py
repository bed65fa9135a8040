"""A tier's recipe read from its card, options that win over it, refusals, and the map that puts
a retrained GLEU stage on the shipped one's scale."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from features.resources import MODELS_DIR
from scorer.cli import main
from scorer.errors import ModelLoadError
from training.gleu.carry import GleuMap, carried_heads, fit_gleu_map
from training.gleu.tiers import TIERS, recipe, resolve


@pytest.mark.parametrize("tier", TIERS)
def test_a_recipe_is_what_the_tiers_card_records(tier):
    card = json.loads((MODELS_DIR / tier / "card.json").read_text())
    got = recipe(tier)
    assert got["features"] == card["features"]
    arguments = card["training"]["arguments"]
    for option in ("glue_sizes", "error_share", "objective", "levels", "kernels"):
        assert got[option] == arguments[option], option


def test_the_default_recipe_reads_no_neural_or_constituency_features():
    features = recipe("default")["features"]
    assert not any(f.startswith(("neural", "constituency")) for f in features)
    assert any(f.startswith("constituency") for f in recipe("full")["features"])


def test_options_given_win_over_the_recipe():
    options = resolve({"error_share": 0.5, "features": None, "sentences": 9}, "default", "x")
    assert options["error_share"] == 0.5
    assert options["features"] == recipe("default")["features"]
    assert "sentences" not in options  # what a run is about never comes from a card


def test_an_unknown_tier_is_refused_naming_the_tiers(capsys):
    with pytest.raises(ModelLoadError, match="default, fast, full, neural"):
        recipe("huge")
    with pytest.raises(SystemExit):
        main(["train", "--corpus", "x.txt", "--out", "y", "--tier", "huge"])
    assert "invalid choice: 'huge'" in capsys.readouterr().err


def test_a_tier_whose_extra_is_missing_names_it_before_reading_a_corpus(
    tmp_path, capsys, monkeypatch
):
    # benepar absent, as in an install without the `full` extra (None in sys.modules is how
    # Python marks a module that cannot be imported; it may have been imported already).
    monkeypatch.setitem(sys.modules, "benepar", None)
    argv = ["train", "--corpus", "no-such-corpus", "--out", str(tmp_path / "m")]
    assert main(argv) == 2  # the default tier needs no extra: it stops at the corpus
    assert "neither a file" in capsys.readouterr().err
    assert main([*argv, "--tier", "full"]) == 2
    err = capsys.readouterr().err
    assert "pip install 'fluency-scorer[full]'" in err and "benepar" in err
    assert not (tmp_path / "m").exists()


def test_the_map_gives_the_new_score_the_shipped_ones_mean_and_spread():
    rng = np.random.default_rng(3)
    new = rng.normal(0.2, 2.0, 200)
    shipped = 0.5 * new - 0.3 + rng.normal(0, 0.1, 200)
    m = fit_gleu_map(new, shipped)
    mapped = m.slope * new + m.intercept
    assert mapped.mean() == pytest.approx(shipped.mean())
    assert mapped.std() == pytest.approx(shipped.std())
    assert m.n_texts == 200 and 0.99 < m.pearson < 1
    with pytest.raises(ValueError, match="correlate"):
        fit_gleu_map(new, -shipped)
    with pytest.raises(ValueError, match="constant"):
        fit_gleu_map(new, np.ones(200))


def test_heads_reading_what_the_bundle_lacks_are_left_out_saying_why():
    """A bundle of spaCy and surface columns only: the default's heads that read the n-gram LM
    or Link Grammar are left behind, the others carried as they are."""
    from features import registry

    columns = [c for name in ("spacy.v1", "surface.v2") for c in registry.get(name).columns]
    shipped = json.loads((MODELS_DIR / "default" / "card.json").read_text())["heads"]
    entries = carried_heads("default", GleuMap(1.0, 0.0, 10, 0.9), columns, fitted_on="")
    left = entries["carried_heads"]["left_out"]
    assert set(entries["heads"]) | set(left) == set(shipped)
    for genre, why in left.items():
        assert any(p in why for p in ("lm.v1/", "linkgrammar.v5/")), (genre, why)
    for genre, section in entries["heads"].items():
        assert section == shipped[genre]
