"""Soak test: minutes to hours of mixed traffic, and what the workers' memory and latency do.

`--clients` threads (4), each with its own keep-alive session, send back to back for
`--minutes`. Every other request is a /v1/score of `--texts` (64) texts of `--words` (40) new
random lower-case words, every second text of them two sentences (so the sentence splitter
meets new words too); the others are /v1/rerank of a new n-best list (`bench._data.FreshLists`:
ordinary traffic). spaCy keeps every word it has seen unless the service parses inside memory
zones (FLUENCY_SPACY_MEMORY_ZONES), so the first kind is what makes a worker grow.

Every `--interval` seconds (30) it prints each worker's resident memory (the gunicorn master's
children, sampled every second), the p50 and p99 latency of the requests that ended in the
interval, errors (a status other than 200, no answer, or an answer without every text), and
recycles (new worker pids: max_requests, a reload). At the end it draws `--plot` (PNG: each
worker's RSS and the latency percentiles against time) and prints the summary: the highest RSS
of each worker, p99 in the first and the last minute and their ratio, errors.

    python -m bench.soak --minutes 20                 # starts gunicorn: 2 workers, --preload
    python -m bench.soak --url http://127.0.0.1:8000 --minutes 20   # a running server (make run)
    python -m bench.soak --probe 200                  # the unique-word probe, below
    FLUENCY_SPACY_MEMORY_ZONES=0 FLUENCY_MAX_REQUESTS=0 python -m bench.soak --probe 200

`--probe N` sends only N /v1/score requests of 64 texts of 40 new words (no full stops), from
2 clients, and prints each worker's RSS before, at its highest, and after. A server started
here reads the FLUENCY_* settings from the environment, as `make run` does. For a server given
by `--url` the master's pid is looked up from the port (psutil), or given with `--master-pid`.

Targets (2 cores, 2 workers, the default model): no error; no worker above 400 MiB; p99 in the
last minute at most 1.5 times the first minute's.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import string
import threading
import time
from pathlib import Path

import numpy as np
import requests

from bench._args import parser
from bench._data import FreshLists
from bench._procs import find_master, rss_mib, wait_for_workers, worker_pids
from bench._server import add_server_args, serve, server_options
from bench._timing import in_threads, machine

RSS_TARGET_MIB = 400.0


class FreshWords:
    """/v1/score bodies of texts of new random lower-case words (5-10 letters: about 1e13
    possible words, so none comes twice), one generator per client (seeded)."""

    def __init__(self, texts: int, words: int, seed: int, split: bool):
        self.texts, self.words, self.split = texts, words, split
        self.rng = random.Random(seed)

    def _word(self) -> str:
        return "".join(self.rng.choices(string.ascii_lowercase, k=self.rng.randint(5, 10)))

    def __call__(self) -> dict:
        out = []
        for k in range(self.texts):
            words = [self._word() for _ in range(self.words)]
            if self.split and k % 2:
                words[len(words) // 2 - 1] += "."
            out.append(" ".join(words))
        return {"sentences": out}


class Memory:
    """Samples every worker's RSS once a second in a thread: (seconds, pid, MiB) rows."""

    def __init__(self, master: int | None, start: float):
        self.master, self.start = master, start
        self.rows: list[tuple[float, int, float]] = []
        self.alive: set[int] = set()
        self.gone: set[int] = set()  # workers seen once and exited since
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def sample(self) -> dict[int, float]:
        now = {}
        for pid in worker_pids(self.master) if self.master else []:
            mib = rss_mib(pid)
            if mib is not None:
                now[pid] = mib
                self.rows.append((time.monotonic() - self.start, pid, mib))
        self.gone |= self.alive - set(now)
        self.alive = set(now)
        return now

    def _run(self) -> None:
        while not self._stop.wait(1.0):
            self.sample()

    def __enter__(self) -> Memory:
        self.sample()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.sample()

    @property
    def recycles(self) -> int:
        """Workers that exited (replaced after max_requests, or by a reload)."""
        return len(self.gone)

    def peak(self) -> dict[int, float]:
        out: dict[int, float] = {}
        for _, pid, mib in self.rows:
            out[pid] = max(out.get(pid, 0.0), mib)
        return out

    def first_last(self) -> dict[int, tuple[float, float]]:
        out: dict[int, tuple[float, float]] = {}
        for _, pid, mib in self.rows:
            out[pid] = (out[pid][0], mib) if pid in out else (mib, mib)
        return out


def check(kind: str, body: dict, resp: requests.Response) -> str | None:
    """Why an answer is not a complete success, or None."""
    if resp.status_code != 200:
        return f"{kind}: HTTP {resp.status_code}"
    try:
        answer = resp.json()
    except ValueError:
        return f"{kind}: not JSON"
    key, sent = ("scores", "sentences") if kind == "score" else ("ranked", "candidates")
    if len(answer.get(key, [])) != len(body[sent]):
        return f"{kind}: {len(answer.get(key, []))} of {len(body[sent])} answered"
    return None


class Traffic:
    """The clients' results: (seconds since the start at the end, latency in s, error or None)."""

    def __init__(self, start: float):
        self.start, self.rows, self.lock = start, [], threading.Lock()

    def send(self, session, url: str, kind: str, body: dict) -> None:
        t0 = time.monotonic()
        try:
            resp = session.post(f"{url}/v1/{kind}", json=body, timeout=60)
            error = check(kind, body, resp)
        except requests.RequestException as exc:
            error = f"{kind}: {type(exc).__name__}: {exc}"[:200]
        t1 = time.monotonic()
        with self.lock:
            self.rows.append((t1 - self.start, t1 - t0, error))

    def window(self, a: float, b: float) -> tuple[np.ndarray, list[str]]:
        with self.lock:
            rows = [r for r in self.rows if a <= r[0] < b]
        ok = np.array([lat for _, lat, err in rows if err is None]) * 1000
        return ok, [err for _, _, err in rows if err is not None]


def _pct(ms: np.ndarray, q: float) -> float:
    return float(np.percentile(ms, q)) if len(ms) else float("nan")


def _mem_line(now: dict[int, float]) -> str:
    return " ".join(f"{pid}:{mib:.0f}" for pid, mib in sorted(now.items())) or "n/a"


def soak(url: str, master: int | None, args) -> dict:
    start = time.monotonic()
    traffic = Traffic(start)
    stop_at = start + args.minutes * 60
    lists = FreshLists()
    counter = iter(range(1_000_000))
    lock = threading.Lock()

    def client():
        with lock:
            k = next(counter)
        words = FreshWords(args.texts, args.words, seed=args.seed * 1000 + k, split=True)
        session, n = requests.Session(), k  # clients start on different kinds
        while time.monotonic() < stop_at:
            if n % 2:
                traffic.send(session, url, "rerank", lists())
            else:
                traffic.send(session, url, "score", words())
            n += 1

    with Memory(master, start) as memory:
        clients = threading.Thread(target=in_threads, args=(client, args.clients))
        clients.start()
        edge = 0.0
        while clients.is_alive():
            clients.join(timeout=max(0.0, start + edge + args.interval - time.monotonic()))
            end = time.monotonic() - start
            if end - edge < args.interval and clients.is_alive():
                continue
            ms, errors = traffic.window(edge, end + 1e-9)
            print(
                f"{end:7.0f} s  RSS MiB {_mem_line(memory.sample())}  |  {len(ms)} ok  "
                f"p50 {_pct(ms, 50):6.0f} ms  p99 {_pct(ms, 99):6.0f} ms  |  errors "
                f"{len(errors)}  recycles {memory.recycles}",
                flush=True,
            )
            for err in errors[:3]:
                print("   ", err)
            edge = end
    total = time.monotonic() - start
    first, _ = traffic.window(0, 60)
    last, _ = traffic.window(total - 60, total + 1)
    all_ms, errors = traffic.window(0, total + 1)
    peak = memory.peak()
    summary = {
        "minutes": args.minutes,
        "clients": args.clients,
        "requests": len(all_ms) + len(errors),
        "errors": len(errors),
        "error_examples": errors[:10],
        "recycles": memory.recycles,
        "max_rss_mib": {str(pid): round(mib, 1) for pid, mib in sorted(peak.items())},
        "max_rss_mib_all": round(max(peak.values()), 1) if peak else None,
        "p50_ms": _pct(all_ms, 50),
        "p99_first_minute_ms": _pct(first, 99),
        "p99_last_minute_ms": _pct(last, 99),
    }
    summary["p99_ratio"] = summary["p99_last_minute_ms"] / summary["p99_first_minute_ms"]
    if args.plot:
        plot(memory, traffic, total, Path(args.plot))
        summary["plot"] = args.plot
    return summary


def plot(memory: Memory, traffic: Traffic, total: float, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 6.5), sharex=True)
    for pid in sorted({pid for _, pid, _ in memory.rows}):
        rows = [(t, mib) for t, p, mib in memory.rows if p == pid]
        top.plot([t / 60 for t, _ in rows], [mib for _, mib in rows], lw=1.2, label=str(pid))
    top.axhline(RSS_TARGET_MIB, color="grey", ls="--", lw=0.8)
    top.set_ylabel("worker RSS (MiB)")
    top.legend(title="worker pid", fontsize=7, ncol=4, loc="lower right")
    edges = np.arange(0, total + 10, 10.0)
    mids, p50, p99 = [], [], []
    for a, b in itertools.pairwise(edges):
        ms, _ = traffic.window(a, b)
        if len(ms):
            mids.append((a + b) / 120)
            p50.append(_pct(ms, 50))
            p99.append(_pct(ms, 99))
    bottom.plot(mids, p50, label="p50", lw=1.2)
    bottom.plot(mids, p99, label="p99", lw=1.2)
    bottom.set_yscale("log")
    bottom.set_ylabel("latency per 10 s (ms)")
    bottom.set_xlabel("minutes")
    bottom.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def probe(url: str, master: int | None, args) -> dict:
    start = time.monotonic()
    traffic = Traffic(start)
    counter = iter(range(args.probe))
    lock = threading.Lock()

    def client(seed: int):
        words = FreshWords(64, 40, seed=seed, split=False)
        session = requests.Session()
        while True:
            with lock:
                if next(counter, None) is None:
                    return
            traffic.send(session, url, "score", words())

    seeds = iter(range(args.seed * 1000, args.seed * 1000 + args.clients))
    with Memory(master, start) as memory:
        in_threads(lambda: client(next(seeds)), args.clients)
    ms, errors = traffic.window(0, time.monotonic() - start + 1)
    spans, peak = memory.first_last(), memory.peak()
    for pid, (before, after) in sorted(spans.items()):
        print(
            f"worker {pid}: RSS {before:.0f} MiB before, {peak[pid]:.0f} highest, {after:.0f} after"
        )
    if master and rss_mib(master):
        print(f"master {master}: RSS {rss_mib(master):.0f} MiB (the preloaded model, all touched)")
    print(
        f"{len(ms)} ok, {len(errors)} errors, p50 {_pct(ms, 50):.0f} ms; recycles {memory.recycles}"
    )
    for err in errors[:5]:
        print("   ", err)
    return {
        "requests": args.probe,
        "errors": len(errors),
        "recycles": memory.recycles,
        "rss_mib": {
            str(p): [round(a, 1), round(peak[p], 1), round(b, 1)] for p, (a, b) in spans.items()
        },
        "max_rss_mib_all": round(max(peak.values()), 1) if peak else None,
        "p50_ms": _pct(ms, 50),
    }


def main(argv=None) -> int:
    ap = parser(__doc__)
    add_server_args(ap)
    ap.add_argument("--minutes", type=float, default=20.0, help="how long the soak lasts")
    ap.add_argument("--clients", type=int, help="client threads (default: 4; 2 with --probe)")
    ap.add_argument("--texts", type=int, default=64, help="texts per /v1/score request")
    ap.add_argument("--words", type=int, default=40, help="new words per text")
    ap.add_argument("--interval", type=float, default=30.0, help="seconds between reports")
    ap.add_argument("--probe", type=int, metavar="N", help="only N /v1/score requests of new words")
    ap.add_argument("--plot", default="soak.png", help="PNG of RSS and latency ('' for none)")
    ap.add_argument("--json", help="also write the summary here")
    ap.add_argument("--master-pid", type=int, help="the gunicorn master of --url's server")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    args.clients = args.clients or (2 if args.probe else 4)
    with serve(**server_options(args)) as server:
        master = server.pid or args.master_pid or find_master(server.url)
        if master is None:
            print("no gunicorn master found for", server.url, "(--master-pid): RSS not measured")
        workers = "?"
        if master:
            workers = wait_for_workers(master, args.workers if server.pid else 1)
        print(f"{server.url}, master {master}, workers {workers}")
        before = os.getloadavg()
        print(f"before: {machine()} (1, 5, 15 min: {before})", flush=True)
        summary = probe(server.url, master, args) if args.probe else soak(server.url, master, args)
        summary["load_average"] = {"before": list(before), "after": list(os.getloadavg())}
    print(f"after: {machine()} (1, 5, 15 min: {os.getloadavg()})")
    if not args.probe:
        print(
            f"summary: {summary['requests']} requests, {summary['errors']} errors, "
            f"{summary['recycles']} recycles; max RSS per worker (MiB) {summary['max_rss_mib']}; "
            f"p99 first minute {summary['p99_first_minute_ms']:.0f} ms, last minute "
            f"{summary['p99_last_minute_ms']:.0f} ms, ratio {summary['p99_ratio']:.2f}"
        )
        for target, met in targets(summary):
            print(f"target, {target}: {'met' if met else 'MISSED'}")
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=1))
    return 0


def targets(summary: dict) -> list[tuple[str, bool]]:
    """The docstring's targets, each with whether the run met it (RSS only when measured)."""
    out = [("no error", summary["errors"] == 0)]
    if summary["max_rss_mib_all"] is not None:
        out.append(
            (
                f"no worker above {RSS_TARGET_MIB:g} MiB",
                summary["max_rss_mib_all"] <= RSS_TARGET_MIB,
            )
        )
    out.append(("last-minute p99 <= 1.5 x first-minute p99", summary["p99_ratio"] <= 1.5))
    return out


if __name__ == "__main__":
    raise SystemExit(main())
