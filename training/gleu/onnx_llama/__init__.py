"""SmolLM2's GGUF as an ONNX graph, built from the file's own tensors and metadata, no PyTorch.

A Llama (`model.build_llama`) from the GGUF's hyper-parameters and weights (`gguf_file`), made
of small pieces (`layers`: the embedding look-up, RMSNorm, rotary positions, grouped-query
attention under the padding mask, the SwiGLU feed-forward; `blocks`: every matrix product on the
GGUF's own Q4_1 and Q8_0 blocks as ONNX Runtime's `MatMulNBits`), written with `onnx.helper`
through one small builder (`graph`). The tokenizer is made from the GGUF's vocabulary and merges
(`tokenizer`). `fluency export-neural` (training/gleu/neural_export.py) writes what these build.
"""

from training.gleu.onnx_llama.gguf_file import GgufLlama, LlamaSpec, read_gguf
from training.gleu.onnx_llama.model import STATES_OUTPUT, build_llama
from training.gleu.onnx_llama.tokenizer import gguf_tokenizer

__all__ = [
    "STATES_OUTPUT",
    "GgufLlama",
    "LlamaSpec",
    "build_llama",
    "gguf_tokenizer",
    "read_gguf",
]
