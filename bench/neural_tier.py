"""The neural tier's cost: texts a second, beside the plain llama.cpp path, and cold start.

1. Texts a second over a sample of the development texts (`--per-file` from each file of
   ../shared/dev; Reuters-like sentences from bench/_data.py when it is absent), `--jobs`
   processes with one thread each, every text new to them:
   - the `neural.v1` extractor as the scorer runs it (features/neural_lm.py: one forward pass a
     text, logits read per step of 128 tokens);
   - `bench/neural_lm.py`'s path in the same run: llama-cpp-python's own `Llama.eval` with every
     position's logits kept (`logits_all`), the way the neural model was first measured;
   - llama.cpp with `--pack` texts packed into one forward pass as separate sequences (what
     the extractor does not do): faster, but is a text's sum then still its own?
   - the ratios, and the largest difference between each path's summed log-probabilities and
     the extractor's (the same model: 0 unless the batch changes the arithmetic).
2. Cold start: in a fresh process, the seconds from nothing to a first score with the `neural`
   bundle (imports, spaCy, Link Grammar, KenLM, the GGUF), beside the default bundle.

    python -m bench.neural_tier [--per-file 60] [--jobs 2] [--pack 8]
"""

from __future__ import annotations

import os
import random
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from bench._args import add_jobs, parser
from bench._data import SHARED, sentences
from bench._timing import figure_from_process, machine

_STATE: dict = {}


def _load_tier() -> None:
    from features.resources import Resources, one_thread_per_process

    one_thread_per_process()
    from features.neural_lm import load_neural

    _STATE["lm"] = load_neural(Resources())


def _tier(texts: list[str]) -> list[float]:
    from features.neural_lm import token_logprobs

    return [float(token_logprobs(_STATE["lm"], t)[1].sum()) for t in texts]


def _load_plain() -> None:
    from bench import neural_lm

    neural_lm._load()


def _plain(texts: list[str]) -> list[float]:
    from bench import neural_lm

    return [total for total, _, _ in neural_lm._score(texts)]


def _load_packed() -> None:
    import llama_cpp

    from features.resources import Resources, one_thread_per_process

    one_thread_per_process()
    from features.neural_lm import CONTEXT, load_neural

    lm = load_neural(Resources())
    params = llama_cpp.llama_context_default_params()
    n = _STATE["pack"]
    params.n_ctx = params.n_batch = params.n_ubatch = CONTEXT * n
    params.n_seq_max, params.kv_unified = n, True
    params.n_threads = params.n_threads_batch = 1
    _STATE["lm"], _STATE["ctx"] = lm, llama_cpp.llama_init_from_model(lm.llama.model, params)


def _packed(texts: list[str]) -> list[float]:
    """Each group of `--pack` texts in one llama_decode call, one sequence id per text."""
    import llama_cpp
    import numpy as np

    from features.neural_lm import target_logprobs

    lm, ctx, n = _STATE["lm"], _STATE["ctx"], _STATE["pack"]
    out = []
    for g in range(0, len(texts), n):
        seqs = [[lm.bos, *lm.tokenize(t)[:500]] for t in texts[g : g + n]]
        total = sum(len(q) for q in seqs)
        llama_cpp.llama_memory_clear(llama_cpp.llama_get_memory(ctx), True)
        batch = llama_cpp.llama_batch_init(total, 0, 1)
        j = 0
        for s, seq in enumerate(seqs):
            for i, token in enumerate(seq):
                batch.token[j], batch.pos[j], batch.n_seq_id[j] = token, i, 1
                batch.seq_id[j][0], batch.logits[j] = s, True
                j += 1
        batch.n_tokens = total
        llama_cpp.llama_decode(ctx, batch)
        logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits(ctx), shape=(total, lm.n_vocab))
        llama_cpp.llama_batch_free(batch)
        j = 0
        for seq in seqs:
            rows = logits[j : j + len(seq) - 1].astype(np.float64)
            out.append(float(target_logprobs(rows, seq[1:]).sum()))
            j += len(seq)
    return out


def _init_packed(n: int) -> None:
    _STATE["pack"] = n
    _load_packed()


def _rate(load, score, texts: list[str], jobs: int, initargs=()) -> tuple[float, list[float]]:
    chunks = [texts[i : i + 24] for i in range(0, len(texts), 24)]
    with ProcessPoolExecutor(jobs, initializer=load, initargs=initargs) as pool:
        list(pool.map(score, [texts[:4]] * jobs))  # loaded and warm in every process
        start = time.perf_counter()
        out = [x for part in pool.map(score, chunks) for x in part]
        return len(texts) / (time.perf_counter() - start), out


def _sample(per_file: int, dev: Path) -> list[str]:
    from scorer.evidence.benchmark_data import read_judged

    files = sorted(dev.glob("*.jsonl"))
    if not files:
        return sentences(per_file * 10, min_words=5, max_words=40)
    out = []
    for path in files:
        texts = sorted(set(read_judged(path).texts))
        random.Random(0).shuffle(texts)
        out += texts[:per_file]
    return out


_COLD = """
import sys, time
start = time.perf_counter()
from scorer import load_scorer
load_scorer(sys.argv[1]).score(["The committee will meet again next week."])
print(time.perf_counter() - start)
"""


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--dev", default=str(SHARED / "dev"))
    ap.add_argument("--per-file", type=int, default=60, help="texts sampled per file")
    add_jobs(ap, 2)
    ap.add_argument("--cold-runs", type=int, default=3, help="fresh processes per bundle")
    ap.add_argument("--pack", type=int, default=8, help="texts a packed forward pass holds")
    args = ap.parse_args()
    texts = _sample(args.per_file, Path(args.dev))
    words = sum(len(t.split()) for t in texts) / len(texts)
    print(machine())
    print(
        f"{len(texts)} texts (mean {words:.1f} words), {args.jobs} processes x 1 thread; "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    tier, tier_sums = _rate(_load_tier, _tier, texts, args.jobs)
    plain, plain_sums = _rate(_load_plain, _plain, texts, args.jobs)
    packed, packed_sums = _rate(_init_packed, _packed, texts, args.jobs, (args.pack,))

    def gap(sums: list[float]) -> float:
        return max(abs(a - b) for a, b in zip(tier_sums, sums, strict=True))

    print(f"{'path':40} {'texts/s':>8} {'x extractor':>12} {'max |sum - extractor|':>22}")
    for name, rate, sums in (
        ("neural.v1 extractor", tier, tier_sums),
        ("bench/neural_lm.py (logits_all)", plain, plain_sums),
        (f"{args.pack} texts packed a pass", packed, packed_sums),
    ):
        print(f"{name:40} {rate:8.2f} {rate / tier:12.2f} {gap(sums):19.1e} nats")
    print(f"\ncold start, seconds to a first score (best of {args.cold_runs} fresh processes):")
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    for bundle in ("default", "neural"):
        runs = [figure_from_process(_COLD, bundle, env=env) for _ in range(args.cold_runs)]
        print(f"  {bundle:8} {min(runs):6.2f} (runs: {', '.join(f'{r:.2f}' for r in runs)})")


if __name__ == "__main__":
    main()
