"""Scaling out: Dask workers against `fluency score --jobs`, on the same sentences, in one run.

`--jobs 1` and `--jobs N` run the real command as a subprocess, as bench/score.py does: the same
command on one sentence is subtracted, so start-up and model loading are not counted. The Dask
runs start a LocalCluster of 1 and then N single-threaded worker processes here, let every
worker load the model (timed apart), and time the scoring alone: chunks of `--chunk` sentences
submitted by `scorer.distributed.score_chunks`, results taken in order, exactly what
`fluency score --dask local:N` does. Peak memory is each worker's own peak resident set.
The Dask scores are checked against the command's, printed to 6 decimals. `--repeat R` runs
the four R times, interleaved, and keeps each one's best (the least disturbed by neighbours).
Sentences per CPU-second (the CPU time of the Dask workers; of the command and its `--jobs`
processes, start-up subtracted) say what a worker costs whatever the neighbours are doing.

Usage: python -m bench.scale [--sentences 2000] [--workers 2] [--chunk 512] [--repeat 1]
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench._args import add_model, add_sentences, parser
from bench._data import sentences


def _run(argv: list[str]) -> tuple[float, float, str]:
    """Wall seconds, peak RSS in MiB (largest child process so far), stdout."""
    t0 = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    if done.returncode:
        raise SystemExit(f"{' '.join(argv)} failed:\n{done.stderr[-2000:]}")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return wall, peak, done.stdout


class Jobs:
    """`fluency score --jobs N` as a subprocess; its start-up (the command on one sentence) is
    measured once and subtracted from every run."""

    def __init__(self, args, data: Path, one: Path, jobs: int):
        self.name, self.data = f"--jobs {jobs}", data
        self.argv = [sys.executable, "-m", "scorer.cli", "score", "--model", args.model]
        self.argv += ["--jobs", str(jobs), "--chunk", str(args.chunk)]
        cpu0 = _children_cpu()
        self.t_start, _, _ = _run([*self.argv, str(one)])
        self.cpu_start = _children_cpu() - cpu0
        print(f"fluency score {self.name}: start-up {self.t_start:.1f} s", flush=True)

    def score(self, n: int) -> tuple[float, list[str]]:
        cpu0 = _children_cpu()
        wall, _, out = _run([*self.argv, str(self.data)])
        self.cpu = _children_cpu() - cpu0 - self.cpu_start
        return (n - 1) / max(wall - self.t_start, 1e-9), out.splitlines()


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class Dask:
    """A LocalCluster of `workers` with the model loaded on each (timed apart); `score` times
    the scoring alone, as `fluency score --dask local:N` does it."""

    def __init__(self, args, workers: int):
        from scorer.config import from_env
        from scorer.distributed import connect, register_scorer

        self.name, self.workers, self.chunk = f"dask local:{workers}", workers, args.chunk
        t0 = time.perf_counter()
        self.client = connect(f"local:{workers}", quiet=True)
        t_cluster = time.perf_counter() - t0
        # No feature cache: a second round would otherwise find every sentence scored.
        register_scorer(self.client, args.model, {**from_env(), "FEATURE_CACHE": 0})
        t_load = time.perf_counter() - t0 - t_cluster
        print(
            f"{self.name}: cluster start {t_cluster:.1f} s, model load on every worker "
            f"{t_load:.1f} s",
            flush=True,
        )

    def score(self, texts: list[str]) -> tuple[float, list[str]]:
        from scorer.distributed import score_chunks

        rows = [{"text": t} for t in texts]
        chunks = (rows[i : i + self.chunk] for i in range(0, len(rows), self.chunk))
        cpu0 = sum(self.client.run(_cpu_seconds).values())
        t1 = time.perf_counter()
        window = 2 * self.workers
        out = [
            "nan" if o.score is None else f"{o.score.score:.6f}"
            for _, outcomes in score_chunks(self.client, chunks, "text", window=window)
            for o in outcomes
        ]
        took = time.perf_counter() - t1
        self.cpu = sum(self.client.run(_cpu_seconds).values()) - cpu0
        return len(texts) / took, out

    def peaks(self) -> str:
        return ", ".join(f"{p:.0f}" for p in sorted(self.client.run(_peak_mib).values()))

    def close(self) -> None:
        cluster = self.client.cluster
        self.client.close()
        cluster.close()


def main() -> None:
    ap = parser(__doc__)
    add_sentences(ap, 2000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--chunk", type=int, default=512)
    add_model(ap, "default")
    ap.add_argument("--repeat", type=int, default=1, help="rounds, each running all four")
    args = ap.parse_args()
    texts = sentences(args.sentences)
    n, w = len(texts), args.workers
    print(f"{n} sentences, {os.cpu_count()} cores, chunks of {args.chunk}", flush=True)
    rates: dict[str, list[float]] = {}
    outs: dict[str, list[str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        data, one = Path(tmp) / "in.txt", Path(tmp) / "one.txt"
        data.write_text("\n".join(texts) + "\n")
        one.write_text(texts[0] + "\n")
        jobs = [Jobs(args, data, one, 1), Jobs(args, data, one, w)]
        clusters = [Dask(args, 1), Dask(args, w)]
        try:
            # Rounds interleave the four, so a neighbour's load on a shared machine falls on
            # all of them alike rather than on whichever ran at the time.
            for r in range(args.repeat):
                for runner in (*jobs, *clusters):
                    rate, out = runner.score(n if isinstance(runner, Jobs) else texts)
                    rates.setdefault(runner.name, []).append(rate)
                    outs[runner.name] = out
                    per_cpu = n / runner.cpu
                    print(
                        f"round {r + 1}: {runner.name}: {rate:.1f} sent/s; "
                        f"{per_cpu:.1f} sent per CPU-second",
                        flush=True,
                    )
            for c in clusters:
                print(f"{c.name}: peak RSS per worker {c.peaks()} MiB")
        finally:
            for c in clusters:
                c.close()
    best = {name: max(r) for name, r in rates.items()}
    for name, r in rates.items():
        print(
            f"{name:14s} best {best[name]:6.1f} sent/s  (runs: {', '.join(f'{x:.1f}' for x in r)})"
        )
    same = sum(a == b for a, b in zip(outs[f"dask local:{w}"], outs[f"--jobs {w}"], strict=True))
    print(f"dask local:{w} scores equal to --jobs {w}'s (6 decimals): {same} of {n} lines")
    print(
        f"ratio dask {w} workers / 1 worker: {best[f'dask local:{w}'] / best['dask local:1']:.2f}"
    )
    print(f"ratio --jobs {w} / --jobs 1:        {best[f'--jobs {w}'] / best['--jobs 1']:.2f}")
    print(
        f"ratio dask {w} workers / --jobs {w}:  {best[f'dask local:{w}'] / best[f'--jobs {w}']:.2f}"
    )


if __name__ == "__main__":
    main()
