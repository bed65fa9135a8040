"""Several models served at once (FLUENCY_MODELS=default,data-to-text, the shipped bundles): each
request picks one by name, an unknown name is refused with the loaded ones listed, /v1/models
describes them, and the two bundles, built on the same GLEU model, share their resources and
feature rows, so a text is parsed once for both. Then the same through real gunicorn workers."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import time
from collections.abc import Iterator

import jsonschema
import pytest
import requests
from web.support import (
    ADMIN_TOKEN,
    REAL,
    Server,
    assert_problem,
    shuffles,
    start_server,
    stop_server,
)

import features.rows
from features.resources import MODELS_DIR
from features.segment import AGGREGATES
from scorer import load_scorers
from scorer.bundles import configured_models
from scorer.config import from_env
from scorer.errors import ModelLoadError
from scorer.summary import summarize
from scorer.web import create_app

NAMES = ["default", "data-to-text"]
AUTH = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
TEXTS = [REAL, *shuffles(REAL, 2, seed=3)]
CONFIG = {
    "TESTING": True,
    "MODELS_DIR": str(MODELS_DIR),
    "MODELS": ",".join(NAMES),
    "ADMIN_TOKEN": ADMIN_TOKEN,
    "RELOAD_INTERVAL": 0,
}


@pytest.fixture(scope="module")
def app():
    return create_app(CONFIG)


@pytest.fixture
def client(app):
    return app.test_client()


def _valid(client, body: dict, schema: str) -> None:
    spec = client.get("/openapi.json").get_json()
    ref = {"$ref": f"#/components/schemas/{schema}", "components": spec["components"]}
    jsonschema.validate(body, ref)


def test_the_setting_names_the_models_and_its_absence_changes_nothing():
    env = from_env({"FLUENCY_MODELS": " default, data-to-text ,"})
    assert configured_models(env) == NAMES
    env = from_env({"FLUENCY_MODEL_PATH": "fast"})
    assert configured_models(env) == ["fast"]  # FLUENCY_MODELS unset: MODEL_PATH alone


def test_each_request_is_scored_by_the_model_it_names(client):
    plain = client.post("/v1/score", json={"sentences": TEXTS}).get_json()
    default = client.post("/v1/score", json={"sentences": TEXTS, "model": "default"}).get_json()
    calibrated = client.post(
        "/v1/score", json={"sentences": TEXTS, "model": "data-to-text"}
    ).get_json()
    assert plain == default and default["model"] == "default"
    assert calibrated["model"] == "data-to-text"
    for d, c in zip(default["scores"], calibrated["scores"], strict=True):
        assert abs(d["fluency"] - d["gleu"]) > 1e-3  # the default's second stage ...
        assert c["gleu"] == pytest.approx(d["gleu"])  # ... on the same GLEU stage ...
        assert abs(c["fluency"] - d["fluency"]) > 1e-3  # ... and the genre bundle's another
    _valid(client, {"sentences": TEXTS, "model": "data-to-text"}, "ScoreRequest")

    for name, scored in (("default", default), ("data-to-text", calibrated)):
        ranked = client.post("/v1/rerank", json={"candidates": TEXTS, "model": name}).get_json()
        assert ranked["model"] == name
        fluency = {r["index"]: r["fluency"] for r in ranked["ranked"]}
        assert fluency == pytest.approx({s["index"]: s["fluency"] for s in scored["scores"]})
        explained = client.post("/v1/explain", json={"sentences": TEXTS, "model": name})
        assert explained.get_json()["model"] == name
        got = [e["fluency"] for e in explained.get_json()["explanations"]]
        assert got == pytest.approx([s["fluency"] for s in scored["scores"]])


@pytest.mark.parametrize("path", ["/v1/score", "/v1/rerank", "/v1/explain"])
def test_an_unknown_model_is_422_listing_the_loaded_ones(client, path):
    key = "candidates" if path == "/v1/rerank" else "sentences"
    resp = client.post(path, json={key: [REAL], "model": "full"})
    body = assert_problem(resp, 422, "unknown-model")
    assert body["models"] == NAMES
    assert "'full'" in body["detail"] and "default, data-to-text" in body["detail"]
    _valid(client, body, "Problem")
    resp = client.post(path, json={key: [REAL], "model": 3})
    assert_problem(resp, 400, "invalid-body")


def test_the_schema_lists_the_names_it_accepts(client):
    spec = client.get("/openapi.json").get_json()
    for name in ("ScoreRequest", "RerankRequest", "ExplainRequest"):
        assert spec["components"]["schemas"][name]["properties"]["model"]["enum"] == NAMES
    with pytest.raises(jsonschema.ValidationError):
        _valid(client, {"sentences": [REAL], "model": "full"}, "ScoreRequest")


def test_models_lists_each_with_its_card_summary(client):
    body = client.get("/v1/models").get_json()
    _valid(client, body, "ModelsResponse")
    assert body["default"] == "default"
    listed = {m["name"]: m for m in body["models"]}
    assert [m["name"] for m in body["models"]] == NAMES
    assert listed["default"]["default"] and not listed["data-to-text"]["default"]
    assert listed["default"]["calibrated"] and listed["data-to-text"]["calibrated"]
    assert listed["default"]["model_sha256"] == listed["data-to-text"]["model_sha256"]
    assert listed["default"]["genre"] == "general"  # it scores with its general head
    assert listed["data-to-text"]["genre"] == "data-to-text"
    assert listed["default"]["aggregate"] in AGGREGATES
    assert client.get("/v1/model").get_json()["serving"]["models"] == NAMES
    # the summary is written from the card's heads (the alias shares the default's card)
    card = json.loads((MODELS_DIR / "default" / "card.json").read_text())
    summary = listed["default"]["summary"]
    assert summary == listed["data-to-text"]["summary"] == summarize(card) == card["summary"]
    assert summary.startswith("GLEU stage: a linear ranking SVM over ")
    assert "General head: " in summary and "ridge" not in summary
    assert all(f" {genre} (" in summary for genre in card["heads"] if genre != "general")


def test_the_model_card_is_lean_and_its_report_comes_when_asked(client):
    folder = MODELS_DIR / "default"
    resp = client.get("/v1/model")
    assert resp.status_code == 200 and len(resp.get_data()) < 100_000
    body = resp.get_json()
    _valid(client, body, "ModelResponse")
    assert "heads_report" not in body
    assert body["card"] == json.loads((folder / "card.json").read_text())
    assert body["card"]["heads_report"]["general"]["head"]["label"] == "head"
    assert client.get("/v1/model?report=0").get_json()["card"] == body["card"]

    resp = client.get("/v1/model?report=1")
    full = resp.get_json()
    _valid(client, full, "ModelResponse")
    assert full["card"] == body["card"] and len(resp.get_data()) > 150_000
    assert full["heads_report"] == json.loads((folder / "heads_report.json").read_text())
    table = full["heads_report"]["general"]["table"]
    assert table[0] == body["card"]["heads_report"]["general"]["head"] and len(table) > 20
    assert client.get("/v1/model?report=true").get_json()["heads_report"] == full["heads_report"]
    problem = assert_problem(client.get("/v1/model?report=yes"), 400, "invalid-query")
    assert "'report'" in problem["detail"]


def test_an_old_card_with_its_tables_inside_is_served_lean_with_the_report_on_request(tmp_path):
    folder = shutil.copytree(MODELS_DIR / "default", tmp_path / "default")
    card = json.loads((folder / "card.json").read_text())
    report = json.loads((folder / "heads_report.json").read_text())
    del card["heads_report_file"]
    card["heads_report"] = report  # as 0.12.1 wrote it: the tables in the card, no file
    (folder / "heads_report.json").unlink()
    (folder / "card.json").write_text(json.dumps(card, indent=2))
    config = {**CONFIG, "MODELS_DIR": str(tmp_path), "MODELS": "default"}
    client = create_app(config).test_client()
    resp = client.get("/v1/model")
    assert resp.status_code == 200 and len(resp.get_data()) < 100_000
    served = resp.get_json()["card"]
    assert "table" not in served["heads_report"]["general"]
    assert served["heads_report"]["general"]["head"] == report["general"]["table"][0]
    assert client.get("/v1/model?report=1").get_json()["heads_report"] == report


@pytest.mark.parametrize("damage", ["missing", "corrupt"])
def test_a_broken_report_fails_only_the_request_for_it(tmp_path, damage):
    shutil.copytree(MODELS_DIR / "default", tmp_path / "default")
    path = tmp_path / "default" / "heads_report.json"
    if damage == "missing":
        path.unlink()
    else:
        path.write_text(path.read_text().replace('"decision": "shipped"', '"decision": "x"', 1))
    config = {**CONFIG, "MODELS_DIR": str(tmp_path), "MODELS": "default"}
    client = create_app(config).test_client()
    scored = client.post("/v1/score", json={"sentences": TEXTS})
    assert scored.status_code == 200 and len(scored.get_json()["scores"]) == len(TEXTS)
    assert client.get("/v1/models").status_code == 200
    assert client.get("/v1/model").get_json()["card"]["name"] == "default"
    problem = assert_problem(client.get("/v1/model?report=1"), 500, "report-unavailable")
    assert "heads_report.json" in problem["detail"]
    assert ("is missing" if damage == "missing" else "corrupt") in problem["detail"]


def test_the_two_bundles_share_resources_and_rows_and_parse_a_text_once(app, client, monkeypatch):
    models = app.extensions["fluency"].get().models
    default, calibrated = models["default"], models["data-to-text"]
    assert default.resources is calibrated.resources
    assert default.rows is calibrated.rows
    assert default.gleu_svm is not calibrated.gleu_svm and calibrated.head is not None

    parsed: list[str] = []
    real_parse = features.rows.parse

    def counting(texts, **kwargs):
        parsed.extend(texts)
        return real_parse(texts, **kwargs)

    monkeypatch.setattr(features.rows, "parse", counting)
    text = f"The harbour master counted {time.time_ns()} boats before the storm."
    for name in NAMES:
        resp = client.post("/v1/score", json={"sentences": [text], "model": name})
        assert resp.status_code == 200 and resp.get_json()["model"] == name
    assert parsed == [text]


def test_an_admin_reload_keeps_the_set_or_makes_a_bundle_the_default(client):
    resp = client.post("/v1/admin/reload", json={}, headers=AUTH)
    assert resp.status_code == 200, resp.get_json()
    assert resp.get_json()["serving"]["models"] == NAMES
    resp = client.post("/v1/admin/reload", json={"model": "data-to-text"}, headers=AUTH)
    assert resp.get_json()["serving"]["models"] == ["data-to-text", "default"]
    assert client.get("/v1/models").get_json()["default"] == "data-to-text"
    scored = client.post("/v1/score", json={"sentences": [REAL]}).get_json()
    assert scored["model"] == "data-to-text"
    resp = client.post("/v1/admin/reload", json={"model": "no-such-bundle"}, headers=AUTH)
    assert_problem(resp, 422, "model-load-failed")
    resp = client.post("/v1/admin/reload", json={"model": "default"}, headers=AUTH)
    assert resp.get_json()["serving"]["models"] == NAMES  # back as it was
    models = client.application.extensions["fluency"].get().models
    assert models["default"].rows is models["data-to-text"].rows  # shared after a reload too


def test_the_library_refuses_two_bundles_of_one_name():
    with pytest.raises(ModelLoadError, match="two bundles are named 'default'"):
        load_scorers(["default", "default"])
    with pytest.raises(TypeError):
        load_scorers("default")


def test_a_tier_whose_extra_is_missing_is_left_out_saying_which_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "benepar", None)  # as where the `full` extra is not installed
    client = create_app({**CONFIG, "MODELS": "fast,full"}).test_client()
    assert client.get("/readyz").status_code == 200
    ok = client.post("/v1/score", json={"sentences": TEXTS[:1]})
    assert ok.status_code == 200 and ok.get_json()["model"] == "fast"
    resp = client.post("/v1/score", json={"sentences": TEXTS[:1], "model": "full"})
    body = assert_problem(resp, 503, "model-unavailable")
    assert "benepar is not installed: pip install 'fluency-scorer[full]'" in body["detail"]
    serving = client.get("/v1/model").get_json()["serving"]
    assert serving["models"] == ["fast"] and list(serving["failed"]) == ["full"]


@pytest.fixture(scope="module")
def two_models(tmp_path_factory) -> Iterator[Server]:
    env = {
        "FLUENCY_MODELS": ",".join(NAMES),
        "FLUENCY_MODEL_PATH": str(MODELS_DIR / "default"),
    }
    log = tmp_path_factory.mktemp("models") / "server.log"
    srv = start_server(MODELS_DIR, log, workers=2, env=env)
    yield srv
    stop_server(srv.proc)


def test_gunicorn_workers_score_with_the_model_each_request_names(two_models, app, client):
    url = two_models.url
    listed = requests.get(url + "/v1/models", timeout=10).json()
    assert [m["name"] for m in listed["models"]] == NAMES
    expected = {
        name: client.post("/v1/score", json={"sentences": TEXTS, "model": name}).get_json()
        for name in NAMES
    }
    with requests.Session() as session:
        for _ in range(2):  # keep-alive and the balancer may send these to either worker
            for name in NAMES:
                got = session.post(
                    url + "/v1/score", json={"sentences": TEXTS, "model": name}, timeout=60
                ).json()
                assert got["model"] == name
                assert [s["fluency"] for s in got["scores"]] == pytest.approx(
                    [s["fluency"] for s in expected[name]["scores"]]
                )
    resp = requests.post(url + "/v1/rerank", json={"candidates": TEXTS, "model": "x"}, timeout=10)
    assert assert_problem(resp, 422, "unknown-model")["models"] == NAMES

    # SIGHUP: the master reloads the set and forks new workers, which serve both again.
    os.kill(two_models.proc.pid, signal.SIGHUP)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and "reloaded model default" not in "\n".join(
        two_models.log_lines()
    ):
        time.sleep(0.2)
    log = "\n".join(two_models.log_lines())
    assert "reloaded model default" in log and "serving models default, data-to-text" in log
    got = requests.post(
        url + "/v1/score", json={"sentences": TEXTS, "model": "data-to-text"}, timeout=60
    ).json()
    assert [s["fluency"] for s in got["scores"]] == pytest.approx(
        [s["fluency"] for s in expected["data-to-text"]["scores"]]
    )


def test_metrics_and_readiness_name_every_loaded_model(client):
    from prometheus_client.parser import text_string_to_metric_families

    ready = client.get("/readyz").get_json()
    assert ready == {"status": "ready", "model": "default", "models": NAMES}
    _valid(client, ready, "Ready")
    client.post("/v1/score", json={"sentences": TEXTS[:2], "model": "data-to-text"})
    client.post("/v1/rerank", json={"candidates": TEXTS})
    client.post("/v1/score", json={"sentences": TEXTS[:1], "model": "nonesuch"})  # refused
    samples = [
        s
        for family in text_string_to_metric_families(client.get("/metrics").get_data(as_text=True))
        for s in family.samples
    ]
    scored = {
        (s.labels["endpoint"], s.labels["model"]): s.value
        for s in samples
        if s.name == "fluency_texts_scored_total"
    }
    assert scored[("/v1/score", "data-to-text")] >= 2 and ("/v1/score", "nonesuch") not in scored
    assert scored[("/v1/rerank", "default")] >= len(TEXTS)
    info = {s.labels["name"]: s.labels for s in samples if s.name == "fluency_model_info"}
    assert set(info) == set(NAMES)
    assert info["default"]["default"] == "true" and info["data-to-text"]["default"] == "false"
    assert info["default"]["model_sha256"] == info["data-to-text"]["model_sha256"]
