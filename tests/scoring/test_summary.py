"""A bundle's summary is written from its card: what its GLEU stage reads, then each head's inputs
(those it weighs) and how it reads a text; every shipped card's `summary` is that text."""

from __future__ import annotations

import pytest

from features.resources import MODELS_DIR
from scorer.contributions import group_of
from scorer.heads import card_heads
from scorer.summary import READ_AS, summarize

TIERS = ("default", "fast", "full", "neural")


def _card(tier: str) -> dict:
    from scorer.bundle import read_card

    return read_card(tier, MODELS_DIR)[1]


def test_a_card_is_summarised_from_its_heads():
    card = {
        "features": ["surface.v2", "lm.v1"],
        "feature_columns": ["surface.v2/n_tokens", "lm.v1/mean_logprob", "lm.v1/min_logprob"],
        "gleu_stage": {"file": "gleu_stage.json", "sha256": "0"},
        "heads": {
            "general": {
                "inputs": ["gleu"],
                "aggregate": "weighted",
                "linear": {"coef": [0.3], "intercept": 0.0},
            },
            "mt": {
                "inputs": ["gleu", "lm.v1/mean_logprob"],
                "aggregate": "sum",
                "linear": {"coef": [0.0, 0.4], "intercept": 0.0},  # weighs the LM alone
            },
            "dialogue": {
                "inputs": ["gleu", "surface.v2/n_tokens", "lm.v1/min_logprob"],
                "aggregate": "whole",
                "linear": {"coef": [0.5, -0.1, 0.2], "intercept": 0.0},
            },
        },
        "summary": "a ridge second stage fitted on data-to-text and acceptability",
    }
    assert summarize(card) == (
        "GLEU stage: a linear ranking SVM over 3 columns of surface.v2, lm.v1. "
        "General head: the GLEU score alone, read by sentence. "
        "Genre heads: mt (lm.v1/mean_logprob, its sentences summed), dialogue (the GLEU score, "
        "surface.v2/n_tokens and lm.v1/min_logprob, read whole). "
        "fluency is in standard deviations of people's ratings around the average rated output; "
        "gleu is the GLEU stage's signed distance (> 0 looks like real text)."
    )
    # the same heads in a card written by 0.10.0: the same words
    old = {k: v for k, v in card.items() if k not in ("heads", "gleu_stage")}
    old["head"] = {"file": "head.json", "sha256": "0"}
    old["calibration"] = card["heads"]["general"]
    old["heads"] = {k: v for k, v in card["heads"].items() if k != "general"}
    assert summarize(old) == summarize(card)


def test_a_card_without_heads_says_fluency_is_the_gleu_score():
    card = {"features": ["surface.v2"], "feature_columns": ["surface.v2/n_tokens"]}
    assert summarize(card) == (
        "GLEU stage: an SVM over 1 column of surface.v2. "
        "No general head: fluency is the GLEU score."
    )


@pytest.mark.parametrize("tier", TIERS)
def test_every_shipped_card_says_what_its_heads_read(tier):
    card = _card(tier)
    assert card["summary"] == summarize(card)  # written from the heads, not by hand
    text = card["summary"]
    assert "ridge" not in text
    heads = card_heads(card)
    if "general" in heads:
        assert next(iter(heads)) == "general"
    else:  # a tier whose general head did not ship serves the GLEU score
        assert "No general head" in text
    for genre, head in heads.items():
        weighed = [c for c, w in zip(head["inputs"], head["linear"]["coef"], strict=True) if w]
        said = text.split("General head: ", 1)[1] if genre == "general" else text
        if genre != "general":
            said = said.split(f" {genre} (", 1)[1]
        said = said.split(")", 1)[0].split(". ", 1)[0]
        for column in weighed:  # a learned head's state columns are said as one group
            name = group_of(column) or ("the GLEU score" if column == "gleu" else column)
            assert name in said, (tier, genre, column)
        assert said.endswith(READ_AS[head["aggregate"]]), (tier, genre, said)
