"""POST /v1/admin/reload in one process: authentication, swap, and a failed reload kept out."""

from __future__ import annotations

import shutil

import pytest
from web.support import ADMIN_TOKEN, assert_problem

from scorer.web import create_app

AUTH = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


@pytest.fixture
def admin(app_config):
    return create_app(app_config).test_client()


def test_admin_api_is_off_without_a_token(app_config):
    client = create_app({**app_config, "ADMIN_TOKEN": None}).test_client()
    assert_problem(client.post("/v1/admin/reload", headers=AUTH), 403, "admin-disabled")


@pytest.mark.parametrize("header", [None, "Bearer wrong", f"Basic {ADMIN_TOKEN}"])
def test_wrong_or_missing_token_is_401(admin, header):
    headers = {"Authorization": header} if header else {}
    resp = admin.post("/v1/admin/reload", headers=headers)
    assert_problem(resp, 401, "unauthorized")
    assert resp.headers["WWW-Authenticate"] == "Bearer"


def test_reload_swaps_the_model_and_back(admin):
    resp = admin.post("/v1/admin/reload", json={"model": "tiny-copy"}, headers=AUTH)
    assert resp.status_code == 200, resp.get_json()
    body = resp.get_json()
    assert body["scope"] == "process"
    assert body["previous"]["name"] == "tiny" and body["serving"]["name"] == "tiny-copy"
    assert admin.get("/v1/model").get_json()["serving"]["name"] == "tiny-copy"
    score = admin.post("/v1/score", json={"sentences": ["A short test."]}).get_json()
    assert score["model"] == "tiny-copy"
    # No body: reload the bundle served now (a retrained model copied over it in place).
    again = admin.post("/v1/admin/reload", headers=AUTH).get_json()
    assert again["serving"]["name"] == "tiny-copy"


def test_a_failed_reload_keeps_the_old_model(admin, models_dir, tmp_path):
    for model, words in [
        ("no-such-model", "no model at"),
        ("/etc", "outside the models directory"),
    ]:
        resp = admin.post("/v1/admin/reload", json={"model": model}, headers=AUTH)
        assert words in assert_problem(resp, 422, "model-load-failed")["detail"]
    assert admin.get("/v1/model").get_json()["serving"]["name"] == "tiny"
    assert admin.get("/readyz").status_code == 200


def test_a_corrupt_bundle_is_refused(app_config, models_dir, tmp_path):
    shutil.copytree(models_dir, tmp_path / "models")
    with (tmp_path / "models" / "tiny-copy" / "model.joblib").open("ab") as fh:
        fh.write(b"x")
    config = {**app_config, "MODELS_DIR": str(tmp_path / "models")}
    config["MODEL_PATH"] = str(tmp_path / "models" / "tiny")
    client = create_app(config).test_client()
    resp = client.post("/v1/admin/reload", json={"model": "tiny-copy"}, headers=AUTH)
    assert "SHA-256" in assert_problem(resp, 422, "model-load-failed")["detail"]
    assert client.get("/v1/model").get_json()["serving"]["name"] == "tiny"


def test_reload_body_must_name_a_model(admin):
    resp = admin.post("/v1/admin/reload", json={"model": 3}, headers=AUTH)
    assert_problem(resp, 400, "invalid-body")
