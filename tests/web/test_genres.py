"""Genre heads over HTTP: a request's `genre` picks the head of the model it names, the answer
says which, `GET /v1/models` lists each model's heads and the genres its card did not ship, and
a genre the model has no head for is refused with the ones it has.

The service serves `genres` (the shipped default bundle with heads added to its card here:
`tests/genre_bundles.py`) beside the shipped default as it is, so every head the shipped card
has is tested the same way."""

from __future__ import annotations

import shutil
from pathlib import Path

import jsonschema
import pytest
from genre_bundles import GENERAL_HELD_OUT, GENERAL_SYSTEMS, MT_HELD_OUT, NOT_SHIPPED, with_heads
from prometheus_client.parser import text_string_to_metric_families
from web.support import OTHER, REAL, assert_problem, shuffles

from features.resources import MODELS_DIR
from scorer.evidence.genres import GENRE_NAMES
from scorer.scoring import FluencyScorer
from scorer.web import create_app

TEXTS = [f"{REAL} {OTHER}", *shuffles(REAL, 2, seed=5)]  # one of two sentences: heads fold it
ENDPOINTS = {
    "/v1/score": {"sentences": TEXTS},
    "/v1/rerank": {"candidates": TEXTS},
    "/v1/explain": {"sentences": TEXTS, "top": 50},
}


@pytest.fixture(scope="module")
def models_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("genre-models")
    with_heads(MODELS_DIR / "default", root / "genres", "genres")
    shutil.copytree(MODELS_DIR / "default", root / "default")
    return root


@pytest.fixture(scope="module")
def app(models_root):
    return create_app({"TESTING": True, "MODELS_DIR": str(models_root), "MODELS": "genres,default"})


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture(scope="module")
def served(app) -> dict[str, FluencyScorer]:
    return app.extensions["fluency"].get().models


def _fluency_by_index(path: str, body: dict) -> list[float]:
    """The fluency of each text, in input order, whichever endpoint answered."""
    if path == "/v1/rerank":
        return [r["fluency"] for r in sorted(body["ranked"], key=lambda r: r["index"])]
    items = body["scores"] if path == "/v1/score" else body["explanations"]
    return [item["fluency"] for item in items]


def _valid(client, body: dict, schema: str) -> None:
    spec = client.get("/openapi.json").get_json()
    jsonschema.validate(
        body, {"$ref": f"#/components/schemas/{schema}", "components": spec["components"]}
    )


RESPONSES = {
    "/v1/score": "ScoreResponse",
    "/v1/rerank": "RerankResponse",
    "/v1/explain": "ExplainResponse",
}


@pytest.mark.parametrize("path", ENDPOINTS)
def test_each_head_of_each_model_scores_as_the_library_does(client, served, path):
    assert served["genres"].genres == ["general", "mt", "dialogue"]
    for name, scorer in served.items():
        general = scorer.score_texts(TEXTS)
        for genre in scorer.genres:
            resp = client.post(path, json={**ENDPOINTS[path], "model": name, "genre": genre})
            assert resp.status_code == 200, resp.get_json()
            body = resp.get_json()
            assert (body["model"], body["genre"]) == (name, genre)
            _valid(client, body, RESPONSES[path])
            expected = scorer.for_genre(genre).score_texts(TEXTS)
            got = _fluency_by_index(path, body)
            assert got == pytest.approx([s.score for s in expected], abs=1e-9), (name, genre)
            if name == "genres" and genre != "general":  # the heads written here differ
                for g, s in zip(got, general, strict=True):
                    assert abs(g - s.score) > 1e-6, (genre, g, s.score)


@pytest.mark.parametrize("path", ENDPOINTS)
def test_the_general_genre_is_no_genre(client, served, path):
    for name, scorer in served.items():
        assert scorer.genres[0] == "general"
        plain = client.post(path, json={**ENDPOINTS[path], "model": name}).get_json()
        named = client.post(path, json={**ENDPOINTS[path], "model": name, "genre": "general"})
        assert named.get_json() == plain and plain["genre"] == "general"


def test_explanations_add_up_to_the_score_each_head_serves(client, served):
    for name, scorer in served.items():
        for genre in scorer.genres:
            body = {"sentences": TEXTS, "top": 5, "model": name, "genre": genre}
            explained = client.post("/v1/explain", json=body).get_json()
            scored = client.post(
                "/v1/score", json={"sentences": TEXTS, "model": name, "genre": genre}
            ).get_json()
            for e, s in zip(explained["explanations"], scored["scores"], strict=True):
                assert e["fluency"] == pytest.approx(s["fluency"], abs=1e-9)
                assert e["gleu"] == pytest.approx(s["gleu"], abs=1e-9)
                c = e["contributions"]
                total = c["intercept"] + sum(f["contribution"] for f in c["features"])
                total += c["rest"] + c["residual"]
                served_score = e["fluency"] if e["explains"] == "fluency" else e["gleu"]
                assert total == pytest.approx(served_score, abs=1e-6), (name, genre)
                if genre != "general" and name == "genres":  # linear heads: read back exactly
                    assert e["explains"] == "fluency" and c["exact"]


@pytest.mark.parametrize("path", ENDPOINTS)
def test_an_unknown_genre_is_refused_with_the_models_genres(client, served, path):
    for name, scorer in served.items():
        resp = client.post(path, json={**ENDPOINTS[path], "model": name, "genre": "poetry"})
        body = assert_problem(resp, 422, "unknown-genre")
        assert body["genres"] == scorer.genres and body["model"] == name
        assert "'poetry'" in body["detail"] and "not a genre this project knows" in body["detail"]
    # No model named: the default's genres.
    resp = client.post(path, json={**ENDPOINTS[path], "genre": "poetry"})
    assert assert_problem(resp, 422, "unknown-genre")["genres"] == served["genres"].genres


@pytest.mark.parametrize("path", ENDPOINTS)
def test_a_known_genre_without_a_head_says_why(client, served, path):
    resp = client.post(path, json={**ENDPOINTS[path], "model": "genres", "genre": "summaries"})
    body = assert_problem(resp, 422, "unknown-genre")
    assert "'summaries'" in body["detail"] and NOT_SHIPPED in body["detail"]
    assert body["genres"] == ["general", "mt", "dialogue"]
    missing = [g for g in GENRE_NAMES if g not in served["default"].genres]
    for genre in missing:
        resp = client.post(path, json={**ENDPOINTS[path], "model": "default", "genre": genre})
        body = assert_problem(resp, 422, "unknown-genre")
        assert f"{genre!r}" in body["detail"] and body["genres"] == served["default"].genres


@pytest.mark.parametrize("path", ENDPOINTS)
@pytest.mark.parametrize("genre", [3, None, ["mt"]])
def test_a_genre_that_is_not_a_string_is_a_bad_body(client, path, genre):
    resp = client.post(path, json={**ENDPOINTS[path], "genre": genre})
    assert "'genre'" in assert_problem(resp, 400, "invalid-body")["detail"]


def test_the_models_list_their_genres_and_what_was_not_shipped(client, served):
    body = client.get("/v1/models").get_json()
    _valid(client, body, "ModelsResponse")
    listed = {m["name"]: m for m in body["models"]}
    assert set(listed) == set(served)
    for name, scorer in served.items():
        genres = listed[name]["genres"]
        assert [g["name"] for g in genres] == scorer.genres
        for g in genres:
            assert g["aggregate"] == scorer.for_genre(g["name"]).aggregate_for()
        for genre, why in listed[name]["genres_not_shipped"].items():
            assert genre not in scorer.genres and why.startswith("not shipped")
    ours = listed["genres"]
    assert [(g["name"], g["aggregate"]) for g in ours["genres"]] == [
        ("general", served["genres"].aggregate_for()),
        ("mt", "whole"),
        ("dialogue", "weighted"),
    ]
    held = [g["held_out"] for g in ours["genres"]]
    assert held == [
        GENERAL_HELD_OUT | {"system": GENERAL_SYSTEMS},
        MT_HELD_OUT | {"system": None},  # a card that did not judge the head per system
        None,
    ]
    assert ours["genres_not_shipped"] == {"summaries": NOT_SHIPPED}


def test_the_request_schemas_list_the_genres_served(client, served):
    spec = client.get("/openapi.json").get_json()
    schemas = spec["components"]["schemas"]
    every = {g for s in served.values() for g in s.genres}
    for name in ("ScoreRequest", "RerankRequest", "ExplainRequest"):
        assert set(schemas[name]["properties"]["genre"]["enum"]) == every
    for name in ("ScoreResponse", "RerankResponse", "ExplainResponse"):
        assert "genre" in schemas[name]["required"]


def test_texts_are_counted_by_the_genre_head_that_scored_them(models_root):
    app = create_app({"TESTING": True, "MODELS_DIR": str(models_root), "MODELS": "genres"})
    client = app.test_client()
    assert client.post("/v1/score", json={"sentences": TEXTS, "genre": "mt"}).status_code == 200
    assert client.post("/v1/score", json={"sentences": TEXTS[:1]}).status_code == 200
    refused = client.post("/v1/score", json={"sentences": TEXTS, "genre": "poetry"})
    assert_problem(refused, 422, "unknown-genre")
    scraped = client.get("/metrics").get_data(as_text=True)
    counted = {
        (s.labels["model"], s.labels["genre"]): s.value
        for family in text_string_to_metric_families(scraped)
        for s in family.samples
        if s.name == "fluency_texts_scored_total" and s.labels["endpoint"] == "/v1/score"
    }
    assert counted == {("genres", "mt"): len(TEXTS), ("genres", "general"): 1}
    problems = [
        s
        for family in text_string_to_metric_families(scraped)
        for s in family.samples
        if s.name == "fluency_http_problems_total" and s.labels["type"] == "unknown-genre"
    ]
    assert [p.value for p in problems] == [1]


def test_general_is_accepted_by_a_bundle_without_a_second_stage(app_config):
    client = create_app(app_config).test_client()  # the tiny test model: GLEU alone
    for path, body in ENDPOINTS.items():
        plain = client.post(path, json=body).get_json()
        named = client.post(path, json={**body, "genre": "general"})
        assert named.status_code == 200 and named.get_json() == plain
        assert plain["genre"] == "general"
        resp = client.post(path, json={**body, "genre": "mt"})
        assert assert_problem(resp, 422, "unknown-genre")["genres"] == ["general"]
    request = client.get("/openapi.json").get_json()["components"]["schemas"]["ScoreRequest"]
    assert request["properties"]["genre"]["enum"] == ["general"]
