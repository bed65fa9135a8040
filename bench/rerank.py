"""CPU time of one `/v1/rerank`-sized job in one process, without HTTP: the floor under the
service's latency.

For each `--model`, a fresh process loads it, reranks 5 lists to warm up, then `--lists` fresh
n-best lists (those `bench/http.py` sends: a Reuters test sentence and 9 shuffles of it, so
nothing is cached) and prints the CPU milliseconds per list, once with spaCy's layers on NumPy's
BLAS (the default) and once on blis (FLUENCY_BLIS=1).

    python bench/rerank.py [--model default --model fast] [--lists 100]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
sys.path.insert(0, str(HERE.parent))

_JOB = """
import sys, time
sys.path.insert(0, {root!r})
from bench.http import FreshLists
from scorer import load_scorer, rerank
scorer = load_scorer(sys.argv[1])
lists = FreshLists()
for _ in range(5):
    rerank(scorer, lists()["candidates"])
bodies = [lists()["candidates"] for _ in range(int(sys.argv[2]))]
start = time.process_time()
for body in bodies:
    rerank(scorer, body)
print((time.process_time() - start) / len(bodies) * 1000)
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", action="append", help="repeat; default: default, fast")
    ap.add_argument("--lists", type=int, default=100)
    args = ap.parse_args()
    code = _JOB.format(root=str(HERE.parent))
    print(f"{os.cpu_count()} cores; load average {os.getloadavg()[0]:.2f}")
    print(f"{'model':10} {'NumPy BLAS ms':>14} {'blis ms':>8} {'ratio':>6}")
    for model in args.model or ["default", "fast"]:
        ms = {}
        for name, blis in (("numpy", "0"), ("blis", "1")):
            env = dict(os.environ, FLUENCY_BLIS=blis, OPENBLAS_NUM_THREADS="1")
            done = subprocess.run(
                [sys.executable, "-c", code, model, str(args.lists)],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            ms[name] = float(done.stdout.strip().splitlines()[-1])
        print(f"{model:10} {ms['numpy']:14.1f} {ms['blis']:8.1f} {ms['numpy'] / ms['blis']:6.2f}")


if __name__ == "__main__":
    main()
