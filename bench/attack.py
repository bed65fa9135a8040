"""Expensive requests against cheap ones: is the service still responsive under attack?

In one run, for `--seconds`:

- `--attackers` clients (default 4) send the costliest valid-looking request back to back:
  `/v1/rerank` with 64 candidates and 16 references of 1,000 one-letter words each (160 kB;
  `--shape accuracy`: `/v1/accuracy`, 1 hypothesis x 16 such references). Before the cost limits
  one took longer than gunicorn's 60 s timeout and four of them held both workers;
- one client polls `GET /healthz` every 20 ms;
- one client sends a normal `/v1/rerank` back to back (10 candidates of ~20 words, a new list
  each time, so the feature cache never hits).

It prints, per stream, requests, statuses and latency p50/p99/max, then the targets: every
attack answer is problem details within 10 s; /healthz p99 < 100 ms; normal rerank p99 < 1 s;
no worker killed (counted in gunicorn's log when the server is started here). `--attackers 0`
gives the baseline of the same machine at the same time. Each stream's clients run in a process
of their own.

    python -m bench.attack --model-path models/default          # starts gunicorn, 2 workers
    python -m bench.attack --url http://127.0.0.1:8000           # a running server
"""

from __future__ import annotations

import json
import multiprocessing
import random
import string
import sys
import tempfile
import threading
import time
from pathlib import Path

import requests

from bench._args import add_seconds, parser
from bench._data import nbest, sentences
from bench._server import add_server_args, serve, server_options
from bench._timing import in_threads, latency_ms

HEALTH_EVERY = 0.02  # seconds between two /healthz probes
TARGETS = {"attack_max_s": 10.0, "healthz_p99_ms": 100.0, "rerank_p99_ms": 1000.0}


def attack_body(shape: str, seed: int = 0) -> tuple[str, dict]:
    rng = random.Random(seed)

    def text() -> str:
        return " ".join(rng.choice(string.ascii_lowercase) for _ in range(1000))

    if shape == "accuracy":
        return "/v1/accuracy", {"hypotheses": [text()], "references": [[text() for _ in range(16)]]}
    return "/v1/rerank", {
        "candidates": [text() for _ in range(64)],
        "references": [text() for _ in range(16)],
    }


class Stream:
    """Latencies and statuses of one kind of request, filled by several threads."""

    def __init__(self, name: str):
        self.name, self.lock = name, threading.Lock()
        self.seconds: list[float] = []
        self.statuses: dict[str, int] = {}
        self.not_problem = 0  # error answers that were not application/problem+json

    def add(self, seconds: float, status: str, problem_ok: bool = True) -> None:
        with self.lock:
            self.seconds.append(seconds)
            self.statuses[status] = self.statuses.get(status, 0) + 1
            self.not_problem += 0 if problem_ok else 1

    def row(self) -> dict:
        return {
            "n": len(self.seconds),
            **latency_ms(self.seconds, (50, 99)),
            "statuses": ", ".join(f"{k}: {v}" for k, v in sorted(self.statuses.items())),
        }


def _timed(session: requests.Session, stream: Stream, method: str, url: str, **kwargs) -> None:
    t0 = time.perf_counter()
    try:
        resp = session.request(method, url, **kwargs)
    except requests.RequestException as exc:
        stream.add(time.perf_counter() - t0, type(exc).__name__, problem_ok=False)
        return
    problem_ok = resp.status_code < 400 or resp.headers.get("Content-Type", "").startswith(
        "application/problem+json"
    )
    stream.add(time.perf_counter() - t0, str(resp.status_code), problem_ok)


def _attackers(url: str, stop_at: float, n: int, shape: str) -> Stream:
    path, body = attack_body(shape)
    data = json.dumps(body).encode()  # encoded once: the client's CPU is not what is measured
    stream = Stream("attack")

    def attacker():
        session = requests.Session()
        while time.monotonic() < stop_at:
            _timed(
                session, stream, "POST", url + path, data=data,
                headers={"Content-Type": "application/json"}, timeout=70,
            )  # fmt: skip

    in_threads(attacker, n)
    return stream


def _health(url: str, stop_at: float) -> Stream:
    stream, session = Stream("healthz"), requests.Session()
    while time.monotonic() < stop_at:
        _timed(session, stream, "GET", url + "/healthz", timeout=30)
        time.sleep(HEALTH_EVERY)
    return stream


def _reranker(url: str, stop_at: float) -> Stream:
    stream, session, k = Stream("rerank"), requests.Session(), 0
    normal = sentences(500, seed=3)
    while time.monotonic() < stop_at:
        k += 1
        cands = nbest(normal[k % len(normal)], 10, seed=k)
        _timed(session, stream, "POST", url + "/v1/rerank", json={"candidates": cands}, timeout=70)
    return stream


def _in_process(func, *args):
    """`func(*args)` in a process of its own, so the three streams' clients do not share a GIL
    (a /healthz probe waiting on the attackers' JSON would measure the client, not the server)."""
    parent, child = multiprocessing.get_context("fork").Pipe()

    def target():
        stream = func(*args)
        child.send((stream.seconds, stream.statuses, stream.not_problem))

    proc = multiprocessing.get_context("fork").Process(target=target)
    proc.start()
    return proc, parent


def run(url: str, seconds: float, attackers: int, shape: str) -> dict[str, Stream]:
    stop_at = time.monotonic() + seconds
    jobs = {
        "attack": _in_process(_attackers, url, stop_at, attackers, shape),
        "healthz": _in_process(_health, url, stop_at),
        "rerank": _in_process(_reranker, url, stop_at),
    }
    streams = {}
    for name, (proc, pipe) in jobs.items():
        stream = Stream(name)
        stream.seconds, stream.statuses, stream.not_problem = pipe.recv()
        proc.join()
        streams[name] = stream
    return streams


def report(streams: dict[str, Stream], killed: int | None, seconds: float, attackers: int):
    print(f"{attackers} attackers, 1 /healthz poller, 1 normal rerank client, {seconds:g} s")
    print(f"{'stream':<8} {'n':>5} {'p50 ms':>9} {'p99 ms':>9} {'max ms':>9}  statuses")
    rows = {name: s.row() for name, s in streams.items()}
    for name, r in rows.items():
        print(
            f"{name:<8} {r['n']:>5} {r['p50']:>9.1f} {r['p99']:>9.1f} {r['max']:>9.1f}  "
            f"{r['statuses']}"
        )
    attack = streams["attack"]
    checks = {
        "every attack answer is problem details": attack.not_problem == 0 and bool(attack.seconds),
        f"every attack answer within {TARGETS['attack_max_s']:g} s": rows["attack"]["max"]
        <= TARGETS["attack_max_s"] * 1000,
        f"/healthz p99 < {TARGETS['healthz_p99_ms']:g} ms": rows["healthz"]["p99"]
        < TARGETS["healthz_p99_ms"],
        f"normal rerank p99 < {TARGETS['rerank_p99_ms']:g} ms": rows["rerank"]["p99"]
        < TARGETS["rerank_p99_ms"],
        "every normal rerank answered 200": set(streams["rerank"].statuses) == {"200"},
    }
    if not attackers:  # a baseline run: nothing attacked
        checks = {k: v for k, v in checks.items() if "attack" not in k}
    if killed is not None:
        checks["no worker killed (gunicorn log)"] = killed == 0
    for name, ok in checks.items():
        print(f"{'met   ' if ok else 'MISSED'} {name}")
    return all(checks.values())


def main(argv=None) -> int:
    ap = parser(__doc__)
    add_server_args(ap)
    ap.add_argument("--attackers", type=int, default=4)
    add_seconds(ap, 30.0)
    ap.add_argument("--shape", choices=("rerank", "accuracy"), default="rerank")
    args = ap.parse_args(argv)
    killed = None
    log = Path(tempfile.mkstemp(prefix="attack-gunicorn-", suffix=".log")[1])
    with serve(**server_options(args), log=log, stop_timeout=60) as server:
        streams = run(server.url, args.seconds, args.attackers, args.shape)
    if server.proc is not None:
        killed = sum("WORKER TIMEOUT" in line for line in log.read_text().splitlines())
    ok = report(streams, killed, args.seconds, args.attackers)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
