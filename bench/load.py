"""Load test of POST /v1/rerank (10 candidates of ~20 words, no reference; `--candidates`) against
/healthz.

For each concurrency (default 1, 4, 16 clients, each a thread with its own keep-alive
session, sending back to back) it runs for a bounded time and prints requests/s, latency
percentiles and errors. /healthz at the same concurrencies, in the same run, is the
baseline: the cost of HTTP, gunicorn and Flask alone. The ratio says what scoring adds.

`bare-parse` is the baseline of `rerank`, in the same run: the same lists (the same sequence,
new every request) sent at the same concurrencies to spaCy's bare parse behind the same HTTP
stack and worker count (`bench/_bare_parse.py`), which parses them and does nothing more; the
table ends with rerank's p50 over it (`--no-bare` leaves it out).

`rerank` sends a new n-best list every request (a Reuters test sentence of 15-25 words when
../shared is there, and 9 shuffles of it), so the server's feature cache never hits: the cost
of scoring new text. `rerank-repeat` sends one list over and over: every candidate is then in
the cache (FLUENCY_FEATURE_CACHE), the cost of a reranker that sees the same candidates again.

    python -m bench.load --model-path models/default           # starts gunicorn, 2 workers
    python -m bench.load --url http://127.0.0.1:8000            # an already running server
    python -m bench.load --models default,data-to-text --model data-to-text  # two bundles served,
                                                               # requests naming the second

Targets (2 cores, 2 workers, fresh lists): the default model p50 <= 50 ms at 1 client, p50 <=
100 ms and p99 <= 250 ms at 4 clients, no errors at 16; the fast model p50 <= 40 ms at 4
clients. With a server started here it also prints each process's resident (RSS) and
proportional (PSS: shared pages divided among the processes sharing them) memory after the run:
the workers fork from a preloaded master, so what they still share is what PSS leaves out.
"""

from __future__ import annotations

import os
import threading
import time
from contextlib import ExitStack

import numpy as np
import requests

from bench._args import add_seconds, parser
from bench._bare_parse import start as bare_parse
from bench._data import FreshLists
from bench._server import add_server_args, serve, server_options
from bench._timing import in_threads, latency_ms


def run_level(url: str, method: str, body, clients: int, seconds: float) -> dict:
    """`clients` threads, each with a keep-alive session, sending back to back for `seconds`.
    `body`: a JSON object, or a function that makes one for each request."""
    latencies: list[float] = []
    errors: list[str] = []
    per_client: list[float] = []  # each client's median, ms
    lock = threading.Lock()
    stop_at = time.monotonic() + seconds

    def client():
        session = requests.Session()
        mine, bad = [], []
        while time.monotonic() < stop_at:
            t0 = time.perf_counter()
            try:
                payload = body() if callable(body) else body
                resp = session.request(method, url, json=payload, timeout=30)
                ok = resp.status_code == 200
                if not ok:
                    bad.append(str(resp.status_code))
            except requests.RequestException as exc:
                ok = False
                bad.append(type(exc).__name__)
            if ok:
                mine.append(time.perf_counter() - t0)
        with lock:
            latencies.extend(mine)
            errors.extend(bad)
            per_client.append(float(np.median(mine)) * 1000 if mine else float("nan"))

    elapsed = in_threads(client, clients)
    return {
        "requests": len(latencies),
        "rps": len(latencies) / elapsed,
        **latency_ms(latencies, (50, 95, 99)),
        "errors": len(errors),
        "error_kinds": sorted(set(errors)),
        "client_p50": sorted(per_client),
    }


# (clients, p50 limit, p99 limit or None) per model, for fresh lists
_TARGETS = {
    "default": [(1, 50.0, None), (4, 100.0, 250.0)],
    "fast": [(4, 40.0, None)],
}


def _memory(pid: int) -> dict[str, float]:
    """RSS and PSS of one process, MiB (Linux's smaps_rollup)."""
    out = {}
    with open(f"/proc/{pid}/smaps_rollup") as fh:
        for line in fh:
            key, _, rest = line.partition(":")
            if key in ("Rss", "Pss"):
                out[key.lower()] = int(rest.split()[0]) / 1024
    return out


def _workers(master: int | None) -> list[int]:
    """The worker processes of a gunicorn master started here ([] for a remote server)."""
    if master is None:
        return []
    try:
        with open(f"/proc/{master}/task/{master}/children") as fh:
            return [int(p) for p in fh.read().split()]
    except OSError:
        return []


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of one process so far (/proc/PID/stat)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def print_memory(master: int) -> None:
    """The master's and its workers' memory (the server must have been started here)."""
    try:
        workers = _workers(master)
        rows = [("master", master)] + [(f"worker {i + 1}", p) for i, p in enumerate(workers)]
        print(f"{'process':10} {'RSS MiB':>8} {'PSS MiB':>8}")
        total = 0.0
        for name, pid in rows:
            m = _memory(pid)
            total += m["pss"]
            print(f"{name:10} {m['rss']:8.0f} {m['pss']:8.0f}")
        print(f"{'all':10} {'':>8} {total:8.0f}")
    except (OSError, KeyError, ValueError) as exc:
        print(f"memory: not available here ({exc})")


def naming(bodies, model: str | None, genre: str | None = None):
    """`bodies` (a function making each request's body), each with `"model": model` and
    `"genre": genre` when set."""
    named = {key: value for key, value in (("model", model), ("genre", genre)) if value}
    if not named:
        return bodies
    return lambda: {**bodies(), **named}


def report(
    url: str, args, workers: str, master: int | None = None, bare_url: str | None = None
) -> None:
    """The table; with `master` (a server started here) also each worker's CPU seconds in each
    level, which shows how evenly the clients' connections were spread over the workers; with
    `bare_url` (`bench._bare_parse`) the bare parse of the same lists, the rerank's baseline."""
    # The list rerank-repeat sends every time.
    body = naming(FreshLists(args.candidates), args.model, args.genre)()
    check = requests.post(url + "/v1/rerank", json=body, timeout=30)
    check.raise_for_status()
    n_words = np.mean([len(c.split()) for c in body["candidates"]])
    listed = requests.get(url + "/v1/models", timeout=30)
    served = [m["name"] for m in listed.json()["models"]] if listed.ok else ["?"]
    print(
        f"server {url}  model {check.json()['model']} (served: {', '.join(served)})  "
        f"head {check.json().get('genre', '?')}  "
        f"workers {workers}  "
        f"{len(body['candidates'])} candidates x ~{n_words:.0f} words, no reference, "
        f"{args.seconds:g} s per level  (load average before: {os.getloadavg()[0]:.2f})"
    )
    print(
        f"{'endpoint':10} {'clients':>7} {'req':>6} {'req/s':>8} {'p50 ms':>8} "
        f"{'p95 ms':>8} {'p99 ms':>8} {'errors':>6} {'worker CPU s' if master else ''}"
    )
    results = {}
    fresh = naming(FreshLists(args.candidates), args.model, args.genre)
    levels = [
        ("healthz", url, "GET", "/healthz", None),
        ("rerank", url, "POST", "/v1/rerank", fresh),
        ("rerank-repeat", url, "POST", "/v1/rerank", body),
    ]
    if bare_url:  # the same lists, in the same order, parsed and nothing more
        levels.insert(
            1, ("bare-parse", bare_url, "POST", "/v1/rerank", FreshLists(args.candidates))
        )
    for name, base, method, path, payload in levels:
        for clients in args.clients:
            pids = _workers(master) if base == url else []
            before = [_cpu_seconds(p) for p in pids]
            r = run_level(base + path, method, payload, clients, args.seconds)
            spent = [_cpu_seconds(p) - b for p, b in zip(pids, before, strict=True)]
            results[name, clients] = r
            share = " / ".join(f"{c:.1f}" for c in spent)
            print(
                f"{name:10} {clients:7d} {r['requests']:6d} {r['rps']:8.1f} {r['p50']:8.1f} "
                f"{r['p95']:8.1f} {r['p99']:8.1f} {r['errors']:6d} {share} "
                f"{' '.join(r['error_kinds'])}",
                flush=True,
            )
    # An uneven spread of clients over workers shows here: with 4 clients on 2 workers, one
    # client fast and three slow means three share one worker.
    for clients in args.clients:
        if 1 < clients <= 8:
            each = " / ".join(f"{x:.1f}" for x in results["rerank", clients]["client_p50"])
            print(f"rerank, {clients} clients, each client's p50 ms: {each}")
    for name in ("rerank", "rerank-repeat"):
        print(f"{name} relative to healthz:")
        for clients in args.clients:
            h, r = results["healthz", clients], results[name, clients]
            print(
                f"  {clients:2d} clients: throughput x{r['rps'] / h['rps']:.3f}, "
                f"p50 latency x{r['p50'] / h['p50']:.1f}"
            )
        if 16 in args.clients:
            print(f"  {name} errors at 16 clients: {results[name, 16]['errors']}")
    if bare_url:
        print("rerank relative to the bare parse of the same lists:")
        for clients in args.clients:
            b, r = results["bare-parse", clients], results["rerank", clients]
            print(
                f"  {clients:2d} clients: p50 {r['p50']:.1f} / {b['p50']:.1f} ms = "
                f"x{r['p50'] / b['p50']:.2f}, throughput x{r['rps'] / b['rps']:.3f}"
            )
    model = str(check.json()["model"])
    for clients, p50, p99 in _TARGETS.get(model, []):
        if clients not in args.clients:
            continue
        r = results["rerank", clients]
        met = r["p50"] <= p50 and (p99 is None or r["p99"] <= p99)
        limit = f"p50 <= {p50:g} ms" + (f", p99 <= {p99:g} ms" if p99 else "")
        print(
            f"target, {model}, fresh lists, {clients} clients ({limit}): "
            f"{'met' if met else 'MISSED'}"
        )


def main(argv=None) -> int:
    ap = parser(__doc__)
    add_server_args(ap)
    ap.add_argument("--clients", type=int, nargs="+", default=[1, 4, 16])
    ap.add_argument("--candidates", type=int, default=10, help="candidates a rerank list holds")
    add_seconds(ap, 15.0, help="per level and endpoint")
    ap.add_argument(
        "--model",
        help='sent as each rerank request\'s "model": one of the bundles served (--models); '
        "default: none named, the server's default",
    )
    ap.add_argument(
        "--genre",
        help='sent as each rerank request\'s "genre": a head of the model (GET /v1/models lists '
        "them); default: none named, the model's general head",
    )
    ap.add_argument(
        "--worker-class",
        help="gunicorn worker class for the server started here (default: gunicorn.conf.py's "
        "balanced gthread; `gthread` for gunicorn's own, to compare)",
    )
    ap.add_argument(
        "--no-bare",
        action="store_true",
        help="leave out the baseline: spaCy's bare parse of the same lists behind the same "
        "HTTP stack and workers (bench/_bare_parse.py)",
    )
    args = ap.parse_args(argv)
    with serve(**server_options(args), worker_class=args.worker_class) as server:
        if server.pid is None:
            report(server.url, args, "?")
            return 0
        workers = str(args.workers) + (f" ({args.worker_class})" if args.worker_class else "")
        with ExitStack() as stack:
            bare = None if args.no_bare else stack.enter_context(bare_parse(args.workers))
            report(server.url, args, workers, master=server.pid, bare_url=bare)
        print_memory(server.pid)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
