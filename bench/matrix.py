"""Which matrix library spaCy's layers should use on this machine: thinc's blis or NumPy's BLAS.

Prints, one thread each, the speed of a matrix product of the shapes spaCy's small English
pipeline multiplies (tokens x 288 by 288 x 288: its tok2vec's maxout layers) with blis (thinc's
default) and with NumPy's BLAS (what the scorer gives spaCy's layers unless FLUENCY_BLIS=1,
features/parsing.py), and then the CPU time of parsing the same sentences with each, in a fresh
process per library (the layers keep the library they were built with).

    python -m bench.matrix [--sentences 2000]
"""

from __future__ import annotations

import json
import os
import tempfile
import time

from bench._args import add_sentences, parser
from bench._data import sentences
from bench._timing import figure_from_process, machine

_PARSE = """
import json, sys, time
from features.parsing import parse, load_nlp
texts = json.load(open(sys.argv[1]))
load_nlp()
parse(texts[:50], lemmas=False)
start = time.process_time()
for i in range(0, len(texts), 20):
    parse(texts[i:i + 20], lemmas=False)
print(time.process_time() - start)
"""


def products(rows: int, repeat: int = 300) -> dict[str, float]:
    """GFLOPS of (rows x 288) @ (288 x 288) in single precision, per library."""
    import blis.py
    import numpy as np
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(0)
    a = rng.standard_normal((rows, 288)).astype("float32")
    b = rng.standard_normal((288, 288)).astype("float32")
    out = {}
    with threadpool_limits(limits=1, user_api="blas"):
        for name, run in (("blis", lambda: blis.py.gemm(a, b)), ("numpy", lambda: a @ b)):
            run()
            start = time.perf_counter()
            for _ in range(repeat):
                run()
            seconds = (time.perf_counter() - start) / repeat
            out[name] = 2 * rows * 288 * 288 / seconds / 1e9
    return out


def main() -> None:
    ap = parser(__doc__)
    add_sentences(ap, 2000)
    args = ap.parse_args()
    print(machine())
    print(f"{'rows':>6} {'blis GFLOPS':>12} {'NumPy GFLOPS':>13}")
    for rows in (20, 200, 400):
        speed = products(rows)
        print(f"{rows:6d} {speed['blis']:12.1f} {speed['numpy']:13.1f}")
    texts = sentences(args.sentences)
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump(texts, fh)
    try:
        seconds = {}
        for name, blis in (("blis (FLUENCY_BLIS=1)", "1"), ("NumPy's BLAS (default)", "0")):
            env = {"FLUENCY_BLIS": blis, "OPENBLAS_NUM_THREADS": "1"}
            seconds[name] = figure_from_process(_PARSE, fh.name, env=env)
    finally:
        os.unlink(fh.name)
    first = next(iter(seconds.values()))
    print(f"\nparse (tok2vec, tagger, parser with move probabilities), {len(texts)} sentences")
    print(f"in batches of 20, after loading: {'library':24} {'CPU s':>6} {'ratio':>6}")
    for name, cpu in seconds.items():
        print(f"{'':33}{name:24} {cpu:6.2f} {cpu / first:6.2f}")


if __name__ == "__main__":
    main()
