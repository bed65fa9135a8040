"""What recycled workers cost a /metrics scrape, with and without archiving their files.

Under gunicorn every worker writes its counters and histograms into files of its own in the
metrics folder (prometheus_client's multiprocess mode), and prometheus_client keeps them after
the worker exits, so that its counts stay in the sums. Workers recycled every thousand requests
leave two files each, and every scrape reads them all. The master archives a dead worker's files
instead (`scorer.web.metrics.archive_dead`). This script writes the files of N dead workers, each
with the service's series (every route and status, the latency histogram, texts scored per
model, problems by type), and times a scrape (best of --repeat) with the files kept, as
prometheus_client leaves them, and then after archiving them, in the same run:

    python -m bench.metrics_folder                     # 200, 1,000 and 5,000 dead workers
    python -m bench.metrics_folder --workers 1000 --repeat 5

Expected: with archiving, a scrape's time does not grow with the number of workers that have
exited, and the folder holds two files for all of them.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from bench._args import parser

ENDPOINTS = ("/v1/score", "/v1/rerank", "/v1/explain", "/v1/accuracy", "/healthz", "/readyz")
STATUSES = ("200", "400", "422")
MODELS = ("default", "data-to-text")
PROBLEMS = ("invalid-body", "unsupported-input", "too-costly", "not-found", "busy")


def _series() -> list[tuple[str, str, str, dict[str, str]]]:
    """(file kind, metric, sample name, labels) of one worker's series, as the service names
    them (scorer/web/metrics.py)."""
    from scorer.web.metrics import BUCKETS

    out = []
    for e in ENDPOINTS:
        for s in STATUSES:
            name = "fluency_http_requests"
            out.append(("counter", name, name + "_total", {"endpoint": e, "status": s}))
        hist = "fluency_http_request_duration_seconds"
        for le in [*(str(b) for b in BUCKETS), "+Inf"]:
            out.append(("histogram", hist, hist + "_bucket", {"endpoint": e, "le": le}))
        out.append(("histogram", hist, hist + "_sum", {"endpoint": e}))
        out.append(("histogram", hist, hist + "_count", {"endpoint": e}))
    for e in ENDPOINTS[:3]:
        for m in MODELS:
            name = "fluency_texts_scored"
            out.append(("counter", name, name + "_total", {"endpoint": e, "model": m}))
    for t in PROBLEMS:
        out.append(("counter", "fluency_http_problems", "fluency_http_problems_total", {"type": t}))
    return out


def write_dead_workers(folder: Path, n: int) -> None:
    from prometheus_client.mmap_dict import MmapedDict, mmap_key

    series = _series()
    for pid in range(10_000, 10_000 + n):
        files = {
            kind: MmapedDict(str(folder / f"{kind}_{pid}.db")) for kind in ("counter", "histogram")
        }
        for i, (kind, metric, name, labels) in enumerate(series):
            key = mmap_key(metric, name, list(labels), list(labels.values()), metric)
            files[kind].write_value(key, float(1 + (pid + i) % 7), 0.0)
        for f in files.values():
            f.close()


def scrape_seconds(folder: Path, repeat: int) -> tuple[float, bytes]:
    from prometheus_client import CollectorRegistry, generate_latest, multiprocess

    best, text = float("inf"), b""
    for _ in range(repeat):
        t0 = time.perf_counter()
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry, path=str(folder))
        text = generate_latest(registry)
        best = min(best, time.perf_counter() - t0)
    return best, text


def main(argv=None) -> int:
    ap = parser(__doc__)
    ap.add_argument("--workers", type=int, nargs="+", default=[200, 1000, 5000])
    ap.add_argument("--repeat", type=int, default=3, help="scrapes timed, the best kept")
    args = ap.parse_args(argv)
    from scorer.web.metrics import archive_dead

    print("dead workers   files kept  scrape ms   archive s  files  scrape ms   ratio  same")
    for n in args.workers:
        with tempfile.TemporaryDirectory(prefix="fluency-metrics-bench-") as tmp:
            folder = Path(tmp)
            os.environ["PROMETHEUS_MULTIPROC_DIR"] = tmp
            write_dead_workers(folder, n)
            kept_files = len(list(folder.glob("*.db")))
            kept, before = scrape_seconds(folder, args.repeat)
            t0 = time.perf_counter()
            for pid in range(10_000, 10_000 + n):
                archive_dead(pid)
            archiving = time.perf_counter() - t0
            files = len(list(folder.glob("*.db")))
            archived, after = scrape_seconds(folder, args.repeat)
            print(
                f"{n:12d} {kept_files:12d} {kept * 1000:10.1f} {archiving:11.2f} {files:6d} "
                f"{archived * 1000:10.1f} {archived / kept:7.3f}  {before == after}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
