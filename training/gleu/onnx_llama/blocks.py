"""Matrix products and the embedding look-up on the GGUF's own blocks, as ONNX Runtime's
quantised operators: every weight the GGUF's to the bit.

- Q4_1, `d * q + m` a value: `MatMulNBits` (4 bits) over the same `q` and `d` with zero point
  0 gives x·(d q); the minima add x·m, which per block is `m` times the block's sum of x: a
  small float product of the block sums [.., blocks] and the minima [blocks, N].
- Q8_0, `d * q`: `MatMulNBits` (8 bits) over q + 128 with zero point 128.
- The embedding table (Q8_0): `GatherBlockQuantized` looks up a token's row from the blocks.

Inputs are quantised per 32 values of a row (`accuracy_level` 4): a text's values never depend
on the other texts of its batch. ONNX Runtime's own quantiser would round the weights a second
time (`python -m bench.neural_graphs` measures what that costs).
"""

from __future__ import annotations

import numpy as np

from training.gleu.onnx_llama.gguf_file import BLOCK, QuantMatrix
from training.gleu.onnx_llama.graph import GraphBuilder

__all__ = ["embedding", "linear"]

MS = "com.microsoft"


def linear(b: GraphBuilder, x: str, w: QuantMatrix, hint: str, out: str | None = None) -> str:
    """x [..., K] times the matrix whose rows are `w`'s: [..., N]."""
    k, n = w.shape
    blocks = k // BLOCK
    attrs = {"K": k, "N": n, "block_size": BLOCK, "accuracy_level": 4}
    scales = b.const(w.d.reshape(-1).astype(np.float32), f"{hint}_scales")
    if w.kind == "q8_0":
        inputs = (
            x,
            b.const(w.q, f"{hint}_q"),
            scales,
            b.const(np.full(n * blocks, 128, np.uint8), f"{hint}_zero"),
        )
        return b.op("MatMulNBits", *inputs, out=out, domain=MS, bits=8, **attrs)
    packed = (w.q[..., 0::2] | (w.q[..., 1::2] << 4)).astype(np.uint8)  # low nibble first
    inputs = (
        x,
        b.const(packed, f"{hint}_q"),
        scales,
        b.const(np.zeros(n * ((blocks + 1) // 2), np.uint8), f"{hint}_zero"),
    )
    dq = b.op("MatMulNBits", *inputs, domain=MS, bits=4, **attrs)
    sums = b.op(
        "ReduceSum", b.op("Reshape", x, b.ints(0, 0, blocks, BLOCK)), b.ints(-1), keepdims=0
    )
    minima = b.const(np.ascontiguousarray(w.m.T, dtype=np.float32), f"{hint}_min")
    return b.op("Add", dq, b.op("MatMul", sums, minima), out=out)


def embedding(b: GraphBuilder, ids: str, table: QuantMatrix) -> str:
    """The rows of the Q8_0 table [vocab, hidden] for token ids [...]: [..., hidden]."""
    if table.kind != "q8_0":
        raise ValueError(f"the embedding table is {table.kind}; the look-up reads Q8_0 only")
    n, blocks, _ = table.q.shape
    inputs = (
        b.const(table.q.reshape(n, blocks * BLOCK), "embedding_q"),
        ids,
        b.const(table.d.astype(np.float32), "embedding_scales"),
        b.const(np.full(table.d.shape, 128, np.uint8), "embedding_zero"),
    )
    return b.op(
        "GatherBlockQuantized",
        *inputs,
        domain=MS,
        bits=8,
        block_size=BLOCK,
        gather_axis=0,
        quantize_axis=1,
    )
