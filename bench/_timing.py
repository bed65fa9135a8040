"""Timing shared by the benchmarks: latency percentiles, best of N, a figure from a fresh
process, and a line on the machine the figures come from."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def latency_ms(seconds: Sequence[float], percentiles: Iterable[int] = (50, 95, 99)) -> dict:
    """Latencies given in seconds, summarised in milliseconds: `p50`, `p95`, ... (one key per
    percentile) and `max`; every value NaN when there are none."""
    ms = np.asarray(seconds, dtype=float) * 1000 if len(seconds) else np.array([np.nan])
    out = {f"p{q}": float(np.percentile(ms, q)) for q in percentiles}
    out["max"] = float(ms.max())
    return out


def in_threads(target: Callable[[], object], n: int) -> float:
    """Run `target` in `n` threads at once (a load test's clients) and wait for them all;
    returns the wall-clock seconds from the first start to the last end."""
    threads = [threading.Thread(target=target) for _ in range(n)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - start


def best_of(fn: Callable[[], object], repeat: int) -> float:
    """The shortest wall-clock seconds of `repeat` calls of `fn` (the least disturbed run)."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def figure_from_process(code: str, *args: str, env: dict[str, str] | None = None) -> float:
    """Run `python -c code args...` in a fresh process from the project root (so it imports
    `features`, `scorer` and `bench`), with `env` added to the environment, and return the last
    line it prints as a number. Exits with the end of its stderr when it fails."""
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=ROOT,
        env=dict(os.environ, **(env or {})),
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode:
        raise SystemExit(f"a timing process exited with {done.returncode}:\n{done.stderr[-2000:]}")
    return float(done.stdout.strip().splitlines()[-1])


def machine() -> str:
    """`N cores; load average L`: how busy the machine was when the figures were taken."""
    return f"{os.cpu_count()} cores; load average {os.getloadavg()[0]:.2f}"
