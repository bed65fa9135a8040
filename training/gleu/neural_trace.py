"""SmolLM2's GGUF traced through transformers' Llama by PyTorch: the reference the graph of
`fluency export-neural` (training/gleu/neural_export.py, built from the GGUF without PyTorch) is
checked against, and how 0.16.0 and before made the neural tier's graph.

1. transformers reads the GGUF (dequantised to float32) and PyTorch exports one pass that takes
   token ids and an attention mask and returns each position's natural-log probability of the
   token that follows it and every token's hidden state after the layers `STATE_LAYERS`;
2. every matrix product is then put back on the GGUF's own blocks: a Q4_1 weight becomes ONNX
   Runtime's 4-bit `MatMulNBits` over the same `q` and `d` (zero point 0) plus the blocks'
   minima times each block's sum of the input; the Q8_0 output matrix becomes 8-bit
   `MatMulNBits` with zero point 128. Every weight is the GGUF's to the bit, found by value
   (`_blocks`), or the trace fails;
3. the token embedding table is looked up from the same Q8_0 blocks (`GatherBlockQuantized`).

The folder written holds `smollm2.onnx`, transformers' tokenizer (`tokenizer.json`) and an
`export.json` the extractor loads it with (no cut graph: every head runs the full pass).
Needs the `neural-export` extra (PyTorch, transformers, accelerate, onnxscript); about a
minute and a half on 2 cores. `bench.neural_runtimes` also times transformers' module itself
(`_torch_model`).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from features.errors import ModelLoadError
from features.resources import NEURAL_ONNX_FILE
from training.gleu.neural_export import MAX_LENGTH, STATE_LAYERS, TOKENIZER_FILE

__all__ = ["trace_onnx"]

BLOCK = 32  # values a block, in Q4_1, Q8_0 and the MatMulNBits made from them
INSTALL = "pip install 'fluency-scorer[neural-export]' (in a checkout: make install-dev)"


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


def trace_onnx(gguf: Path, out: Path) -> Path:
    """Write OUT/smollm2.onnx and OUT/tokenizer.json traced from transformers' Llama (module
    docstring, steps 1-3); returns the graph's path."""
    from features.optional_imports import require

    require("neural-export", "tracing SmolLM2 with PyTorch")
    import torch

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
        _rewrite(plain, out / NEURAL_ONNX_FILE, _blocks(gguf))
    import importlib.metadata as md
    import json

    from scorer.bundle import sha256_file

    card = {  # what the extractor reads (features.neural_lm.load_neural): no cut graph
        "gguf": gguf.name,
        "gguf_sha256": sha256_file(gguf),
        "bos": bos,
        "n_vocab": len(tokenizer),
        "outputs": {"logprobs": "natural log", "hidden": {"layers": list(STATE_LAYERS)}},
        "libraries": {name: md.version(name) for name in ("torch", "transformers", "onnxscript")},
        "builder": "training.gleu.neural_trace",
    }
    (out / "export.json").write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
    return out / NEURAL_ONNX_FILE
