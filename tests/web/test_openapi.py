"""/openapi.json matches the service: every documented (path, method, status) is produced by a
real request here, and every answer validates against its documented schema."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from web.support import ADMIN_TOKEN, REAL

from scorer.heads_report import REPORT_FILE, REPORT_POINTER
from scorer.web import create_app
from scorer.web.reloads import ReloadGate

jsonschema = pytest.importorskip("jsonschema")

AUTH = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
JSON = "application/json"
OK_BODIES = {
    "/v1/score": {"sentences": [REAL, "factory the old."], "features": True},
    "/v1/rerank": {"candidates": [REAL, "factory the old."], "references": [REAL], "top_k": 2},
    "/v1/accuracy": {"hypotheses": [REAL], "references": [[REAL, "The old factory."]]},
    "/v1/explain": {"sentences": [REAL, "factory the old the old."], "top": 3},
    "/v1/admin/reload": {"model": "tiny"},
}
KEYS = {
    "/v1/score": "sentences",
    "/v1/rerank": "candidates",
    "/v1/accuracy": "hypotheses",
    "/v1/explain": "sentences",
}


def _request(path: str, method: str, status: int, client, not_ready, closed, others=None):
    """Make the request that should answer `status` on `path`."""
    others = others or {}
    if method == "get" and path == "/v1/model" and status == 400:
        return client.get(path, query_string={"report": "yes"})
    if method == "get" and path == "/v1/model" and status == 500:  # its report is missing
        return others["no_report"].get(path, query_string={"report": "1"})
    if method == "get":
        return (not_ready if status == 503 else client).get(path)
    headers = AUTH if path == "/v1/admin/reload" else {}
    key = KEYS.get(path, "model")
    bodies = {
        200: OK_BODIES[path],
        400: {key: 3},
        413: {key: ["word " * 5000]},
        422: {"model": "no-such-model"} if key == "model" else {key: []},
        503: {key: [REAL]},
    }
    if path == "/v1/accuracy":
        bodies[422]["references"] = []
    if status == 401:
        return client.post(path, json={}, headers={"Authorization": "Bearer nope"})
    if status == 403:
        return closed.post(path, json={}, headers=AUTH)
    if status == 415:
        return client.post(
            path, data=b"{}", headers={**headers, "Content-Encoding": "br"}, content_type=JSON
        )
    if status == 409:  # a reload is running in this process
        return others["pending"].post(path, json={}, headers=AUTH)
    if status == 429:  # the second reload within RELOAD_INTERVAL
        others["limited"].post(path, json={}, headers=AUTH)
        return others["limited"].post(path, json={}, headers=AUTH)
    if status == 503 and path == "/v1/accuracy":  # past REQUEST_TIMEOUT
        return others["late"].post(path, json=OK_BODIES[path])
    target = not_ready if status == 503 else client
    return target.post(path, json=bodies[status], headers=headers)


def _without_its_report(app_config: dict, models: Path):
    """A client serving a copy of the test model whose card names a heads_report.json that is
    not there."""
    folder = models / "no-report"
    shutil.copytree(Path(app_config["MODEL_PATH"]), folder)
    card = json.loads((folder / "card.json").read_text())
    card[REPORT_POINTER] = {"file": REPORT_FILE, "sha256": "0" * 64}
    (folder / "card.json").write_text(json.dumps(card))
    config = {**app_config, "MODELS_DIR": str(models), "MODEL_PATH": str(folder)}
    return create_app(config).test_client()


def test_every_documented_response_is_real_and_valid(app_config, tmp_path):
    app = create_app(app_config)
    client = app.test_client()
    not_ready = create_app({"MODELS_DIR": str(tmp_path), "MODEL_PATH": "none"}).test_client()
    closed = create_app({**app_config, "ADMIN_TOKEN": None}).test_client()
    pending_app = create_app(app_config)
    gate = ReloadGate(0)
    gate._lock.acquire()  # as if a reload were running
    pending_app.extensions["fluency_reload"] = gate
    others = {
        "pending": pending_app.test_client(),
        "limited": create_app({**app_config, "RELOAD_INTERVAL": 3600}).test_client(),
        "late": create_app({**app_config, "REQUEST_TIMEOUT": 1e-9}).test_client(),
        "no_report": _without_its_report(app_config, tmp_path / "models"),
    }
    spec = client.get("/openapi.json").get_json()
    assert spec["openapi"].startswith("3.1")
    jsonschema.Draft202012Validator.check_schema({"$defs": spec["components"]["schemas"]})

    documented = [
        (path, method, int(status), response)
        for path, item in spec["paths"].items()
        for method, op in item.items()
        for status, response in op["responses"].items()
    ]
    assert len(documented) >= 25
    for path, method, status, response in documented:
        resp = _request(path, method, status, client, not_ready, closed, others)
        assert resp.status_code == status, (path, method, status, resp.get_json(force=True))
        (media_type, content), *_ = response["content"].items()
        assert resp.mimetype == media_type, (path, status)
        if media_type == "text/html":  # the page
            assert resp.get_data(as_text=True).lstrip().lower().startswith("<!doctype html>")
            continue
        if media_type == "text/plain":  # /metrics, Prometheus text (tests/web/test_metrics.py)
            assert "# TYPE fluency_http_requests_total counter" in resp.get_data(as_text=True)
            continue
        schema = {**content["schema"], "components": spec["components"]}
        jsonschema.validate(resp.get_json(force=True), schema)

    # Nothing undocumented on the routes the app has.
    rules = {r.rule for r in app.url_map.iter_rules() if r.endpoint != "static"}
    assert rules == set(spec["paths"])


def test_request_schemas_accept_the_examples_and_refuse_bad_ones(client):
    spec = client.get("/openapi.json").get_json()
    components = spec["components"]
    for path, body in OK_BODIES.items():
        schema = spec["paths"][path]["post"]["requestBody"]["content"]["application/json"]
        jsonschema.validate(body, {**schema["schema"], "components": components})
    bad = {"candidates": [REAL], "weights": {"loudness": 1}}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(
            bad, {"$ref": "#/components/schemas/RerankRequest", "components": components}
        )
