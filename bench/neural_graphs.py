"""Which ONNX graph of SmolLM2 the neural tier runs: speed and agreement with llama.cpp.

The same texts (`--per-file` a development file, sorted by length), one process of one thread,
each graph one text a pass and then packed (texts of similar length, at most 128 padded
tokens a pass), against llama.cpp on the GGUF itself, one text a pass (when `llama_cpp` is
importable). Graphs:

- `q8` and `q4`: the float32 export re-quantised by ONNX Runtime's own `MatMulNBits` quantiser
  (8 and 4 bits, blocks of 32; the embedding table 4 bits), as a user of its tools would;
- `gguf blocks`: the graph `fluency export-neural` makes, every weight the GGUF's own block;
- `gguf blocks, float32 products`: the same with `accuracy_level` 1 (weights expanded to
  float32, inputs not quantised).

`--graphs DIR` holds `model.onnx` and `model.q8.onnx` from `python -m bench.neural_runtimes
--export DIR`; the 4-bit and float32-product graphs are made there on the first run.

    python -m bench.neural_graphs --graphs DIR [--per-file 12]
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from bench._args import parser
from bench._data import SHARED

os.environ["OMP_NUM_THREADS"] = "1"


def _make(graphs: Path, shipped: Path) -> dict[str, Path]:
    import onnx
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

    q4 = graphs / "model.q4.onnx"
    if not q4.is_file():
        q = MatMulNBitsQuantizer(
            str(graphs / "model.onnx"), bits=4, block_size=32, accuracy_level=4
        )
        q.process()
        q = MatMulNBitsQuantizer(
            q.model.model, bits=4, block_size=32, op_types_to_quantize=("Gather",)
        )
        q.process()
        q.model.save_model_to_file(str(q4))
    level1 = graphs / "gguf-blocks-level1.onnx"
    if not level1.is_file():
        if not (shipped / "smollm2.onnx").is_file():
            raise SystemExit(f"{shipped} has no plain graph: fluency export-neural --plain")
        model = onnx.load(str(shipped / "smollm2.onnx"))
        for node in model.graph.node:
            for attr in node.attribute:
                if node.op_type == "MatMulNBits" and attr.name == "accuracy_level":
                    attr.i = 1
        onnx.save(model, str(level1))
    return {
        "q8 (ONNX Runtime's quantiser)": graphs / "model.q8.onnx",
        "q4 (ONNX Runtime's quantiser)": q4,
        "gguf blocks (neural.v2)": shipped / "smollm2.onnx",
        "gguf blocks, float32 products": level1,
    }


def _llama(texts: list[str]) -> tuple[float, list[float]]:
    from bench import neural_tier

    neural_tier._load_v1()
    start = time.process_time()
    sums = neural_tier._v1(texts)
    return time.process_time() - start, sums


def main() -> None:
    import dataclasses
    import importlib.util

    import numpy as np
    import onnxruntime as ort

    from bench.neural_tier import _sample
    from features.neural_lm import NEURAL_ONNX_DIR, load_neural, score_tokens
    from features.resources import Resources

    ap = parser(__doc__)
    ap.add_argument("--graphs", type=Path, required=True)
    ap.add_argument("--dev", default=str(SHARED / "dev"))
    ap.add_argument("--per-file", type=int, default=12)
    args = ap.parse_args()
    texts = sorted(_sample(args.per_file, Path(args.dev)), key=len)
    lm = load_neural(Resources())
    tokens = [lm.tokenize(t) for t in texts]
    print(f"{len(texts)} texts, one process of one thread, load average {os.getloadavg()[0]:.2f}")
    base = None
    if importlib.util.find_spec("llama_cpp"):
        seconds, sums = _llama(texts)
        base = (len(texts) / seconds, np.array(sums))
        print(f"{'llama.cpp, Q4_1, one text a pass':34} {base[0]:6.2f} texts/s")
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    options.enable_cpu_mem_arena = False
    head = "texts/s alone, packed; x llama.cpp; sum vs llama.cpp median / max; packed vs alone"
    print(f"{'graph':34} {head}")
    for name, path in _make(args.graphs, NEURAL_ONNX_DIR).items():
        session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        graph = dataclasses.replace(lm, session=session)
        start = time.process_time()
        alone = score_tokens(graph, tokens, budget=1)
        rate = len(texts) / (time.process_time() - start)
        start = time.process_time()
        packed = score_tokens(graph, tokens, budget=128)
        packed_rate = len(texts) / (time.process_time() - start)
        sums = np.array([x.sum() for x in alone])
        gap = max(float(np.abs(a - b).max()) for a, b in zip(alone, packed, strict=True) if len(a))
        row = f"{name:34} {rate:6.2f} {packed_rate:6.2f}"
        if base is not None:
            diff = np.abs(sums - base[1])
            row += f"  x{rate / base[0]:.2f}  {np.median(diff):.2f} / {diff.max():.1f}"
        print(f"{row}  {gap:.1e}")


if __name__ == "__main__":
    main()
