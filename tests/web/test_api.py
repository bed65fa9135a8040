"""Every endpoint and error path through Flask's test client, on the real tiny model."""

from __future__ import annotations

import json
import logging

import pytest
from sklearn.pipeline import Pipeline
from sklearn.svm import SVC
from web.support import OTHER, REAL, assert_problem, shuffles, sigmoid

from scorer.rerank import DEFAULT_WEIGHTS_WITH_REFS
from scorer.scoring import FluencyScorer
from scorer.web import create_app
from scorer.web.logs import ACCESS_LOGGER


def test_health_ready_model(client):
    assert client.get("/healthz").get_json() == {"status": "ok"}
    assert client.get("/readyz").get_json() == {
        "status": "ready",
        "model": "tiny",
        "models": ["tiny"],
    }
    body = client.get("/v1/model").get_json()
    assert body["serving"]["name"] == "tiny" and body["card"]["name"] == "tiny"
    assert body["serving"]["model_sha256"] == body["card"]["model_sha256"]
    assert body["serving"]["placeholders"] == ["X"]  # the default FLUENCY_PLACEHOLDERS


def test_a_slot_placeholder_scores_as_a_name_and_comes_back_as_sent(client):
    delex = "X said that the bank in the X area had failed."
    named = delex.replace("X", "Smith")
    body = client.post("/v1/score", json={"sentences": [delex, named]}).get_json()
    assert body["scores"][0]["fluency"] == pytest.approx(body["scores"][1]["fluency"])
    ranked = client.post("/v1/rerank", json={"candidates": [delex]}).get_json()["ranked"]
    assert ranked[0]["text"] == delex


def test_score_puts_real_text_above_shuffles_and_features_on_request(client):
    texts = [REAL, *shuffles(REAL, 3, seed=1)]
    plain = client.post("/v1/score", json={"sentences": texts}).get_json()
    assert [s["index"] for s in plain["scores"]] == [0, 1, 2, 3]
    assert all(set(s) == {"index", "fluency", "gleu"} for s in plain["scores"])
    # An uncalibrated model: the fluency score is the GLEU stage's distance itself.
    assert all(s["fluency"] == s["gleu"] for s in plain["scores"])
    fluency = [s["fluency"] for s in plain["scores"]]
    assert fluency[0] > max(fluency[1:])
    detailed = client.post("/v1/score", json={"sentences": texts, "features": True}).get_json()
    first = detailed["scores"][0]
    assert first["fluency"] == pytest.approx(fluency[0])
    assert "surface.v2/n_tokens" in first["features"]
    assert first["features"]["surface.v2/n_tokens"] == 15.0  # 14 words and the full stop


def test_rerank_without_references_is_fluency_alone(client):
    candidates = [*shuffles(REAL, 4, seed=2), REAL]
    body = client.post("/v1/rerank", json={"candidates": candidates}).get_json()
    assert body["weights"] == {"fluency": 1.0}
    ranked = body["ranked"]
    assert ranked[0]["index"] == 4 and ranked[0]["text"] == REAL
    assert sorted(r["index"] for r in ranked) == list(range(5))
    assert [r["combined"] for r in ranked] == sorted((r["combined"] for r in ranked), reverse=True)
    for r in ranked:
        assert r["combined"] == pytest.approx(sigmoid(r["fluency"]))
        assert r["text"] == candidates[r["index"]] and "accuracy" not in r
        assert r["gleu"] == r["fluency"]
    top = client.post("/v1/rerank", json={"candidates": candidates, "top_k": 2}).get_json()
    assert top["ranked"] == ranked[:2]


def test_references_change_the_ranking_as_documented(client):
    alone = client.post("/v1/rerank", json={"candidates": [REAL, OTHER]}).get_json()["ranked"]
    loser = alone[1]["text"]
    body = client.post(
        "/v1/rerank", json={"candidates": [REAL, OTHER], "references": [loser]}
    ).get_json()
    assert body["weights"] == pytest.approx(DEFAULT_WEIGHTS_WITH_REFS)
    assert body["ranked"][0]["text"] == loser
    for r in body["ranked"]:
        acc = r["accuracy"]
        expected = (
            0.4 * sigmoid(r["fluency"])
            + 0.3 * acc["generation_tree_accuracy"]
            + 0.3 * acc["chrf"] / 100
        )
        assert r["combined"] == pytest.approx(expected)
    # Weights are a parameter, normalised: fluency alone again, however it is scaled.
    again = client.post(
        "/v1/rerank",
        json={"candidates": [REAL, OTHER], "references": [loser], "weights": {"fluency": 5}},
    ).get_json()
    assert again["weights"] == {"fluency": 1.0}
    assert [r["index"] for r in again["ranked"]] == [r["index"] for r in alone]


def test_accuracy_per_pair_with_counts_and_corpus(client):
    hyp = "There was estimate for phase the second no cost"  # Bangalore et al. (2000), ex. (2)
    ref = "There was no cost estimate for the second phase"
    body = client.post(
        "/v1/accuracy", json={"hypotheses": [ref, hyp], "references": [[ref], [ref]]}
    ).get_json()
    exact, scrambled = body["rows"]
    assert exact["simple_string_accuracy"] == 1.0 and exact["simple_string_S"] == 0
    assert scrambled["simple_string_R"] == 9
    assert scrambled["simple_string_accuracy"] < 1.0 and scrambled["bleu"] < 100
    assert body["corpus"]["n_segments"] == 2
    assert set(body["signatures"]) >= {"string", "tree", "bleu", "chrf"}


BAD_JSON = [
    (b"{", "not valid JSON"),
    (b"", "empty"),
    (b"[1, 2]", "JSON object"),
    (b'{"sentences": NaN}', "not valid JSON"),
]


@pytest.mark.parametrize(("raw", "words"), BAD_JSON)
def test_malformed_json_is_400(client, raw, words):
    resp = client.post("/v1/score", data=raw, content_type="application/json")
    assert words in assert_problem(resp, 400, "invalid-body")["detail"]


@pytest.mark.parametrize(
    ("path", "body", "words"),
    [
        ("/v1/score", {"sentences": "one string"}, "list of strings"),
        ("/v1/score", {"sentences": [1]}, "sentences[0]"),
        ("/v1/score", {}, "required"),
        ("/v1/score", {"sentences": ["ok"], "sentence": 1}, "'sentence'"),
        ("/v1/score", {"sentences": ["ok"], "features": "yes"}, "features"),
        ("/v1/rerank", {"candidates": ["a b"], "top_k": "2"}, "top_k"),
        ("/v1/rerank", {"candidates": ["a b"], "weights": [1]}, "weights"),
        ("/v1/rerank", {"candidates": ["a b"], "weights": {"fluency": "1"}}, "number"),
        ("/v1/rerank", {"candidates": ["a b"], "references": "a b"}, "references"),
        ("/v1/accuracy", {"hypotheses": ["a b"], "references": ["a b"]}, "references[0]"),
        ("/v1/accuracy", {"hypotheses": ["a b"]}, "references"),
    ],
)
def test_wrong_types_are_400(client, path, body, words):
    assert words in assert_problem(client.post(path, json=body), 400, "invalid-body")["detail"]


@pytest.mark.parametrize(
    ("path", "body", "words"),
    [
        ("/v1/score", {"sentences": []}, "empty"),
        ("/v1/score", {"sentences": ["   \n"]}, "whitespace"),
        ("/v1/score", {"sentences": ["word"] * 13}, "at most 12"),
        ("/v1/score", {"sentences": ["x" * 301]}, "at most 300"),
        ("/v1/score", {"sentences": ["bell \x07 here"]}, "U+0007"),
        ("/v1/rerank", {"candidates": ["a b"] * 13}, "at most 12"),
        ("/v1/rerank", {"candidates": ["a b"], "references": ["c"] * 4}, "at most 3"),
        ("/v1/rerank", {"candidates": ["a b"], "top_k": 0}, "top_k"),
        ("/v1/rerank", {"candidates": ["a b"], "weights": {"bleu": 1}}, "needs references"),
        ("/v1/rerank", {"candidates": ["a b"], "weights": {"loudness": 1}}, "unknown weight"),
        ("/v1/rerank", {"candidates": ["a b"], "weights": {"fluency": 0}}, "sum to 0"),
        ("/v1/accuracy", {"hypotheses": ["a b"], "references": [["a"], ["b"]]}, "reference lists"),
        ("/v1/accuracy", {"hypotheses": ["a b"], "references": [[]]}, "empty"),
    ],
)
def test_unacceptable_input_is_422(client, path, body, words):
    assert words in assert_problem(client.post(path, json=body), 422, "unsupported-input")["detail"]


def test_body_over_the_limit_is_413(client):
    resp = client.post("/v1/score", json={"sentences": ["word " * 5000]})
    assert "20000 bytes" in assert_problem(resp, 413, "body-too-large")["detail"]


def test_unknown_path_404_and_wrong_method_405(client):
    assert_problem(client.get("/v2/score"), 404, "not-found")
    body = assert_problem(client.get("/v1/rerank"), 405, "method-not-allowed")
    assert "POST" in body["detail"]


def test_a_server_fault_is_500_without_a_traceback(caplog):
    # A real but unfitted pipeline: scoring raises deep inside scikit-learn.
    broken = FluencyScorer(Pipeline([("extract", "passthrough"), ("svm", SVC())]), {"name": "x"})
    client = create_app({"TESTING": False, "ACCESS_LOG": False}, scorer=broken).test_client()
    with caplog.at_level(logging.ERROR, logger="scorer.web.errors"):
        resp = client.post("/v1/score", json={"sentences": [REAL]}, headers={"X-Request-ID": "r-1"})
    body = assert_problem(resp, 500, "internal-error")
    assert "r-1" in body["detail"] and "sklearn" not in resp.get_data(as_text=True)
    assert any("r-1" in r.getMessage() and r.exc_info for r in caplog.records)


def test_missing_model_still_serves_health_but_not_scores(tmp_path):
    app = create_app({"MODELS_DIR": str(tmp_path), "MODEL_PATH": str(tmp_path / "none")})
    client = app.test_client()
    assert client.get("/healthz").status_code == 200
    assert "no model at" in assert_problem(client.get("/readyz"), 503, "not-ready")["detail"]
    assert_problem(client.get("/v1/model"), 503, "not-ready")
    for path, key in (("/v1/score", "sentences"), ("/v1/rerank", "candidates")):
        assert_problem(client.post(path, json={key: [REAL]}), 503, "not-ready")


def test_corrupt_model_is_not_ready(models_dir, tmp_path):
    import shutil

    shutil.copytree(models_dir / "tiny", tmp_path / "bad")
    with (tmp_path / "bad" / "model.joblib").open("ab") as fh:
        fh.write(b"tampered")
    app = create_app({"MODELS_DIR": str(tmp_path), "MODEL_PATH": str(tmp_path / "bad")})
    detail = assert_problem(app.test_client().get("/readyz"), 503, "not-ready")["detail"]
    assert "SHA-256" in detail


class _Capture(logging.Handler):
    def __init__(self):
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record):
        self.lines.append(record.getMessage())


@pytest.mark.parametrize("log_text", [False, True])
def test_access_log_is_one_json_line_without_text_unless_asked(app_config, log_text):
    client = create_app({**app_config, "LOG_TEXT": log_text}).test_client()
    capture = _Capture()
    logger = logging.getLogger(ACCESS_LOGGER)
    logger.addHandler(capture)
    try:
        resp = client.post(
            "/v1/score", json={"sentences": [OTHER]}, headers={"X-Request-ID": "abc-123"}
        )
        bad = client.post("/v1/score", json={"sentences": []})
    finally:
        logger.removeHandler(capture)
    assert resp.headers["X-Request-ID"] == "abc-123"
    assert len(bad.headers["X-Request-ID"]) == 32  # none sent: a fresh UUID
    first, second = (json.loads(line) for line in capture.lines)
    assert first["request_id"] == "abc-123" and first["status"] == 200
    assert first["method"] == "POST" and first["path"] == "/v1/score"
    assert first["duration_ms"] > 0 and second["status"] == 422
    assert ("tomatoes" in capture.lines[0]) is log_text


def test_a_request_id_that_is_not_sane_is_replaced(client):
    resp = client.get("/healthz", headers={"X-Request-ID": "x" * 200})
    assert resp.headers["X-Request-ID"] != "x" * 200
