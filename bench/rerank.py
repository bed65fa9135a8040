"""CPU time of one `/v1/rerank`-sized job in one process, without HTTP: the floor under the
service's latency.

For each `--model`, a fresh process loads it, reranks 5 lists to warm up, then `--lists` fresh
n-best lists (those `bench/load.py` sends: a Reuters test sentence and 9 shuffles of it, so
nothing is cached) and prints the CPU milliseconds per list, once with spaCy's layers on NumPy's
BLAS (the default) and once on blis (FLUENCY_BLIS=1).

    python -m bench.rerank [--model default --model fast] [--lists 100]
"""

from __future__ import annotations

from bench._args import add_models, parser
from bench._timing import figure_from_process, machine

MODELS = ["default", "fast"]
_JOB = """
import sys, time
from bench._data import FreshLists
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
    ap = parser(__doc__)
    add_models(ap, MODELS)
    ap.add_argument("--lists", type=int, default=100)
    args = ap.parse_args()
    print(machine())
    print(f"{'model':10} {'NumPy BLAS ms':>14} {'blis ms':>8} {'ratio':>6}")
    for model in args.model or MODELS:
        ms = {}
        for name, blis in (("numpy", "0"), ("blis", "1")):
            env = {"FLUENCY_BLIS": blis, "OPENBLAS_NUM_THREADS": "1"}
            ms[name] = figure_from_process(_JOB, model, str(args.lists), env=env)
        print(f"{model:10} {ms['numpy']:14.1f} {ms['blis']:8.1f} {ms['numpy'] / ms['blis']:6.2f}")


if __name__ == "__main__":
    main()
