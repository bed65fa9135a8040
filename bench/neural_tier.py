"""The neural tier's cost: texts a second against llama.cpp's one-text loops, and cold start.

1. Texts a second over a sample of the development texts (`--per-file` from each file of
   ../shared/dev; Reuters-like sentences from bench/_data.py when it is absent), `--jobs`
   processes with one thread each, every text new to them, tasks of 24 texts in file order:
   - `neural.v2` (features/neural_lm.py: ONNX Runtime) with texts of similar length packed into
     passes of at most 256 padded tokens (as it runs on a GPU);
   - the same, one text a pass (as it runs on the CPU: the faster here);
   - llama.cpp on the same GGUF, one text at a time, two ways (when `llama_cpp` is importable:
     `pip install llama-cpp-python==0.3.36`, a ten-minute compile): its own loop,
     `Llama.eval` with every position's logits kept (`bench/neural_lm.py`, how the model was
     first measured), and 0.11.0's `neural.v1` path (`llama_decode` in steps of 128 tokens,
     logits read a step at a time), the faster of the two;
   - the same, one text a pass, with the states (`neural.v2` and `neural_states.v1` from the
     same passes: the graph as installed), against `neural.v2` alone on a graph of the
     log-probabilities alone, cut from the installed one in this run (`onnx.utils.
     extract_model`, then ONNX Runtime's CPU optimisations as the export saves them): what the
     states cost, in time, memory and cold start, and that the log-probabilities are the same;
   - ratios to each, the largest difference between a text's summed log-probability packed
     and alone (the batch-independence the extractor promises: 0), and how far the runtimes'
     sums are apart (the same weights; activations are rounded differently);
   - each worker's memory after its last task (PSS and peak RSS, MiB).
2. The bundle end to end (`--against REV`): texts a second through `FluencyScorer.score` with
   each head of the installed `neural` bundle, beside the same bundle with its card (and heads'
   report) as revision REV of this repository shipped them, in the same run, one process, the
   two alternated chunk by chunk, each head on its own share of the texts (new to both
   bundles): what a change of head costs a text, with a 95% bootstrap interval over the chunks.
3. Cold start: in a fresh process, the seconds from nothing to a first score with the `neural`
   bundle (imports, spaCy, Link Grammar, KenLM, the graph), beside the default bundle, and
   beside the neural bundle loading the plain graph and optimising it as it loads (what the
   loader did before the export saved the CPU form: training/gleu/neural_export.py, step 4).
   `--cold-only` runs this part alone.

    python -m bench.neural_tier [--per-file 60] [--jobs 2] [--cold-only] [--cold-runs 3]
        [--against 0.14.0's commit] [--heads-only]
"""

from __future__ import annotations

import os
import random
import statistics
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from bench._args import add_jobs, parser
from bench._data import SHARED, sentences
from bench._timing import figure_from_process, machine

_STATE: dict = {}
_STEP = 128  # neural.v1's tokens a llama_decode call


def _load_tier(folder: str | None = None) -> None:
    from features.resources import Resources, one_thread_per_process

    one_thread_per_process()
    from features.neural_lm import load_neural

    _STATE["lm"] = load_neural(Resources(neural_onnx_dir=folder))


def _with_states(texts: list[str]) -> list[float]:
    """Each text's summed log-probability, its pooled states read from the same pass (one
    text a pass), as `neural.v2` and `neural_states.v1` extract them together."""
    from features.neural_lm import _scored

    lm = _STATE["lm"]
    return [float(lp.sum()) for lp, _ in _scored(lm, [lm.tokenize(t) for t in texts])]


def logprobs_only(folder: Path) -> Path:
    """`folder` made a copy of the installed export whose graphs return the log-probabilities
    alone (the graph before the states): the plain graph cut to that output, its CPU form
    optimised as `fluency export-neural` saves it."""
    import json
    import shutil

    import onnx.utils

    from features.resources import NEURAL_ONNX_CPU_FILE, NEURAL_ONNX_DIR, NEURAL_ONNX_FILE
    from training.gleu.neural_export import EXPORT_CARD, TOKENIZER_FILE, optimise_for_cpu

    if not (NEURAL_ONNX_DIR / NEURAL_ONNX_FILE).is_file():
        raise SystemExit(f"{NEURAL_ONNX_DIR} has no plain graph: fluency export-neural --plain")
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(NEURAL_ONNX_DIR / TOKENIZER_FILE, folder / TOKENIZER_FILE)
    onnx.utils.extract_model(
        str(NEURAL_ONNX_DIR / NEURAL_ONNX_FILE),
        str(folder / NEURAL_ONNX_FILE),
        ["input_ids", "attention_mask"],
        ["logprobs"],
    )
    card = json.loads((NEURAL_ONNX_DIR / EXPORT_CARD).read_text())
    card.pop("outputs", None)
    cpu = optimise_for_cpu(folder / NEURAL_ONNX_FILE, folder / NEURAL_ONNX_CPU_FILE)
    card["cpu_graph"] = {**card.get("cpu_graph", {}), **cpu}
    (folder / EXPORT_CARD).write_text(json.dumps(card))
    return folder


def _tier(texts: list[str], budget: int | None = None) -> list[float]:
    from features.neural_lm import _BATCH_TOKENS, score_tokens

    lm = _STATE["lm"]
    scored = score_tokens(lm, [lm.tokenize(t) for t in texts], budget or _BATCH_TOKENS)  # packed
    return [float(x.sum()) for x in scored]


def _tier_alone(texts: list[str]) -> list[float]:
    return _tier(texts, budget=1)


def _load_plain() -> None:
    from bench import neural_lm

    neural_lm._load()


def _plain(texts: list[str]) -> list[float]:
    from bench import neural_lm

    return [total for total, _, _ in neural_lm._score(texts)]


def _load_v1() -> None:
    import llama_cpp

    from features.resources import GGUF_NAME, GGUF_PACKAGE, package_file

    llm = llama_cpp.Llama(
        model_path=str(package_file(GGUF_PACKAGE, GGUF_NAME)),
        n_ctx=512,
        n_batch=_STEP,
        n_ubatch=_STEP,
        n_threads=1,
        n_threads_batch=1,
        logits_all=False,
        verbose=False,
    )
    _STATE["llm"] = llm


def _v1(texts: list[str]) -> list[float]:
    """0.11.0's `neural.v1`: a text a pass, the memory cleared before it, logits read per step
    of 128 tokens, log-softmax in float64 (texts capped at 511 tokens here)."""
    import llama_cpp
    from scipy.special import logsumexp

    llm = _STATE["llm"]
    ctx, n_vocab, out = llm.ctx, llm.n_vocab(), []
    for text in texts:
        tokens = llm.tokenize(" ".join(text.split()).encode("utf-8"), add_bos=False)[:511]
        sequence = [llm.token_bos(), *tokens]
        llama_cpp.llama_memory_clear(llama_cpp.llama_get_memory(ctx), True)
        batch = llama_cpp.llama_batch_init(_STEP, 0, 1)
        total = 0.0
        for start in range(0, len(sequence) - 1, _STEP):
            step = sequence[start : start + _STEP]
            for i, token in enumerate(step):
                batch.token[i], batch.pos[i], batch.n_seq_id[i] = token, start + i, 1
                batch.seq_id[i][0], batch.logits[i] = 0, True
            batch.n_tokens = len(step)
            llama_cpp.llama_decode(ctx, batch)
            logits = np.ctypeslib.as_array(
                llama_cpp.llama_get_logits(ctx), shape=(len(step), n_vocab)
            ).astype(np.float64)
            targets = sequence[start + 1 : start + 1 + len(step)]
            rows = logits[: len(targets)]
            total += float((rows[np.arange(len(targets)), targets] - logsumexp(rows, axis=1)).sum())
        llama_cpp.llama_batch_free(batch)
        out.append(total)
    return out


def _memory(_) -> tuple[int, float, float]:
    """(pid, PSS, peak RSS) of the worker that runs it, MiB."""
    text = Path("/proc/self/smaps_rollup").read_text() + Path("/proc/self/status").read_text()
    kib = {x.split(":")[0]: int(x.split()[1]) for x in text.splitlines() if x.endswith("kB")}
    time.sleep(0.2)  # so that every worker takes one
    return os.getpid(), kib["Pss"] / 1024, kib["VmHWM"] / 1024


def _rate(load, score, texts: list[str], jobs: int) -> tuple[float, list[float], list]:
    chunks = [texts[i : i + 24] for i in range(0, len(texts), 24)]
    with ProcessPoolExecutor(jobs, initializer=load) as pool:
        list(pool.map(score, [texts[:4]] * jobs))  # loaded and warm in every process
        start = time.perf_counter()
        out = [x for part in pool.map(score, chunks) for x in part]
        rate = len(texts) / (time.perf_counter() - start)
        memory = {pid: (pss, peak) for pid, pss, peak in pool.map(_memory, range(jobs))}
    return rate, out, list(memory.values())


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
if sys.argv[2:] == ["plain"]:  # the plain graph, optimised at load
    import features.neural_lm as neural
    neural._graph = lambda ort, folder, card, device, options, plain=neural.NEURAL_ONNX_FILE: (
        folder / plain)  # needs fluency export-neural --plain
from scorer import load_scorer
if sys.argv[2:3] == ["folder"]:  # the graph without the states, under the bundle as 0.12.1
    import pathlib                # shipped it: no head reads them
    import features.neural_lm as neural
    import scorer.scoring as scoring
    neural.NEURAL_ONNX_DIR = pathlib.Path(sys.argv[3])
    read = scoring.read_card
    def without_states(*args, **kwargs):
        folder, card = read(*args, **kwargs)
        card.pop("head_features", None)
        card["heads"] = {
            g: h for g, h in card["heads"].items()
            if not any(c.startswith("neural_states") for c in h["inputs"])
        }
        return folder, card
    scoring.read_card = without_states
load_scorer(sys.argv[1]).score(["The committee will meet again next week."])
print(time.perf_counter() - start)
"""


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--dev", default=str(SHARED / "dev"))
    ap.add_argument("--per-file", type=int, default=60, help="texts sampled per file")
    add_jobs(ap, 2)
    ap.add_argument("--cold-runs", type=int, default=3, help="fresh processes per bundle")
    ap.add_argument("--cold-only", action="store_true", help="only the cold starts")
    ap.add_argument("--against", help="a revision whose neural card the heads are timed beside")
    ap.add_argument("--heads-only", action="store_true", help="only the heads (with --against)")
    args = ap.parse_args()
    print(machine())
    import tempfile

    tmp = tempfile.TemporaryDirectory()
    if args.against and not args.cold_only:
        _heads(args, Path(tmp.name))
    if args.heads_only:
        return
    without = logprobs_only(Path(tmp.name) / "logprobs-only")
    if not args.cold_only:
        _rates(args, without)
    print(f"\ncold start, seconds to a first score ({args.cold_runs} fresh processes each):")
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    cases = {
        "default": ("default",),
        "neural": ("neural",),
        "neural, plain graph": ("neural", "plain"),
        "neural, no states": ("neural", "folder", str(without)),
    }
    runs: dict[str, list[float]] = {case: [] for case in cases}
    for _ in range(args.cold_runs):  # alternated: the machine's speed drifts
        for case, argv in cases.items():
            runs[case].append(figure_from_process(_COLD, *argv, env=env))
    print(f"  {'':20} {'best':>6} {'median':>6}")
    for case, times in runs.items():
        print(
            f"  {case:20} {min(times):6.2f} {statistics.median(times):6.2f} "
            f"(runs: {', '.join(f'{r:.2f}' for r in times)})"
        )


def _rates(args, without: Path) -> None:
    import importlib.util

    import numpy as np
    from scipy.stats import spearmanr

    texts = _sample(args.per_file, Path(args.dev))
    words = sum(len(t.split()) for t in texts) / len(texts)
    print(
        f"{len(texts)} texts (mean {words:.1f} words), {args.jobs} processes x 1 thread; "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    from functools import partial

    paths = {
        "neural.v2 (ONNX Runtime, packed)": (_load_tier, _tier),
        "neural.v2, one text a pass": (_load_tier, _tier_alone),
        "neural.v2 + states, one a pass": (_load_tier, _with_states),
        "neural.v2, graph without states": (partial(_load_tier, str(without)), _tier_alone),
    }
    if importlib.util.find_spec("llama_cpp"):
        paths["llama.cpp, Llama.eval loop"] = (_load_plain, _plain)
        paths["llama.cpp, neural.v1's loop (0.11.0)"] = (_load_v1, _v1)
    else:
        print("llama_cpp is not importable: no llama.cpp rows (pip install llama-cpp-python)")
    results = {name: _rate(load, score, texts, args.jobs) for name, (load, score) in paths.items()}
    base = next(iter(results.values()))[1]
    llama = [r[0] for name, r in results.items() if name.startswith("llama")]
    print(
        f"{'path':38} {'texts/s':>8} {'/ v2 packed':>11} {'v2 packed /':>11} "
        f"{'sum vs v2 packed: max':>22} {'median':>7} {'rho':>8}  PSS, peak RSS MiB"
    )
    for name, (rate, sums, memory) in results.items():
        gap = np.abs(np.array(sums) - np.array(base))
        rho = spearmanr(sums, base)[0]
        mem = ", ".join(f"{pss:.0f}/{peak:.0f}" for pss, peak in memory)
        print(
            f"{name:38} {rate:8.2f} {rate / results[next(iter(results))][0]:11.2f} "
            f"{results[next(iter(results))][0] / rate:11.2f} {gap.max():19.2e} nats "
            f"{np.median(gap):7.3f} {rho:8.5f}  {mem}"
        )
    states, plain = (
        results["neural.v2 + states, one a pass"],
        results["neural.v2, graph without states"],
    )
    print(
        f"the states' cost: x{plain[0] / states[0]:.3f} the time a text of neural.v2 alone "
        f"(the graph without states, same run); sums apart by at most "
        f"{np.abs(np.array(states[1]) - np.array(plain[1])).max():.2e} nats"
    )
    if llama:
        for name in list(results)[:2]:
            print(f"{name} over the faster llama.cpp loop: x{results[name][0] / max(llama):.2f}")


def _bundle_at(revision: str, tmp: Path) -> Path:
    """A copy of the installed neural bundle whose card and heads' report are `revision`'s."""
    import shutil
    import subprocess

    from features.resources import MODELS_DIR

    out = tmp / f"neural-{revision[:12]}"
    shutil.copytree(MODELS_DIR / "neural", out)
    for name in ("card.json", "heads_report.json"):
        shown = subprocess.run(
            ["git", "show", f"{revision}:models/neural/{name}"],
            capture_output=True,
            check=False,
            cwd=Path(__file__).resolve().parent.parent,
        )
        if shown.returncode == 0:
            (out / name).write_bytes(shown.stdout)
    return out


def _heads(args, tmp: Path) -> None:
    """Each head's time a text now against `--against`'s, paired: its share of the texts in
    chunks of four, each chunk scored by both bundles in turn (the first to go alternates), so
    that a chunk's length and the machine's moment are the same for both; the ratio of the
    summed times with a 95% bootstrap interval over the chunks."""
    from scorer import load_scorer

    texts = _sample(args.per_file, Path(args.dev))
    then = load_scorer(_bundle_at(args.against, tmp), models_dir=tmp)
    now = load_scorer("neural")
    then.score(texts[:2])
    now.score(texts[:2])
    genres = sorted(set(now.card["heads"]) & set(then.card["heads"]))
    share = [texts[k :: len(genres)] for k in range(len(genres))]
    print(f"\nend to end, {len(texts)} texts, each head its share, now and at {args.against}:")
    print(f"  {'head':14} {'texts':>5} {'now s':>8} {'then s':>8} {'now / then time [95%]':>24}")
    rng = np.random.default_rng(0)
    every = []
    for genre, mine in zip(genres, share, strict=True):
        times = []
        for k, at in enumerate(range(0, len(mine), 4)):
            chunk, took = mine[at : at + 4], {}
            pair = [("now", now), ("then", then)]
            for name, scorer in pair if k % 2 == 0 else pair[::-1]:
                start = time.perf_counter()
                scorer.score(chunk, genre=genre)
                took[name] = time.perf_counter() - start
            times.append((took["now"], took["then"]))
        every += times
        print(f"  {genre:14} {len(mine):5} " + _ratio(np.array(times), rng))
    print(f"  {'all':14} {len(texts):5} " + _ratio(np.array(every), rng))


def _ratio(times: np.ndarray, rng, draws: int = 2000) -> str:
    """Summed seconds now and then, and now / then with a bootstrap interval over the rows."""
    picks = rng.integers(0, len(times), (draws, len(times)))
    ratios = times[picks, 0].sum(1) / times[picks, 1].sum(1)
    low, high = np.percentile(ratios, [2.5, 97.5])
    now, then = times.sum(0)
    return f"{now:8.2f} {then:8.2f} {now / then:10.3f} [{low:.3f}, {high:.3f}]"


if __name__ == "__main__":
    main()
