"""SmolLM2's tokenizer made from the GGUF's vocabulary and merges with `tokenizers`.

The GGUF says `tokenizer.ggml.model` "gpt2": byte-level BPE. Built as transformers builds it
from a GGUF (its `GGUFGPTConverter`): the GPT-2 byte-level pre-tokenizer (its regular
expression, no space added in front), BPE over the merges in their rank order, a byte-level
decoder, and every token of type 3 (control: `<|endoftext|>`, `<|im_start|>`...) added as a
special token, never split. No beginning-of-text token is added here (the GGUF says
add_bos_token false; `features.neural_lm` puts it in front itself).
"""

from __future__ import annotations

from typing import Any

__all__ = ["CONTROL", "gguf_tokenizer"]

CONTROL = 3  # llama.cpp's token type of control tokens


def gguf_tokenizer(fields: dict[str, Any]):
    """A tokenizers.Tokenizer from the GGUF's `tokenizer.ggml.*` fields; a ValueError for a
    tokenizer model other than byte-level BPE."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, processors

    kind = fields.get("tokenizer.ggml.model")
    if kind != "gpt2":
        raise ValueError(f"the GGUF's tokenizer is {kind!r}; only byte-level BPE (gpt2) is built")
    tokens = list(fields["tokenizer.ggml.tokens"])
    merges = [tuple(m.split(" ", 1)) for m in fields["tokenizer.ggml.merges"]]
    vocab = {token: i for i, token in enumerate(tokens)}
    bpe = models.BPE(vocab, merges, fuse_unk=False, byte_fallback=False)
    tokenizer = Tokenizer(bpe)
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.post_processor = processors.TemplateProcessing(single="$A", pair="$A $B:1")
    types = list(fields.get("tokenizer.ggml.token_type") or ())
    control = [t for t, kind in zip(tokens, types, strict=False) if kind == CONTROL]
    tokenizer.add_special_tokens([AddedToken(t, normalized=False, special=True) for t in control])
    return tokenizer
