"""A Llama GGUF read into numpy: its hyper-parameters (`LlamaSpec`), its norms as float32 and
its matrices as the file's own blocks (`QuantMatrix`), never dequantised.

GGUF block layouts (ggml's `block_q4_1`, `block_q8_0`), 32 values a block along a row:
Q4_1 is 20 bytes, a float16 scale `d`, a float16 minimum `m`, then 16 bytes whose low nibbles
hold values 0-15 and high nibbles values 16-31, each value `d * q + m`; Q8_0 is 34 bytes, a
float16 `d` then 32 signed bytes, each value `d * q`. A GGUF matrix of shape [K, N] (ggml's
order: K values a row) holds N rows: row n is output feature n of the product.

llama.cpp's converter stores the query and key rows of each head interleaved for its rotary
kernel (pairs (i, i + 32) side by side); `LlamaSpec.unpermute` puts them back in the halves
order the rotation here (and transformers') uses. Rows only move: every block stays whole.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["BLOCK", "GgufLlama", "LlamaSpec", "QuantMatrix", "read_gguf"]

BLOCK = 32  # values a block in Q4_1 and Q8_0


@dataclass(frozen=True)
class LlamaSpec:
    """The GGUF's `llama.*` hyper-parameters and the tokens the text is framed with."""

    n_layers: int
    hidden: int
    ffn: int
    n_heads: int
    n_kv_heads: int
    rope_base: float
    eps: float
    n_vocab: int
    bos: int

    @property
    def head_dim(self) -> int:
        return self.hidden // self.n_heads

    def unpermute(self, n_heads: int) -> np.ndarray:
        """Row order that undoes llama.cpp's interleaving of a query or key matrix of
        `n_heads` heads (module docstring): new row (h, j, i) is stored row (h, i, j)."""
        half = self.head_dim // 2
        return np.arange(n_heads * self.head_dim).reshape(n_heads, half, 2).swapaxes(1, 2).ravel()


@dataclass(frozen=True)
class QuantMatrix:
    """A matrix as its GGUF blocks: `kind` "q4_1" or "q8_0"; `d` [N, blocks] float32 scales;
    `m` [N, blocks] float32 minima (Q4_1) or None; `q` [N, blocks, 32] uint8 codes, 0-15
    (Q4_1) or the signed byte + 128 (Q8_0)."""

    kind: str
    d: np.ndarray
    m: np.ndarray | None
    q: np.ndarray

    @property
    def shape(self) -> tuple[int, int]:
        """(K, N): values a row, rows."""
        n, blocks, _ = self.q.shape
        return blocks * BLOCK, n

    def rows(self, order: np.ndarray) -> QuantMatrix:
        """The same blocks with the rows in `order`."""
        m = None if self.m is None else self.m[order]
        return QuantMatrix(self.kind, self.d[order], m, self.q[order])

    def values(self) -> np.ndarray:
        """[N, K] float32, as ggml dequantises: for tests and checks, never for the graph."""
        q = self.q.astype(np.float32)
        if self.kind == "q4_1":
            values = self.d[..., None] * q + self.m[..., None]
        else:
            values = self.d[..., None] * (q - 128)
        return values.astype(np.float32).reshape(self.q.shape[0], -1)


def _blocks(kind: str, raw: np.ndarray) -> QuantMatrix:
    """The blocks of a GGUF matrix's raw bytes [N, bytes a row]."""
    size = 20 if kind == "q4_1" else 34
    raw = np.asarray(raw, dtype=np.uint8).reshape(raw.shape[0], -1, size)
    d = raw[..., 0:2].copy().view(np.float16)[..., 0].astype(np.float32)
    if kind == "q4_1":
        m = raw[..., 2:4].copy().view(np.float16)[..., 0].astype(np.float32)
        packed = raw[..., 4:20]
        return QuantMatrix(kind, d, m, np.concatenate([packed & 15, packed >> 4], axis=-1))
    signed = raw[..., 2:34].copy().view(np.int8)
    return QuantMatrix(kind, d, None, (signed.astype(np.int16) + 128).astype(np.uint8))


@dataclass
class GgufLlama:
    """A Llama GGUF: its `spec`, `fields` (metadata by key, decoded) and tensors by name."""

    spec: LlamaSpec
    fields: dict[str, Any]
    tensors: dict[str, Any]  # name -> gguf.ReaderTensor

    def norm(self, name: str) -> np.ndarray:
        """A float32 vector (an RMSNorm's weight)."""
        return np.asarray(self.tensors[name].data, dtype=np.float32).copy()

    def matrix(self, name: str) -> QuantMatrix:
        """A matrix as its blocks; a ValueError for any type but Q4_1 and Q8_0."""
        from gguf import GGMLQuantizationType

        tensor = self.tensors[name]
        kind = {GGMLQuantizationType.Q4_1: "q4_1", GGMLQuantizationType.Q8_0: "q8_0"}.get(
            tensor.tensor_type
        )
        if kind is None:
            raise ValueError(f"{name} is {tensor.tensor_type.name}; only Q4_1 and Q8_0 are read")
        return _blocks(kind, tensor.data)

    def layer_matrix(self, layer: int, part: str) -> QuantMatrix:
        """Layer `layer`'s matrix `part` (attn_q, attn_k, attn_v, attn_output, ffn_gate,
        ffn_up, ffn_down), query and key rows in halves order (module docstring)."""
        found = self.matrix(f"blk.{layer}.{part}.weight")
        if part == "attn_q":
            return found.rows(self.spec.unpermute(self.spec.n_heads))
        if part == "attn_k":
            return found.rows(self.spec.unpermute(self.spec.n_kv_heads))
        return found

    def output_matrix(self) -> QuantMatrix:
        """The output matrix; the embedding table when the model ties them (SmolLM2 does)."""
        tied = "output.weight" not in self.tensors
        return self.matrix("token_embd.weight" if tied else "output.weight")


def read_gguf(path: Path) -> GgufLlama:
    """The GGUF at `path`; a ValueError when it is not a Llama."""
    from gguf import GGUFReader

    reader = GGUFReader(str(path))
    fields = {key: field.contents() for key, field in reader.fields.items()}
    arch = fields.get("general.architecture")
    if arch != "llama":
        raise ValueError(f"{path} holds a {arch!r} model; the builder makes Llama graphs only")

    def get(key: str):
        return fields[f"llama.{key}"]

    spec = LlamaSpec(
        n_layers=int(get("block_count")),
        hidden=int(get("embedding_length")),
        ffn=int(get("feed_forward_length")),
        n_heads=int(get("attention.head_count")),
        n_kv_heads=int(get("attention.head_count_kv")),
        rope_base=float(get("rope.freq_base")),
        eps=float(get("attention.layer_norm_rms_epsilon")),
        n_vocab=len(fields["tokenizer.ggml.tokens"]),
        bos=int(fields["tokenizer.ggml.bos_token_id"]),
    )
    return GgufLlama(spec, fields, {t.name: t for t in reader.tensors})
