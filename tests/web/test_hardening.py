"""Requests that once took the service down or past its own rules, against a live gunicorn.

Expensive requests are refused by the cost limits before any work, or stopped at the
request's deadline; the body reader holds depth and size whatever the framing; admin reloads
coalesce; the schema and the service agree on nulls, integers and characters.
"""

from __future__ import annotations

import gzip
import json
import random
import signal
import string
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests
from web.support import ADMIN_TOKEN, REAL, assert_problem, start_server, stop_server

AUTH = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
# The service's shipped limits (scorer/config.py), not the small ones of the session server.
SHIPPED = {
    "FLUENCY_MAX_BATCH": "64",
    "FLUENCY_MAX_CHARS": "2000",
    "FLUENCY_MAX_REFERENCES": "16",
    "FLUENCY_MAX_CONTENT_LENGTH": "1000000",
    "FLUENCY_MAX_ALIGN_TOKENS": "250",
}


def letters(n: int, rng: random.Random) -> str:
    """`n` one-letter words: the costliest text per character for the alignment."""
    return " ".join(rng.choice(string.ascii_lowercase) for _ in range(n))


@pytest.fixture(scope="module")
def shipped(models_dir, tmp_path_factory):
    srv = start_server(models_dir, tmp_path_factory.mktemp("shipped") / "server.log", env=SHIPPED)
    yield srv
    stop_server(srv.proc)


@pytest.fixture(scope="module")
def unlimited(models_dir, tmp_path_factory):
    """No cost limits and a 1 s deadline, so that long work really runs into the deadline."""
    env = {
        **SHIPPED,
        "FLUENCY_MAX_ALIGN_TOKENS": "100000",
        "FLUENCY_MAX_PAIRS": "100000",
        "FLUENCY_MAX_ALIGN_WORK": "1000000000000",
        "FLUENCY_MAX_REQUEST_TOKENS": "10000000",
        "FLUENCY_REQUEST_TIMEOUT": "1",
    }
    log = tmp_path_factory.mktemp("unlimited") / "server.log"
    srv = start_server(models_dir, log, workers=1, env=env)
    yield srv
    stop_server(srv.proc)


def test_costly_requests_are_refused_at_once_and_health_answers(shipped):
    rng = random.Random(1)
    attack = {
        "candidates": [letters(1000, rng) for _ in range(64)],
        "references": [letters(1000, rng) for _ in range(16)],
    }
    accuracy = {"hypotheses": [letters(1000, rng)], "references": [[letters(1000, rng)] * 16]}
    health: list[float] = []
    done = threading.Event()

    def probe():
        while not done.is_set():
            t0 = time.perf_counter()
            assert requests.get(shipped.url + "/healthz", timeout=5).status_code == 200
            health.append(time.perf_counter() - t0)
            time.sleep(0.02)

    def send(k: int):
        path, body = ("/v1/rerank", attack) if k % 2 else ("/v1/accuracy", accuracy)
        t0 = time.perf_counter()
        resp = requests.post(shipped.url + path, json=body, timeout=10)
        return resp, time.perf_counter() - t0

    thread = threading.Thread(target=probe)
    thread.start()
    try:
        with ThreadPoolExecutor(4) as pool:
            answers = list(pool.map(send, range(8)))
    finally:
        done.set()
        thread.join()
    for resp, seconds in answers:
        body = assert_problem(resp, 422, "too-costly")
        assert body["limit"].startswith("MAX_") and body["limit_value"] > 0, body
        assert str(body["limit_value"]) in body["detail"]
        assert seconds < 10
    assert health and max(health) < 1.0
    assert not any("WORKER TIMEOUT" in line for line in shipped.log_lines())


def test_work_past_the_deadline_stops_with_503_and_the_worker_lives(unlimited):
    rng = random.Random(2)
    body = {"hypotheses": [letters(1000, rng)], "references": [[letters(1000, rng)] * 16]}
    t0 = time.perf_counter()
    resp = requests.post(unlimited.url + "/v1/accuracy", json=body, timeout=30)
    elapsed = time.perf_counter() - t0
    problem = assert_problem(resp, 503, "deadline-exceeded")
    assert int(resp.headers["Retry-After"]) > 0 and "1 s" in problem["detail"]
    assert elapsed < 5, elapsed
    # The one worker goes on serving.
    ok = requests.post(unlimited.url + "/v1/score", json={"sentences": [REAL]}, timeout=10)
    assert ok.status_code == 200
    assert not any("WORKER TIMEOUT" in line for line in unlimited.log_lines())


def test_deeply_nested_json_is_400(server):
    body = '{"sentences": ' + "[" * 1000 + "]" * 1000 + "}"
    resp = requests.post(server.url + "/v1/score", data=body, timeout=10)
    assert "deep" in assert_problem(resp, 400, "invalid-body")["detail"]
    shallow = '{"sentences": ' + "[" * 20 + "]" * 20 + "}"
    resp = requests.post(server.url + "/v1/score", data=shallow, timeout=10)
    assert "JSON_DEPTH" in assert_problem(resp, 400, "invalid-body")["detail"]


def _chunks(data: bytes, size: int = 4096):
    for start in range(0, len(data), size):
        yield data[start : start + size]


def test_a_chunked_body_counts_against_the_size_limit(server):
    # The first 20,000 bytes (MAX_CONTENT_LENGTH of the test server) are a valid body.
    body = json.dumps({"sentences": [REAL]}).encode() + b" " * 25_000
    resp = requests.post(server.url + "/v1/score", data=_chunks(body), timeout=10)
    assert_problem(resp, 413, "body-too-large")
    small = json.dumps({"sentences": [REAL]}).encode()
    resp = requests.post(server.url + "/v1/score", data=_chunks(small), timeout=10)
    assert resp.status_code == 200


def test_gzip_is_decoded_within_the_limit_and_other_encodings_refused(server):
    url, zipped = server.url + "/v1/score", {"Content-Encoding": "gzip"}
    small = gzip.compress(json.dumps({"sentences": [REAL]}).encode())
    assert requests.post(url, data=small, headers=zipped, timeout=10).status_code == 200
    bomb = gzip.compress(json.dumps({"sentences": [REAL]}).encode() + b" " * 5_000_000)
    assert len(bomb) < 20_000
    assert_problem(requests.post(url, data=bomb, headers=zipped, timeout=10), 413, "body-too-large")
    brotli = {"Content-Encoding": "br"}
    resp = requests.post(url, data=b"{}", headers=brotli, timeout=10)
    assert_problem(resp, 415, "unsupported-encoding")


def test_huge_weights_are_normalised_not_zeroed(server):
    body = {
        "candidates": [REAL],
        "references": [REAL],
        "weights": {"fluency": 1e308, "chrf": 1e308},
    }
    resp = requests.post(server.url + "/v1/rerank", json=body, timeout=30)
    assert resp.status_code == 200, resp.text
    data = resp.json()
    assert data["weights"] == {"fluency": 0.5, "chrf": 0.5}
    assert data["ranked"][0]["combined"] > 0.5  # chrF 100 against itself: at least 0.5


@pytest.mark.parametrize("text", ["\u200b\u200b\ufeff", " \u2060\u00ad\n", "\u200e\u200f"])
def test_invisible_only_text_is_empty(server, text):
    resp = requests.post(server.url + "/v1/score", json={"sentences": [text]}, timeout=10)
    assert "invisible" in assert_problem(resp, 422, "unsupported-input")["detail"]


def test_the_schema_and_the_service_agree(server):
    spec = requests.get(server.url + "/openapi.json", timeout=10).json()
    jsonschema = pytest.importorskip("jsonschema")

    def valid(body: dict, name: str) -> bool:
        ref = {"$ref": f"#/components/schemas/{name}", "components": spec["components"]}
        return jsonschema.Draft202012Validator(ref).is_valid(body)

    # null for a typed field: refused by both
    for path, body, name in [
        ("/v1/rerank", {"candidates": [REAL], "weights": None}, "RerankRequest"),
        ("/v1/rerank", {"candidates": [REAL], "top_k": None}, "RerankRequest"),
        ("/v1/admin/reload", {"model": None}, "ReloadRequest"),
    ]:
        assert not valid(body, name)
        resp = requests.post(server.url + path, json=body, headers=AUTH, timeout=10)
        assert "leave it out" in assert_problem(resp, 400, "invalid-body")["detail"]
    # 4807.0 is an integer to JSON Schema: accepted by both
    body = {"candidates": [REAL, "The old factory."], "top_k": 4807.0}
    assert valid(body, "RerankRequest")
    resp = requests.post(server.url + "/v1/rerank", json=body, timeout=30)
    assert resp.status_code == 200 and len(resp.json()["ranked"]) == 2
    # C1 controls and invisible-only texts: refused by both
    for text in ["Hello\u0085there.", "\u200b\u200b\ufeff"]:
        assert not valid({"sentences": [text]}, "ScoreRequest")
        resp = requests.post(server.url + "/v1/score", json={"sentences": [text]}, timeout=10)
        assert_problem(resp, 422, "unsupported-input")
    assert valid({"sentences": ["Hello there.", "Tab\tand\nnewline."]}, "ScoreRequest")
    # as many reference lists as hypotheses: said in words, the one rule JSON Schema can't state
    assert (
        "one list per hypothesis" in spec["components"]["schemas"]["AccuracyRequest"]["description"]
    )


@pytest.mark.slow  # about 25 s: a server of its own, a model reload, a graceful stop
def test_a_storm_of_reloads_runs_one_and_sigterm_still_stops(models_dir, tmp_path):
    log = tmp_path / "storm.log"
    srv = start_server(models_dir, log, env={"FLUENCY_RELOAD_INTERVAL": "10"})
    try:

        def reload(_):
            return requests.post(
                srv.url + "/v1/admin/reload", json={"model": "tiny-copy"}, headers=AUTH, timeout=30
            )

        t0 = time.monotonic()
        with ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(reload, range(100)))
        assert time.monotonic() - t0 < 10
        statuses = [r.status_code for r in answers]
        assert statuses.count(200) == 1, statuses
        assert set(statuses) <= {200, 409, 429}
        for resp in answers:
            if resp.status_code != 200:
                assert int(resp.headers["Retry-After"]) >= 1
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and "reloaded model" not in log.read_text():
            time.sleep(0.2)
        time.sleep(1.0)
        assert sum("reloaded model" in line for line in srv.log_lines()) == 1
    finally:
        t0 = time.monotonic()
        srv.proc.send_signal(signal.SIGTERM)
        srv.proc.wait(timeout=60)
        stopped = time.monotonic() - t0
    assert stopped < 30, stopped  # gunicorn's graceful_timeout
    leftovers = list(Path(tempfile.gettempdir()).glob(f"fluency-reload-{srv.proc.pid}.*"))
    assert leftovers == []  # lock and stamp removed by on_exit
