"""The neural tier against another checkout of it (0.16.0's), in one run: texts a second of its
general and data-to-text heads, cold start and memory, each side in its own process.

Two processes, one of this checkout and one of `--other` (its code, and the graph its own
install made: `FLUENCY_NEURAL_ONNX_DIR` is cleared for it), each one thread
(OMP_NUM_THREADS=1, as a gunicorn worker). Each loads the `neural` bundle and scores one
sentence: the cold start, seconds from the process's start (both start at once). Each head then
scores a sentence, untimed, so each loads what it reads. Then the same chunks of `--chunk`
development texts (`--per-file` from each file of ../shared/dev, new to both), each head in
turn, are sent to both, alternating which goes first; a chunk's time is `score_texts` with that
head, in that process. Printed: texts a second each side, the ratio of the times with a 95%
bootstrap interval over the chunks (seed 0), each process's PSS and peak RSS after the run
(MiB), and the largest score difference between the two sides.

    python -m bench.neural_against --other ../main-0.16.0 [--per-file 20] [--chunk 8]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from bench._args import parser
from bench._data import SHARED
from bench._timing import ROOT, machine

_SIDE = r"""
import json, sys, time
start = float(sys.argv[1])
from scorer.scoring import load_scorer
scorer = load_scorer("neural")
scorer.score(["The committee will meet again next week."])
print(json.dumps({"cold": time.time() - start}), flush=True)
for line in sys.stdin:
    job = json.loads(line)
    if job.get("memory"):
        text = open("/proc/self/smaps_rollup").read() + open("/proc/self/status").read()
        kib = {x.split(":")[0]: int(x.split()[1]) for x in text.splitlines() if x.endswith("kB")}
        print(json.dumps({"pss": kib["Pss"] / 1024, "peak": kib["VmHWM"] / 1024}), flush=True)
        continue
    t = time.perf_counter()
    scores = [s.score for s in scorer.score_texts(job["texts"], genre=job["genre"])]
    print(json.dumps({"seconds": time.perf_counter() - t, "scores": scores}), flush=True)
"""


def _start(checkout: Path, own_graph: bool) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(checkout), "OMP_NUM_THREADS": "1"}
    if not own_graph:
        env.pop("FLUENCY_NEURAL_ONNX_DIR", None)
    return subprocess.Popen(
        [sys.executable, "-c", _SIDE, str(time.time())],
        cwd=checkout,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def _ask(side: subprocess.Popen, job: dict) -> dict:
    side.stdin.write(json.dumps(job) + "\n")
    side.stdin.flush()
    return json.loads(side.stdout.readline())


def _texts(dev: Path, per_file: int) -> list[str]:
    from training.gleu.neural_check import development_texts

    return development_texts(dev, per_file, seed=1)


def _interval(ours: np.ndarray, theirs: np.ndarray, seed: int = 0) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(ours), size=(2000, len(ours)))
    ratios = ours[picks].sum(1) / theirs[picks].sum(1)
    return float(np.percentile(ratios, 2.5)), float(np.percentile(ratios, 97.5))


def main(argv=None) -> int:
    ap = parser(__doc__)
    ap.add_argument("--other", type=Path, required=True, help="the other checkout (0.16.0)")
    ap.add_argument("--dev", type=Path, default=SHARED / "dev")
    ap.add_argument("--per-file", type=int, default=20, help="texts drawn from each file")
    ap.add_argument("--chunk", type=int, default=8, help="texts a request")
    ap.add_argument("--genres", nargs="+", default=["general", "data-to-text"])
    args = ap.parse_args(argv)
    print(machine())
    texts = _texts(args.dev, args.per_file)
    sides = {"this": _start(ROOT, True), "other": _start(args.other.resolve(), False)}
    cold = {name: json.loads(side.stdout.readline())["cold"] for name, side in sides.items()}
    print(f"cold start to a first score: this {cold['this']:.2f} s, other {cold['other']:.2f} s")
    for genre in args.genres:  # each head's path loaded (spaCy, Link Grammar...) before timing
        for side in sides.values():
            _ask(side, {"texts": ["The bank said profits rose."], "genre": genre})
    chunks = [texts[i : i + args.chunk] for i in range(0, len(texts), args.chunk)]
    for g, genre in enumerate(args.genres):
        times: dict[str, list[float]] = {"this": [], "other": []}
        largest = 0.0
        for k, chunk in enumerate(chunks[g :: len(args.genres)]):  # new texts to each head
            order = ["this", "other"] if k % 2 == 0 else ["other", "this"]
            got = {name: _ask(sides[name], {"texts": chunk, "genre": genre}) for name in order}
            for name in times:
                times[name].append(got[name]["seconds"])
            diff = np.subtract(got["this"]["scores"], got["other"]["scores"])
            largest = max(largest, float(np.abs(diff).max()))
        ours, theirs = np.array(times["this"]), np.array(times["other"])
        n = sum(len(c) for c in chunks[g :: len(args.genres)])
        low, high = _interval(ours, theirs)
        print(
            f"{genre}: {n} texts in chunks of {args.chunk}; texts a second this "
            f"{n / ours.sum():.2f}, other {n / theirs.sum():.2f}; time a text this / other "
            f"{ours.sum() / theirs.sum():.3f} [{low:.3f}, {high:.3f}]; largest score "
            f"difference {largest:.2g}"
        )
    for name, side in sides.items():
        mem = _ask(side, {"memory": True})
        print(f"{name}: PSS {mem['pss']:.0f} MiB, peak RSS {mem['peak']:.0f} MiB")
        side.stdin.close()
        side.wait(timeout=60)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
