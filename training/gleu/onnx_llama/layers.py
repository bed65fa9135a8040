"""A Llama decoder layer's pieces as ONNX nodes, in the order of operations transformers'
`LlamaForCausalLM` does them (so ONNX Runtime fuses and rounds them alike):
RMSNorm, rotary positions, grouped-query attention under a causal and padding mask, and the
SwiGLU feed-forward, each wrapped in its residual connection.
"""

from __future__ import annotations

import numpy as np

from training.gleu.onnx_llama.blocks import linear
from training.gleu.onnx_llama.gguf_file import GgufLlama
from training.gleu.onnx_llama.graph import GraphBuilder

__all__ = ["attention_bias", "decoder_layer", "positions", "rms_norm", "rotary_tables"]

LOWEST = np.float32(np.finfo(np.float32).min)  # what a masked score gets before the softmax


def rms_norm(b: GraphBuilder, x: str, weight: np.ndarray, eps: float, hint: str) -> str:
    """weight * x / sqrt(mean(x²) + eps) over the last axis."""
    mean = b.op("ReduceMean", b.op("Pow", x, b.const(np.float32(2))), b.ints(-1), keepdims=1)
    scale = b.op("Reciprocal", b.op("Sqrt", b.op("Add", mean, b.const(np.float32(eps)))))
    return b.op("Mul", b.const(weight, f"{hint}_weight"), b.op("Mul", x, scale))


def positions(b: GraphBuilder, ids: str) -> str:
    """0, 1, ... for the tokens of a row: [seq] int64."""
    seq = b.op("Squeeze", b.op("Shape", ids, start=1, end=2), b.ints(0))
    return b.op("Range", b.const(np.int64(0)), seq, b.const(np.int64(1)))


def attention_bias(b: GraphBuilder, pos: str, mask: str) -> str:
    """[batch, 1, seq, seq]: 0 where a token may attend (an earlier or the same position, not
    padding), the lowest float32 elsewhere."""
    causal = b.op(
        "LessOrEqual", b.op("Unsqueeze", pos, b.ints(0)), b.op("Unsqueeze", pos, b.ints(1))
    )
    keys = b.op("Unsqueeze", b.op("Cast", mask, to=9), b.ints(1, 2))  # to bool
    allowed = b.op("And", causal, keys)
    return b.op("Where", allowed, b.const(np.float32(0)), b.const(LOWEST))


def rotary_tables(b: GraphBuilder, pos: str, spec) -> tuple[str, str]:
    """(cos, sin) [1, 1, seq, head_dim] of the positions; each angle repeated in both halves."""
    dim = spec.head_dim
    # transformers' float32 arithmetic, to the bit: the exponent in float32, the power rounded
    # once to float32, then its reciprocal in float32 (a power taken in float32 is off by an ulp
    # in some frequencies, and every score with it).
    exponent = np.arange(0, dim, 2, dtype=np.float32) / np.float32(dim)
    power = (spec.rope_base ** exponent.astype(np.float64)).astype(np.float32)
    inv_freq = np.float32(1) / power
    at = b.op("Cast", b.op("Unsqueeze", pos, b.ints(0, 2)), to=1)  # [1, seq, 1] float
    freqs = b.op("Mul", at, b.const(inv_freq, "inv_freq"))
    angles = b.op("Concat", freqs, freqs, axis=-1)
    cos = b.op("Unsqueeze", b.op("Cos", angles), b.ints(1))
    sin = b.op("Unsqueeze", b.op("Sin", angles), b.ints(1))
    return cos, sin


def _heads(b: GraphBuilder, x: str, dim: int) -> str:
    """[batch, seq, heads * dim] -> [batch, heads, seq, dim]."""
    return b.op("Transpose", b.op("Reshape", x, b.ints(0, 0, -1, dim)), perm=[0, 2, 1, 3])


def _rotate(b: GraphBuilder, x: str, cos: str, sin: str, half: int) -> str:
    """x cos + rotate_half(x) sin, rotate_half(x) = (-x2, x1) of the halves x1, x2."""
    first = b.op("Slice", x, b.ints(0), b.ints(half), b.ints(3), b.ints(1))
    second = b.op("Slice", x, b.ints(half), b.ints(np.iinfo(np.int64).max), b.ints(3), b.ints(1))
    turned = b.op("Concat", b.op("Neg", second), first, axis=-1)
    return b.op("Add", b.op("Mul", x, cos), b.op("Mul", turned, sin))


def _repeat_kv(b: GraphBuilder, x: str, n_rep: int, n_heads: int, dim: int) -> str:
    """[batch, kv heads, seq, dim] -> [batch, kv heads * n_rep, seq, dim], each kv head
    serving the `n_rep` query heads after it."""
    wide = b.op("Expand", b.op("Unsqueeze", x, b.ints(2)), b.ints(1, 1, n_rep, 1, 1))
    return b.op("Reshape", wide, b.ints(0, n_heads, -1, dim))


def _attention(b: GraphBuilder, h: str, llama: GgufLlama, i: int, tables: tuple) -> str:
    spec, dim = llama.spec, llama.spec.head_dim
    cos, sin, bias = tables
    q = _heads(b, linear(b, h, llama.layer_matrix(i, "attn_q"), f"l{i}_q"), dim)
    k = _heads(b, linear(b, h, llama.layer_matrix(i, "attn_k"), f"l{i}_k"), dim)
    v = _heads(b, linear(b, h, llama.layer_matrix(i, "attn_v"), f"l{i}_v"), dim)
    q, k = _rotate(b, q, cos, sin, dim // 2), _rotate(b, k, cos, sin, dim // 2)
    n_rep = spec.n_heads // spec.n_kv_heads
    k = _repeat_kv(b, k, n_rep, spec.n_heads, dim)
    v = _repeat_kv(b, v, n_rep, spec.n_heads, dim)
    scores = b.op("MatMul", q, b.op("Transpose", k, perm=[0, 1, 3, 2]))
    scaled = b.op("Add", b.op("Mul", scores, b.const(np.float32(dim**-0.5))), bias)
    mixed = b.op("MatMul", b.op("Softmax", scaled, axis=-1), v)
    joined = b.op("Reshape", b.op("Transpose", mixed, perm=[0, 2, 1, 3]), b.ints(0, 0, -1))
    return linear(b, joined, llama.layer_matrix(i, "attn_output"), f"l{i}_o")


def _feed_forward(b: GraphBuilder, h: str, llama: GgufLlama, i: int) -> str:
    gate = linear(b, h, llama.layer_matrix(i, "ffn_gate"), f"l{i}_gate")
    silu = b.op("Mul", gate, b.op("Sigmoid", gate))
    up = linear(b, h, llama.layer_matrix(i, "ffn_up"), f"l{i}_up")
    return linear(b, b.op("Mul", silu, up), llama.layer_matrix(i, "ffn_down"), f"l{i}_down")


def decoder_layer(b: GraphBuilder, x: str, llama: GgufLlama, i: int, tables: tuple) -> str:
    """Layer `i` on the residual stream x [batch, seq, hidden]; `tables` (cos, sin, bias)."""
    eps = llama.spec.eps
    h = rms_norm(b, x, llama.norm(f"blk.{i}.attn_norm.weight"), eps, f"l{i}_attn_norm")
    x = b.op("Add", x, _attention(b, h, llama, i, tables))
    h = rms_norm(b, x, llama.norm(f"blk.{i}.ffn_norm.weight"), eps, f"l{i}_ffn_norm")
    return b.op("Add", x, _feed_forward(b, h, llama, i), out=f"layer{i + 1}")
