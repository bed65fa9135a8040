"""The whole graph: token ids and an attention mask in; out, either

- the full pass (`build_llama(llama, layers)`): `logprobs` [texts, tokens - 1], each position's
  natural-log probability of the token that follows it (the logits over the vocabulary never
  leave the graph), and `hidden` [texts, tokens, len(layers), hidden], every token's residual
  stream after each of `layers`;
- or the pass cut after the deepest of `layers` (`pooled=True`): `pooled` [texts, len(layers),
  hidden] float64, each text's states after each layer averaged over its own tokens (not the
  beginning-of-text token in front, nor padding), and nothing above that layer: no output
  matrix, no log-probabilities. The mean is taken in float64, as `features.neural_lm` pools
  the full pass's states, so a text's pooled states are the same from either pass.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from training.gleu.onnx_llama.blocks import embedding, linear
from training.gleu.onnx_llama.gguf_file import GgufLlama
from training.gleu.onnx_llama.graph import GraphBuilder
from training.gleu.onnx_llama.layers import (
    attention_bias,
    decoder_layer,
    positions,
    rms_norm,
    rotary_tables,
)

__all__ = ["LOGPROBS_OUTPUT", "STATES_OUTPUT", "TOKEN_STATES_OUTPUT", "build_llama"]

LOGPROBS_OUTPUT, TOKEN_STATES_OUTPUT, STATES_OUTPUT = "logprobs", "hidden", "pooled"
END = int(np.iinfo(np.int64).max)  # a slice to the end of an axis


def _logprobs(b: GraphBuilder, x: str, llama: GgufLlama, ids: str) -> str:
    """Each position's log-probability of the next token: [texts, tokens - 1]."""
    h = rms_norm(b, x, llama.norm("output_norm.weight"), llama.spec.eps, "output_norm")
    logits = linear(b, h, llama.output_matrix(), "output")
    before = b.op("Slice", logits, b.ints(0), b.ints(-1), b.ints(1), b.ints(1))
    following = b.op("Unsqueeze", b.op("Slice", ids, b.ints(1), b.ints(END), b.ints(1)), b.ints(2))
    picked = b.op("GatherElements", before, following, axis=-1)
    chosen = b.op("Squeeze", picked, b.ints(2))
    total = b.op("ReduceLogSumExp", before, b.ints(-1), keepdims=0)
    return b.op("Sub", chosen, total, out=LOGPROBS_OUTPUT)


def _stack(b: GraphBuilder, states: Sequence[str], out: str | None = None) -> str:
    """[texts, tokens, len(states), hidden] of the per-layer [texts, tokens, hidden]."""
    parts = [b.op("Unsqueeze", s, b.ints(2)) for s in states]
    return b.op("Concat", *parts, axis=2, out=out)


def _pool(b: GraphBuilder, stacked: str, mask: str) -> str:
    """[texts, layers, hidden] float64: the mean over each text's tokens after the first."""
    own = b.op("Cast", b.op("Slice", mask, b.ints(1), b.ints(END), b.ints(1)), to=11)
    values = b.op("Cast", b.op("Slice", stacked, b.ints(1), b.ints(END), b.ints(1)), to=11)
    total = b.op(
        "ReduceSum",
        b.op("Mul", values, b.op("Unsqueeze", own, b.ints(2, 3))),
        b.ints(1),
        keepdims=0,
    )
    count = b.op("Unsqueeze", b.op("ReduceSum", own, b.ints(1), keepdims=1), b.ints(2))
    return b.op("Div", total, count, out=STATES_OUTPUT)


def build_llama(llama: GgufLlama, layers: Sequence[int], *, pooled: bool = False):
    """The onnx.ModelProto of the GGUF's model (module docstring); `layers` count from 1 (the
    residual stream after that many decoder layers)."""
    from onnx import TensorProto, helper

    spec = llama.spec
    if not layers or min(layers) < 1 or max(layers) > spec.n_layers:
        raise ValueError(f"layers must be within 1-{spec.n_layers}, not {list(layers)}")
    b = GraphBuilder()
    ids, mask = "input_ids", "attention_mask"
    x = embedding(b, ids, llama.matrix("token_embd.weight"))
    pos = positions(b, mask)
    tables = (*rotary_tables(b, pos, spec), attention_bias(b, pos, mask))
    depth = max(layers) if pooled else spec.n_layers
    after: dict[int, str] = {}
    for i in range(depth):
        x = decoder_layer(b, x, llama, i, tables)
        after[i + 1] = x
    dims = ["texts", "tokens"]
    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, dims) for n in (ids, mask)]
    picked = [after[k] for k in layers]
    if pooled:
        _pool(b, _stack(b, picked), mask)
        shape = ["texts", len(layers), spec.hidden]
        outputs = [helper.make_tensor_value_info(STATES_OUTPUT, TensorProto.DOUBLE, shape)]
    else:
        _logprobs(b, x, llama, ids)
        _stack(b, picked, out=TOKEN_STATES_OUTPUT)
        shape = ["texts", "tokens", len(layers), spec.hidden]
        outputs = [
            helper.make_tensor_value_info(LOGPROBS_OUTPUT, TensorProto.FLOAT, ["texts", "scored"]),
            helper.make_tensor_value_info(TOKEN_STATES_OUTPUT, TensorProto.FLOAT, shape),
        ]
    return b.model(inputs, outputs)
