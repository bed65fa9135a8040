"""A real gunicorn's workers stopping and starting under load: shutdown (SIGTERM), recycling
after max_requests, reload (SIGHUP), and a soak; no request may fail or be cut short. Each runs
on the small test model alone and again with the shipped `neural` bundle loaded beside it (the
SmolLM2 graph and its ONNX Runtime session in the preloaded master and every forked worker),
some clients naming it."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import requests
from web.support import ROOT, start_server, stop_server

WORDS = sorted(
    {
        w.strip(".,;:!?\"'").lower()
        for w in (ROOT / "tests/web/data/sentences.txt").read_text().split()
    }
    - {""}
)
# Room for requests that take over a second: 64 texts of 2,000 characters (about 22,000 tokens).
SLOW = {
    "FLUENCY_MAX_BATCH": "64",
    "FLUENCY_MAX_CHARS": "2000",
    "FLUENCY_MAX_REQUEST_TOKENS": "100000",
    "FLUENCY_MAX_CONTENT_LENGTH": "2000000",
}


def texts(n: int, chars: int, seed: int) -> list[str]:
    """`n` texts of about `chars` characters of the corpus's words in a random order, without a
    full stop (one long sentence each), different for every seed: none is in the feature cache."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        words: list[str] = []
        while sum(len(w) + 1 for w in words) < chars - 12:
            words.append(rng.choice(WORDS))
        out.append(" ".join(words))
    return out


def workers(master: int) -> set[int]:
    with open(f"/proc/{master}/task/{master}/children") as fh:
        return {int(p) for p in fh.read().split()}


def wait_for_workers(master: int, n: int, *, not_in: set[int] = frozenset(), timeout=60.0) -> set:
    """The master's workers once there are `n`, none of them in `not_in`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        now = workers(master)
        if len(now) == n and not now & not_in:
            time.sleep(0.5)  # each enters the balancing table when its loop starts
            return now
        time.sleep(0.1)
    raise AssertionError(f"workers {workers(master)}, wanted {n} new ones after {not_in}")


def accepted(pids: set[int], port: int) -> int:
    """Connections to `port` that these processes have accepted: established TCP sockets with
    that local port (/proc/net/tcp) held by one of them. One still in the listening socket's
    queue belongs to no process yet."""
    inodes = set()
    with open("/proc/net/tcp") as fh:
        next(fh)
        for line in fh:
            fields = line.split()
            if int(fields[1].split(":")[1], 16) == port and fields[3] == "01":
                inodes.add(f"socket:[{fields[9]}]")
    n = 0
    for pid in pids:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                n += os.readlink(f"/proc/{pid}/fd/{fd}") in inodes
            except OSError:
                continue
    return n


def access_records(log_lines: list[str]) -> list[dict]:
    return [json.loads(x) for x in log_lines if x.startswith('{"ts"')]


@pytest.fixture(params=["tiny", "tiny,neural"], ids=["tiny", "with-neural"])
def served(request, models_dir) -> dict:
    """FLUENCY_MODELS for a server: the test model alone, or with the shipped neural bundle
    (copied into the test's models folder: a bundle is served only from there)."""
    if "neural" in request.param and not (models_dir / "neural").is_dir():
        shutil.copytree(ROOT / "models" / "neural", models_dir / "neural")
    return {"FLUENCY_MODELS": request.param}


def score_problem(
    session: requests.Session, url: str, sentences: list[str], rid: str, model: str | None = None
) -> str | None:
    """None when the answer is a complete 200 for these sentences (from `model`, when named),
    else what was wrong."""
    try:
        resp = session.post(
            url + "/v1/score",
            json={"sentences": sentences, **({"model": model} if model else {})},
            headers={"X-Request-ID": rid},
            timeout=60,
        )
    except requests.RequestException as exc:
        return f"{rid}: {type(exc).__name__}: {exc}"
    if resp.status_code != 200:
        return f"{rid}: HTTP {resp.status_code} {resp.text[:200]}"
    if model and resp.json()["model"] != model:
        return f"{rid}: scored by {resp.json()['model']}, not {model}"
    scores = resp.json()["scores"]
    if [s["index"] for s in scores] != list(range(len(sentences))):
        return f"{rid}: {len(scores)} scores for {len(sentences)} sentences"
    if resp.headers.get("X-Request-ID") != rid:
        return f"{rid}: answered as {resp.headers.get('X-Request-ID')}"
    return None


def neural_for(k: int, env: dict) -> str | None:
    """The model client `k` names: every other client names `neural` when it is served."""
    return "neural" if "neural" in env["FLUENCY_MODELS"] and k % 2 else None


def unclean_exits(lines: list[str]) -> list[str]:
    """Log lines of workers that did not leave by themselves: aborted (a C++ exception at exit,
    as ONNX Runtime's destructors raised in a forked worker) or killed by the master after
    hanging past graceful_timeout."""
    marks = ("terminate called", "was sent SIGABRT", "was sent SIGKILL", "was sent SIGSEGV")
    return [x for x in lines if any(m in x for m in marks)]


def test_sigterm_finishes_requests_in_flight_and_refuses_new_connections(
    models_dir, served, tmp_path
):
    srv = start_server(models_dir, tmp_path / "term.log", env={**SLOW, **served})
    port = urlsplit(srv.url).port
    try:
        wait_for_workers(srv.proc.pid, 2)
        t0 = time.monotonic()
        assert score_problem(requests.Session(), srv.url, texts(64, 2000, seed=0), "one") is None
        one = time.monotonic() - t0  # about 1.5 s on an idle machine
        done: dict[int, tuple[float, str | None]] = {}
        bodies = {k: texts(64, 2000, seed=k) for k in range(1, 5)}

        def slow(k: int) -> None:
            # A connection of its own, as a new client's.
            problem = score_problem(requests.Session(), srv.url, bodies[k], f"slow-{k}")
            done[k] = (time.monotonic(), problem)

        threads = [threading.Thread(target=slow, args=(k,)) for k in range(1, 5)]
        already = accepted(workers(srv.proc.pid), port)  # the first request's, kept alive
        for t in threads:
            t.start()
        deadline = time.monotonic() + 20
        while accepted(workers(srv.proc.pid), port) < already + 4 and time.monotonic() < deadline:
            time.sleep(0.01)  # all four accepted: two scoring, two queued behind them
        term = time.monotonic()
        srv.proc.send_signal(signal.SIGTERM)
        refused = None
        while refused is None and time.monotonic() < term + 10:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=5).close()
            except (ConnectionRefusedError, ConnectionResetError):
                # A listener closing with connections in its backlog resets them: as much a
                # refusal as a closed port.
                refused = time.monotonic()
            else:
                time.sleep(0.01)
        with pytest.raises(requests.ConnectionError):
            requests.get(srv.url + "/healthz", timeout=5)
        for t in threads:
            t.join(timeout=60)
        assert srv.proc.wait(timeout=30) == 0
        stopped = time.monotonic() - term
    finally:
        stop_server(srv.proc)
    assert unclean_exits(srv.log_lines()) == []
    # Each worker ends the request it scores and the one queued behind it, then exits; a hung
    # worker is killed at gunicorn's graceful_timeout (30 s), which this bound stays below. On
    # a busy machine a request takes longer (`one`), and so does the drain.
    limit = min(2 * one + 10, 28)
    assert stopped < limit, f"{stopped:.1f} s from SIGTERM to the master's exit: a worker hung"
    assert sorted(done) == [1, 2, 3, 4]
    assert [problem for _, problem in done.values()] == [None] * 4
    first_done = min(at for at, _ in done.values())
    assert first_done > term, f"a request ended before SIGTERM ({one:.2f} s each): not in flight"
    assert refused is not None and refused < first_done, "new connections were still queued"


def test_recycled_workers_answer_every_request_on_kept_alive_connections(
    models_dir, served, tmp_path
):
    env = {"FLUENCY_MAX_REQUESTS": "5", "FLUENCY_MAX_REQUESTS_JITTER": "0", **served}
    srv = start_server(models_dir, tmp_path / "recycle.log", env=env)
    n_clients, rounds = 4, 25
    try:
        first = wait_for_workers(srv.proc.pid, 2)

        def client(k: int) -> list[str]:
            session = requests.Session()  # one kept-alive connection while the worker lasts
            problems = []
            for r in range(rounds):
                sentences = texts(3, 80, seed=1000 * k + r)
                problem = score_problem(
                    session, srv.url, sentences, f"recycle-{k}-{r}", neural_for(k, env)
                )
                if problem:
                    problems.append(problem)
            return problems

        with ThreadPoolExecutor(n_clients) as pool:
            problems = [p for found in pool.map(client, range(n_clients)) for p in found]
        last = workers(srv.proc.pid)
        time.sleep(0.5)
        records = access_records(srv.log_lines())
    finally:
        stop_server(srv.proc)
    assert problems == []
    ours = [r for r in records if r["request_id"].startswith("recycle-")]
    assert len(ours) == n_clients * rounds and {r["status"] for r in ours} == {200}
    pids = {r["pid"] for r in ours}
    per_worker = sorted(sum(r["pid"] == p for r in records) for p in pids)
    print("requests per worker:", per_worker)
    # A worker takes 5 requests, then also answers those that reach it on its kept-alive
    # connections while it winds down (gunicorn's gthread worker, with "Connection: close").
    assert len(pids) >= 8, per_worker
    assert not first & last
    log = "\n".join(srv.log_lines())
    assert "Autorestarting worker after current request" in log
    assert unclean_exits(srv.log_lines()) == []  # every recycled worker left by itself


def test_sighup_under_kept_alive_load_fails_no_request(models_dir, served, tmp_path):
    # tests/web/test_server.py reloads through the admin API under one client that opens a
    # connection per request; here four clients keep theirs alive across two SIGHUPs.
    srv = start_server(models_dir, tmp_path / "hup.log", env=served)
    stop = threading.Event()
    counts: list[int] = []
    try:
        generations = [wait_for_workers(srv.proc.pid, 2)]

        def client(k: int) -> list[str]:
            session, problems, r = requests.Session(), [], 0
            while not stop.is_set():
                problem = score_problem(
                    session,
                    srv.url,
                    texts(2, 80, seed=5000 * k + r),
                    f"hup-{k}-{r}",
                    neural_for(k, served),
                )
                if problem:
                    problems.append(problem)
                r += 1
            counts.append(r)
            return problems

        with ThreadPoolExecutor(4) as pool:
            futures = [pool.submit(client, k) for k in range(4)]
            for _ in range(2):
                time.sleep(1.0)
                srv.proc.send_signal(signal.SIGHUP)
                old = set().union(*generations)
                generations.append(wait_for_workers(srv.proc.pid, 2, not_in=old))
            time.sleep(1.0)
            stop.set()
            problems = [p for f in futures for p in f.result(timeout=60)]
    finally:
        stop.set()
        stop_server(srv.proc)
    assert problems == []
    assert min(counts) > 5  # every client kept sending throughout
    assert len(set().union(*generations)) == 6
    assert unclean_exits(srv.log_lines()) == []
    if "neural" in served["FLUENCY_MODELS"]:
        # Loaded in the preloaded master (and wherever it is loaded again), one thread each
        # time: two workers on two cores, never two threads each.
        loads = [x for x in srv.log_lines() if "SmolLM2-135M from" in x]
        assert loads and all("1 thread(s)" in x for x in loads), loads


@pytest.mark.slow
def test_two_minute_soak_has_no_error_and_bounded_workers(tmp_path):
    out, plot = tmp_path / "soak.json", tmp_path / "soak.png"
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLUENCY_")}
    cmd = [sys.executable, "-m", "bench.soak", "--minutes", "2", "--json", str(out)]
    done = subprocess.run(
        [*cmd, "--plot", str(plot)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads(out.read_text())
    assert summary["errors"] == 0, summary["error_examples"]
    assert summary["requests"] > 100
    assert len(summary["max_rss_mib"]) >= 2 and summary["max_rss_mib_all"] < 400
    assert plot.stat().st_size > 10_000
    assert Path(summary["plot"]) == plot


def test_recycling_settings_reach_gunicorn_and_bad_ones_stop_it():
    gunicorn = str(Path(sys.executable).parent / "gunicorn")
    cmd = [gunicorn, "--print-config", "wsgi:app"]

    def run(**env):
        environ = {k: v for k, v in os.environ.items() if not k.startswith("FLUENCY_")}
        return subprocess.run(
            cmd, cwd=ROOT, env={**environ, **env}, capture_output=True, text=True, timeout=120
        )

    lines = run(FLUENCY_MAX_REQUESTS="7", FLUENCY_MAX_REQUESTS_JITTER="0").stdout.splitlines()
    settings = {k.strip(): v.strip() for k, _, v in (x.partition("=") for x in lines)}
    assert settings["max_requests"] == "7" and settings["max_requests_jitter"] == "0"
    bad = run(FLUENCY_MAX_REQUESTS="-1")
    assert bad.returncode != 0 and "FLUENCY_MAX_REQUESTS='-1' must be positive" in bad.stderr
