"""A real gunicorn (2 workers, --preload) on a loopback port, driven over HTTP."""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from web.support import (
    ADMIN_TOKEN,
    OTHER,
    REAL,
    assert_problem,
    shuffles,
    sigmoid,
    start_server,
    stop_server,
)

CORPUS_LINES = 20


def test_ranking_puts_the_real_sentence_above_its_shuffles(server):
    candidates = [*shuffles(REAL, 4, seed=3), REAL, *shuffles(REAL, 3, seed=4)]
    resp = requests.post(server.url + "/v1/rerank", json={"candidates": candidates}, timeout=30)
    assert resp.status_code == 200 and resp.headers["Content-Type"] == "application/json"
    ranked = resp.json()["ranked"]
    assert ranked[0]["index"] == 4 and ranked[0]["text"] == REAL
    assert len(ranked) == len(candidates)


def test_references_change_the_ranking(server):
    url = server.url + "/v1/rerank"
    alone = requests.post(url, json={"candidates": [REAL, OTHER]}, timeout=30).json()["ranked"]
    loser = alone[1]
    with_ref = requests.post(
        url, json={"candidates": [REAL, OTHER], "references": [loser["text"]]}, timeout=30
    ).json()["ranked"]
    assert with_ref[0]["index"] == loser["index"]
    top = with_ref[0]
    assert top["accuracy"]["simple_string_accuracy"] == pytest.approx(1.0)
    assert top["combined"] == pytest.approx(
        0.4 * sigmoid(top["fluency"]) + 0.3 * 1.0 + 0.3 * top["accuracy"]["chrf"] / 100
    )


@pytest.mark.parametrize(
    ("method", "path", "kwargs", "status", "slug"),
    [
        ("post", "/v1/score", {"data": b"{oops"}, 400, "invalid-body"),
        ("post", "/v1/score", {"json": {"sentences": [1]}}, 400, "invalid-body"),
        ("post", "/v1/score", {"json": {"sentences": ["w"] * 13}}, 422, "unsupported-input"),
        ("post", "/v1/rerank", {"json": {"candidates": ["x" * 301]}}, 422, "unsupported-input"),
        ("post", "/v1/score", {"data": b'{"sentences": ["' + b"a" * 30000 + b'"]}'}, 413, None),
        ("get", "/v1/nothing", {}, 404, "not-found"),
        ("put", "/v1/score", {}, 405, "method-not-allowed"),
        ("post", "/v1/admin/reload", {}, 401, "unauthorized"),
    ],
)
def test_error_statuses_and_shape_over_http(server, method, path, kwargs, status, slug):
    resp = requests.request(method, server.url + path, timeout=30, **kwargs)
    assert_problem(resp, status, slug or "body-too-large")


def _client(url: str, k: int, expected: dict, rounds: int) -> list[str]:
    """Client k sends its own texts, with its own request ids, and checks its own answers."""
    problems = []
    session = requests.Session()
    for r in range(rounds):
        rid = f"client-{k}-round-{r}"
        texts = expected[k]["texts"]
        resp = session.post(
            url + "/v1/score",
            json={"sentences": texts},
            headers={"X-Request-ID": rid},
            timeout=60,
        )
        if resp.status_code != 200 or resp.headers.get("X-Request-ID") != rid:
            problems.append(f"{rid}: {resp.status_code} {resp.headers.get('X-Request-ID')}")
            continue
        got = [s["fluency"] for s in resp.json()["scores"]]
        # Sentences another client sent first come from the cache, parsed in another batch:
        # equal up to OpenBLAS's last bits (features/parsing.py, `_matrix_ops`).
        if got != pytest.approx(expected[k]["fluency"], abs=1e-4):
            problems.append(f"{rid}: got {got}, expected {expected[k]['fluency']}")
        ranked = session.post(url + "/v1/rerank", json={"candidates": texts}, timeout=60).json()
        if [x["text"] for x in ranked["ranked"]] != expected[k]["order"]:
            problems.append(f"{rid}: rerank order differs")
    return problems


def test_twenty_concurrent_clients_get_their_own_answers(server, client):
    from web.support import ROOT

    lines = (ROOT / "tests/web/data/sentences.txt").read_text().splitlines()
    expected = {}
    for k in range(20):
        texts = [lines[k], *shuffles(lines[k], 1, seed=k), lines[(k + 7) % len(lines)]]
        body = client.post("/v1/score", json={"sentences": texts}).get_json()
        fluency = [s["fluency"] for s in body["scores"]]
        order = [t for _, t in sorted(zip(fluency, texts, strict=True), key=lambda p: -p[0])]
        expected[k] = {"texts": texts, "fluency": fluency, "order": order}
    start = threading.Barrier(20)

    def run(k):
        start.wait()
        return _client(server.url, k, expected, rounds=3)

    with ThreadPoolExecutor(20) as pool:
        problems = [p for result in pool.map(run, range(20)) for p in result]
    assert problems == []
    # Each of those requests left exactly one access-log line with its id.
    time.sleep(0.5)
    records = [json.loads(x) for x in server.log_lines() if x.startswith('{"ts"')]
    ids = {r["request_id"] for r in records}
    assert all(f"client-{k}-round-{r}" in ids for k in range(20) for r in range(3))
    assert not any("sentences" in x or lines[0] in x for x in server.log_lines())


def test_reload_reaches_every_worker_without_dropping_requests(models_dir, tmp_path):
    srv = start_server(models_dir, tmp_path / "reload.log")
    statuses: list[int] = []
    stop = threading.Event()

    def traffic():
        while not stop.is_set():
            resp = requests.post(srv.url + "/v1/score", json={"sentences": [REAL]}, timeout=30)
            statuses.append(resp.status_code)

    try:
        thread = threading.Thread(target=traffic)
        thread.start()
        auth = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
        bad = requests.post(
            srv.url + "/v1/admin/reload", json={"model": "missing"}, headers=auth, timeout=60
        )
        assert_problem(bad, 422, "model-load-failed")
        resp = requests.post(
            srv.url + "/v1/admin/reload", json={"model": "tiny-copy"}, headers=auth, timeout=60
        )
        assert resp.status_code == 200 and resp.json()["scope"] == "all-workers"
        deadline = time.monotonic() + 30
        names: set[str] = set()
        while time.monotonic() < deadline:
            names = {
                requests.get(srv.url + "/v1/model", timeout=10).json()["serving"]["name"]
                for _ in range(10)
            }
            if names == {"tiny-copy"}:
                break
            time.sleep(0.3)
        assert names == {"tiny-copy"}
        time.sleep(1.0)  # traffic keeps flowing across the worker replacement
        stop.set()
        thread.join(timeout=30)
        assert statuses and set(statuses) == {200}
    finally:
        stop.set()
        stop_server(srv.proc)
