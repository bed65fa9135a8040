"""GET /metrics: what it counts in one process (Flask test client), and under a real gunicorn with
two workers, the shipped default model and prometheus_client's multiprocess mode, across a
SIGHUP reload that replaces every worker."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families
from web.support import ADMIN_TOKEN, OTHER, REAL, ROOT, assert_problem, shuffles, start_server
from web.support import stop_server as stop_gunicorn

from scorer.config import from_env
from scorer.errors import ScorerError
from scorer.web import create_app

MARK = "Quokkaberry"  # a word only the request texts hold: it must never reach the scrape
AUTH = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


def scrape(text: str) -> dict[str, list[tuple[dict[str, str], float]]]:
    """Sample name -> [(labels, value)], parsed by prometheus_client's own parser."""
    out: dict[str, list[tuple[dict[str, str], float]]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out.setdefault(sample.name, []).append((sample.labels, sample.value))
    return out


def total(samples, name: str, **labels: str) -> float:
    """Sum of `name` over the samples whose labels include `labels` (e.g. over workers)."""
    return sum(v for got, v in samples.get(name, []) if labels.items() <= got.items())


def card_sha(model_dir: Path) -> str:
    return json.loads((model_dir / "card.json").read_text())["model_sha256"]


# One process: the app's own registry.


def test_one_process_counts_requests_texts_refusals_and_the_model(app_config, models_dir):
    client = create_app(app_config).test_client()  # a fresh app: every count starts at 0
    texts = [f"{MARK} planted new trees along the river.", REAL]
    assert client.post("/v1/score", json={"sentences": texts}).status_code == 200
    candidates = [REAL, OTHER, *shuffles(REAL, 2, seed=1)]
    for _ in range(2):
        resp = client.post("/v1/rerank", json={"candidates": candidates, "top_k": 1})
        assert resp.status_code == 200
    assert_problem(client.post("/v1/score", json={"sentences": MARK}), 400, "invalid-body")
    assert_problem(client.post("/v1/score", json={"sentences": []}), 422, "unsupported-input")
    assert_problem(client.get(f"/v1/{MARK}/secret"), 404, "not-found")

    resp = client.get("/metrics")
    assert resp.status_code == 200 and resp.mimetype == "text/plain"
    body = resp.get_data(as_text=True)
    m = scrape(body)
    requests_total = "fluency_http_requests_total"
    assert total(m, requests_total, endpoint="/v1/score", status="200") == 1
    assert total(m, requests_total, endpoint="/v1/score", status="400") == 1
    assert total(m, requests_total, endpoint="/v1/score", status="422") == 1
    assert total(m, requests_total, endpoint="/v1/rerank", status="200") == 2
    assert total(m, requests_total, endpoint="unmatched", status="404") == 1
    # Rerank counts every candidate scored, not the top_k returned.
    assert total(m, "fluency_texts_scored_total", endpoint="/v1/score") == 2
    assert total(m, "fluency_texts_scored_total", endpoint="/v1/rerank") == 8
    assert total(m, "fluency_http_problems_total", type="invalid-body") == 1
    assert total(m, "fluency_http_problems_total", type="unsupported-input") == 1
    assert total(m, "fluency_http_problems_total", type="not-found") == 1
    latency = "fluency_http_request_duration_seconds"
    assert total(m, latency + "_count", endpoint="/v1/rerank") == 2
    assert total(m, latency + "_bucket", endpoint="/v1/rerank", le="+Inf") == 2
    assert 0 < total(m, latency + "_sum", endpoint="/v1/rerank") < 60
    [(info, value)] = m["fluency_model_info"]
    sha = card_sha(models_dir / "tiny")
    assert value == 1 and info == {"name": "tiny", "model_sha256": sha, "default": "true"}
    assert total(m, "fluency_texts_scored_total", endpoint="/v1/score", model="tiny") == 2
    [(_, rss)] = m["fluency_worker_resident_memory_bytes"]
    assert rss > 50e6  # this process holds spaCy
    assert MARK not in body and "secret" not in body and "planted" not in body

    # A reload shows at the next scrape.
    reload = client.post("/v1/admin/reload", json={"model": "tiny-copy"}, headers=AUTH)
    assert reload.status_code == 200
    [(info, _)] = scrape(client.get("/metrics").get_data(as_text=True))["fluency_model_info"]
    assert info["name"] == "tiny-copy"


def test_metrics_can_be_turned_off(app_config, monkeypatch):
    monkeypatch.setenv("FLUENCY_METRICS", "0")
    app = create_app({k: v for k, v in app_config.items() if k != "METRICS"})
    client = app.test_client()
    assert app.config["METRICS"] is False
    assert_problem(client.get("/metrics"), 404, "not-found")
    assert client.post("/v1/score", json={"sentences": [REAL]}).status_code == 200
    assert "/metrics" not in client.get("/openapi.json").get_json()["paths"]
    with pytest.raises(ScorerError, match="FLUENCY_METRICS"):
        from_env({"FLUENCY_METRICS": "sometimes"})


def _conf_folder(env: dict[str, str], runs: int = 1) -> tuple[str, str]:
    """Run gunicorn.conf.py `runs` times in one fresh process (a SIGHUP runs it again), as the
    master does: the metrics folder it leaves in the environment, and its listing then."""
    code = (
        "import os, runpy, sys\n"
        f"for _ in range({runs}):\n"
        "    runpy.run_path(sys.argv[1])\n"
        "folder = os.environ['PROMETHEUS_MULTIPROC_DIR']\n"
        "print(folder); print(','.join(sorted(os.listdir(folder))))\n"
    )
    clean = {k: v for k, v in os.environ.items() if "METRICS" not in k and "MULTIPROC" not in k}
    out = subprocess.run(
        [sys.executable, "-c", code, str(ROOT / "gunicorn.conf.py")],
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    return out[0], out[1]


def test_gunicorn_conf_prepares_the_metrics_folder(tmp_path):
    given = tmp_path / "given"
    given.mkdir()
    (given / "counter_12345.db").write_bytes(b"a previous server's counts")
    (given / "notes.txt").write_text("not ours")
    folder, listing = _conf_folder({"PROMETHEUS_MULTIPROC_DIR": str(given)})
    assert folder == str(given) and listing == "notes.txt"  # old counts gone, the rest kept
    # Nothing given: a fresh folder under TMPDIR, the same one when the file is read again.
    made, listing = _conf_folder({"TMPDIR": str(tmp_path)}, runs=2)
    assert Path(made).parent == tmp_path and Path(made).name.startswith("fluency-metrics-")
    assert listing == "" and len(list(tmp_path.glob("fluency-metrics-*"))) == 1


# A real gunicorn: two workers, the shipped default model, multiprocess mode.


@pytest.fixture(scope="module")
def gunicorn(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("metrics-gunicorn")
    models = ROOT / "models"
    env = {
        "FLUENCY_MODELS_DIR": str(models),
        "FLUENCY_MODEL_PATH": str(models / "default"),
        "TMPDIR": str(tmp),  # where the master makes its metrics folder
    }
    srv = start_server(models, tmp / "server.log", workers=2, env=env)
    srv.tmp = tmp
    yield srv
    stop_gunicorn(srv.proc)
    assert list(tmp.glob("fluency-metrics-*")) == []  # on_exit removed the folder


def _get_metrics(url: str) -> tuple[str, dict]:
    resp = requests.get(url + "/metrics", timeout=30)
    assert resp.status_code == 200 and resp.headers["Content-Type"].startswith("text/plain")
    return resp.text, scrape(resp.text)


def _workers(m) -> dict[str, float]:
    return {labels["pid"]: v for labels, v in m.get("fluency_worker_resident_memory_bytes", [])}


def test_every_worker_counts_and_a_reload_keeps_the_counts(gunicorn):
    url = gunicorn.url
    folder = next(gunicorn.tmp.glob("fluency-metrics-*"))
    score_bodies = [[f"{MARK} number {i} sat on the mat.", REAL][: 1 + i % 2] for i in range(12)]
    rerank_body = {"candidates": [REAL, OTHER, f"{MARK} the of factory."]}

    def send(i: int) -> int:
        if i < len(score_bodies):
            body = {"sentences": score_bodies[i]}
            return requests.post(url + "/v1/score", json=body, timeout=60).status_code
        return requests.post(url + "/v1/rerank", json=rerank_body, timeout=60).status_code

    with ThreadPoolExecutor(4) as pool:  # four at a time: both workers get some
        statuses = list(pool.map(send, range(len(score_bodies) + 6)))
    assert statuses == [200] * 18
    bad = requests.post(url + "/v1/rerank", json={"candidates": MARK}, timeout=30)
    assert_problem(bad, 400, "invalid-body")
    huge = {"candidates": [REAL] * 13}  # over MAX_BATCH (12)
    assert_problem(
        requests.post(url + "/v1/rerank", json=huge, timeout=30), 422, "unsupported-input"
    )

    text, m = _get_metrics(url)
    assert MARK not in text and "factory" not in text and "sat on the mat" not in text
    req = "fluency_http_requests_total"
    assert total(m, req, endpoint="/v1/score", status="200") == 12
    assert total(m, req, endpoint="/v1/rerank", status="200") == 6
    assert total(m, req, endpoint="/v1/rerank", status="400") == 1
    assert total(m, req, endpoint="/v1/rerank", status="422") == 1
    assert total(m, req, endpoint="/v1/score") == 12
    n_texts = sum(len(b) for b in score_bodies)
    assert total(m, "fluency_texts_scored_total", endpoint="/v1/score") == n_texts
    assert total(m, "fluency_texts_scored_total", endpoint="/v1/rerank") == 6 * 3
    assert total(m, "fluency_http_problems_total", type="invalid-body") == 1
    assert total(m, "fluency_http_problems_total", type="unsupported-input") == 1
    latency = "fluency_http_request_duration_seconds"
    assert total(m, latency + "_count", endpoint="/v1/rerank") == 8
    assert total(m, latency + "_bucket", endpoint="/v1/rerank", le="+Inf") == 8
    assert total(m, latency + "_sum", endpoint="/v1/rerank") > 0
    [(info, value)] = m["fluency_model_info"]
    assert value == 1 and info["name"] == "default"
    assert info["model_sha256"] == card_sha(ROOT / "models" / "default")
    assert total(m, "fluency_worker_exits_total") == 0
    assert total(m, "fluency_model_reloads_total", result="ok") == 0

    # Each worker wrote its own files, and the scrape added them up.
    records = [json.loads(x) for x in gunicorn.log_lines() if x.startswith('{"ts"')]
    served = Counter(r["pid"] for r in records if r["path"] == "/v1/score")
    assert sum(served.values()) == 12
    workers = _workers(m)
    assert len(workers) == 2 and all(v > 100e6 for v in workers.values())
    assert {str(pid) for pid in served} <= set(workers)
    assert len(list(folder.glob("counter_*.db"))) >= 3  # the master's and each worker's

    # SIGHUP: the master reloads the model and replaces both workers. The dead workers' counts
    # stay in the scrape, their memory series go, the master's counters show the swap.
    os.kill(gunicorn.proc.pid, signal.SIGHUP)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        _, after = _get_metrics(url)
        if total(after, "fluency_worker_exits_total") >= 2 and len(_workers(after)) == 2:
            break
        time.sleep(0.5)
    assert total(after, "fluency_model_reloads_total", result="ok") == 1
    assert total(after, "fluency_model_reloads_total", result="failed") == 0
    assert total(after, "fluency_worker_exits_total") == 2
    assert not set(_workers(after)) & set(workers)  # only the new workers' memory
    assert total(after, req, endpoint="/v1/score", status="200") == 12
    assert total(after, "fluency_texts_scored_total", endpoint="/v1/score") == n_texts
    # The dead workers' counters and histograms now live in one archive file a type.
    for pid in workers:
        assert not list(folder.glob(f"*_{pid}.db"))
    assert (folder / "counter_archive.db").is_file()
    assert (folder / "histogram_archive.db").is_file()
    [(info, _)] = after["fluency_model_info"]
    assert info["model_sha256"] == card_sha(ROOT / "models" / "default")

    # A worker that dies is counted and replaced.
    victim = int(next(iter(_workers(after))))
    os.kill(victim, signal.SIGKILL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        _, last = _get_metrics(url)
        if total(last, "fluency_worker_exits_total") == 3 and len(_workers(last)) == 2:
            break
        time.sleep(0.5)
    assert total(last, "fluency_worker_exits_total") == 3
    assert str(victim) not in _workers(last) and len(_workers(last)) == 2
    assert not list(folder.glob(f"*_{victim}.db"))  # archived, killed or not


def test_a_dead_process_is_archived_without_changing_the_scrape(tmp_path, monkeypatch):
    # Two dead workers' files folded into the archive one after the other: the collector adds
    # up the same values before and after, and only the archive and the live worker's files stay.
    from prometheus_client import CollectorRegistry, generate_latest, multiprocess
    from prometheus_client.mmap_dict import MmapedDict, mmap_key

    from scorer.web.metrics import archive_dead

    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))

    def write(kind: str, pid: int, name: str, labels: dict, value: float) -> None:
        d = MmapedDict(str(tmp_path / f"{kind}_{pid}.db"))
        metric = name.removesuffix("_total").removesuffix("_count")
        key = mmap_key(metric, name, list(labels), list(labels.values()), "help")
        old, _ = d.read_value(key)
        d.write_value(key, old + value, 0.0)
        d.close()

    for pid, n in ((101, 3.0), (102, 4.0), (103, 5.0)):
        write("counter", pid, "fluency_texts_scored_total", {"endpoint": "/v1/score"}, n)
        write("histogram", pid, "fluency_lat_count", {"endpoint": "/v1/score"}, n)

    def scraped() -> bytes:
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry, path=str(tmp_path))
        return generate_latest(registry)

    before = scraped()
    assert b"fluency_texts_scored_total" in before
    archive_dead(101)
    archive_dead(102)
    archive_dead(999)  # a process that wrote nothing
    assert scraped() == before
    assert sorted(p.name for p in tmp_path.glob("*.db")) == [
        "counter_103.db",
        "counter_archive.db",
        "histogram_103.db",
        "histogram_archive.db",
    ]
    assert total(scrape(scraped().decode()), "fluency_texts_scored_total") == 12.0
