"""A head that reads only SmolLM2's states (the neural tier's general head) scores texts by the
states alone, from the pass cut after layer 20, with no parse, no GLEU stage and no
log-probabilities: the same scores as through the whole bundle, to 1e-6. Heads that read the
GLEU score or the log-probability keep the whole bundle's path."""

from __future__ import annotations

import math

import pytest

from scorer.head_features import reads_head_features_only
from scorer.scoring import load_scorer

TEXTS = [
    "The Eagle is a cheap coffee shop near Burger King.",
    "Shares of the bank fell after it reported a loss. The loss was large.",
    "profits the quarter in rose said first company The.",
    "Hello",
    "The market was quiet ahead of the meeting on Tuesday. " * 20,
]


@pytest.fixture(scope="module")
def bundle():
    return load_scorer("neural")


def test_only_the_general_head_reads_the_states_alone(bundle):
    found = {
        g: reads_head_features_only(bundle.for_genre(g), bundle.for_genre(g).aggregate_for())
        for g in bundle.genres
    }
    # general and summaries: a ridge on the states and a weight on what the text says again
    # (read from the text alone), their GLEU and log-probability weights 0; data-to-text's ridge
    # adds the summed log-probability; acceptability reads the GLEU score, mt spaCy's.
    assert found == {g: g in ("general", "summaries") for g in bundle.genres}
    assert not reads_head_features_only(bundle, "min")  # "min" picks rows by the GLEU score


def test_the_states_alone_score_as_the_whole_bundle(bundle, monkeypatch):
    import features.neural_lm as neural_lm
    import features.rows as rows_module

    whole = bundle.score_texts(TEXTS, with_features=True)  # the whole bundle's path
    assert all(math.isfinite(s.gleu) for s in whole)
    fresh = load_scorer("neural")

    def refuse(*args, **kwargs):
        raise AssertionError("ran the full pass or the parser")

    said_again = [TEXTS[0] + " " + TEXTS[0], TEXTS[1] + " " + TEXTS[1] + " " + TEXTS[1]]
    whole_again = bundle.score_texts(said_again, with_features=True)
    by_genre = {
        "summaries": bundle.score_texts(TEXTS + said_again, genre="summaries", with_features=True)
    }
    monkeypatch.setattr(neural_lm, "_pass", refuse)
    monkeypatch.setattr(rows_module, "parse", refuse)
    alone = fresh.score_texts(TEXTS)
    for a, b in zip(alone + fresh.score_texts(said_again), whole + whole_again, strict=True):
        assert a.score == pytest.approx(b.score, abs=1e-6)
        assert math.isnan(a.gleu) and not a.features
    assert alone[0].score > alone[2].score  # the scramble lower
    summaries = fresh.score_texts(TEXTS + said_again, genre="summaries")
    for a, b in zip(summaries, by_genre["summaries"], strict=True):
        assert a.score == pytest.approx(b.score, abs=1e-6) and math.isnan(a.gleu)


def test_other_heads_keep_the_whole_path(bundle):
    for genre in ("acceptability", "mt"):
        scored = bundle.score_texts(TEXTS[:2], genre=genre)
        assert all(math.isfinite(s.gleu) for s in scored), genre


def test_rerank_over_http_names_no_gleu_for_the_general_head(bundle):
    from scorer.web import create_app

    client = create_app({"TESTING": True}, scorer=bundle).test_client()
    resp = client.post("/v1/rerank", json={"candidates": TEXTS[:3]})
    assert resp.status_code == 200, resp.get_json()
    ranked = resp.get_json()["ranked"]
    assert ranked[0]["index"] != 2 and all(r["gleu"] is None for r in ranked)
    resp = client.post("/v1/rerank", json={"candidates": TEXTS[:3], "genre": "mt"})
    assert all(isinstance(r["gleu"], float) for r in resp.get_json()["ranked"])
