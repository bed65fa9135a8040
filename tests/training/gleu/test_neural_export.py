"""`fluency export-neural` builds SmolLM2's graph from the GGUF without PyTorch
(training/gleu/onnx_llama): the same graph as the one PyTorch traced from transformers' Llama
in 0.16.0 (training/gleu/neural_trace.py). Checked three ways:

- against values of the traced graph stored for a few texts (tests/data/neural_traced.json,
  written by `training.gleu.neural_check.reference_values` from the graph `make
  install-neural` traced in 0.16.0): the installed graph's token ids, log-probabilities and
  pooled states;
- slow, with the `neural-export` extra: a fresh trace against a fresh build on development texts
  of every file of ../shared/dev (token ids, log-probabilities within 1e-3 nats, pooled states
  within 1e-4), then every neural head's scores within 1e-4; the stored values again;
- the pieces: the GGUF's blocks dequantise as gguf's own reader does, the query and key rows
  are put back in halves order, the cut graph's pooled states are the full graph's mean.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from features.resources import ARTEFACTS, NEURAL_ONNX_DIR, NEURAL_ONNX_FILE, NEURAL_STATES_FILE
from training.gleu.neural_check import compare, development_texts, head_scores, reference_values

GGUF = ARTEFACTS["neural"][0].default
STORED = Path(__file__).resolve().parents[2] / "data" / "neural_traced.json"
TEXTS = [
    "A coffee shop in the city centre.",
    "The Eagle is a cheap   coffee shop near Burger King, rated 5 out of 5!",
    "Zurich-based UBS said its 1987 net profit rose 12.5% to 1.2bn francs.",
    "Café Müller serves crêpes; naïve diners love it <|im_end|> even so.",
    "the the the the of of of",
    'She said: "I\'ll be there at 10:30," and then\tleft.\n\nNew paragraph here.',
]


def _session(path: Path):
    import onnxruntime as ort

    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])


def _tokenizer(folder: Path):
    from tokenizers import Tokenizer

    return Tokenizer.from_file(str(folder / "tokenizer.json"))


def _int8_by_avx2_alone() -> bool:
    """Whether this CPU has AVX2 but neither AVX-512 nor AVX-VNNI: ONNX Runtime then runs the
    graph's int8 products (`MatMulNBits`, accuracy level 4) through another kernel than the
    one the stored values were written with, and its values differ (on an AMD EPYC with AVX2
    alone: log-probabilities by up to 0.94 nats, pooled states by up to 1.36)."""
    try:
        flags = Path("/proc/cpuinfo").read_text().split()
    except OSError:
        return False
    return "avx2" in flags and not any(f.startswith(("avx512", "avx_vnni")) for f in flags)


def test_the_installed_graph_gives_the_traced_graphs_values():
    stored = json.loads(STORED.read_text(encoding="utf-8"))
    card = json.loads((NEURAL_ONNX_DIR / "export.json").read_text(encoding="utf-8"))
    assert card["builder"] == "training.gleu.onnx_llama", "make install-neural builds it"
    found = reference_values(NEURAL_ONNX_DIR, [row["text"] for row in stored["texts"]])
    diffs = compare(found, stored["texts"])
    assert diffs["ids_equal"] == 1.0
    if _int8_by_avx2_alone() and not (diffs["logprob"] <= 1e-3 and diffs["pooled"] <= 1e-4):
        pytest.skip(f"this CPU's int8 kernel (AVX2 alone) gives other values: {diffs}")
    assert diffs["logprob"] <= 1e-3 and diffs["pooled"] <= 1e-4, diffs


def _graph(folder: Path, plain: str) -> Path:
    """The plain graph if the export kept it (--plain), else its CPU form."""
    path = folder / plain
    return path if path.is_file() else path.with_name(plain.replace(".onnx", ".cpu.onnx"))


def test_the_cut_graph_pools_the_full_graphs_states():
    """A padded batch of three texts: the cut graph's mean over each text's own tokens is the
    full graph's, row by row, and a text's padding and batch change nothing."""
    from features.neural_lm import STATE_LAYER
    from training.gleu.neural_export import STATE_LAYERS

    tokenizer = _tokenizer(NEURAL_ONNX_DIR)
    rows = [[1, *tokenizer.encode(t, add_special_tokens=False).ids] for t in TEXTS[:3]]
    ids = np.zeros((len(rows), max(map(len, rows))), dtype=np.int64)
    mask = np.zeros_like(ids)
    for i, row in enumerate(rows):
        ids[i, : len(row)], mask[i, : len(row)] = row, 1
    full = _session(_graph(NEURAL_ONNX_DIR, NEURAL_ONNX_FILE))
    states = _session(_graph(NEURAL_ONNX_DIR, NEURAL_STATES_FILE))
    pooled = states.run(None, {"input_ids": ids, "attention_mask": mask})[0]
    assert pooled.dtype == np.float64 and pooled.shape == (3, 1, 576)
    at = STATE_LAYERS.index(STATE_LAYER)
    for i, row in enumerate(rows):
        one = np.array([row], dtype=np.int64)
        hidden = full.run(None, {"input_ids": one, "attention_mask": np.ones_like(one)})[1]
        mean = hidden[0, 1:, at].astype(np.float64).mean(0)
        assert np.abs(pooled[i, 0] - mean).max() <= 1e-6


def test_every_matrix_is_on_the_ggufs_blocks():
    """210 Q4_1 products (7 a layer), the Q8_0 output matrix and the Q8_0 embedding table; no
    float matrix product is left but the minima's (one a Q4_1 matrix) and attention's two a
    layer. The cut graph: the 20 layers' products and the table, no output matrix."""
    from training.gleu.onnx_llama import build_llama, read_gguf

    llama = read_gguf(GGUF)
    for layers, pooled, n4, n8 in (((8, 20), False, 210, 1), ((20,), True, 140, 0)):
        graph = build_llama(llama, layers, pooled=pooled).graph
        ops = [n.op_type for n in graph.node]
        bits = [
            next(a.i for a in n.attribute if a.name == "bits")
            for n in graph.node
            if n.op_type == "MatMulNBits"
        ]
        assert (bits.count(4), bits.count(8)) == (n4, n8)
        assert ops.count("GatherBlockQuantized") == 1
        assert ops.count("MatMul") == n4 + 2 * (n4 // 7)
        assert ops.count("ReduceLogSumExp") == (0 if pooled else 1)


def test_blocks_dequantise_as_gguf_reads_them_and_rows_unpermute():
    from gguf import dequantize

    from training.gleu.onnx_llama import read_gguf

    llama = read_gguf(GGUF)
    for name in ("blk.3.ffn_down.weight", "token_embd.weight"):
        tensor = llama.tensors[name]
        expected = dequantize(tensor.data, tensor.tensor_type).reshape(
            llama.matrix(name).q.shape[0], -1
        )
        assert np.array_equal(llama.matrix(name).values(), expected.astype(np.float32)), name
    # Unpermuting: row (h, j, i) of a head is stored row (h, i, j); a permutation, undone by
    # llama.cpp's own permutation (its converter's `permute`) of the rows back.
    spec = llama.spec
    order = spec.unpermute(spec.n_kv_heads)
    assert sorted(order) == list(range(spec.n_kv_heads * spec.head_dim))
    half = spec.head_dim // 2
    rows = np.arange(len(order))
    llama_cpp = rows.reshape(spec.n_kv_heads, 2, half).swapaxes(1, 2).ravel()
    assert np.array_equal(order[llama_cpp], rows)
    q = llama.layer_matrix(0, "attn_k")
    raw = llama.matrix("blk.0.attn_k.weight")
    assert np.array_equal(q.values(), raw.values()[order])


@pytest.mark.slow
def test_the_built_graph_is_the_traced_graph_on_the_development_texts(tmp_path, shared_dir):
    pytest.importorskip("torch", reason="the traced reference needs the neural-export extra")
    pytest.importorskip("transformers", reason="the traced reference needs the neural-export extra")
    from training.gleu.neural_export import export_onnx
    from training.gleu.neural_trace import trace_onnx

    built, traced = tmp_path / "built", tmp_path / "traced"
    export_onnx(GGUF, built)
    trace_onnx(GGUF, traced)
    stored = json.loads(STORED.read_text(encoding="utf-8"))
    again = compare(reference_values(traced, TEXTS), stored["texts"])
    assert again == {"ids_equal": 1.0, "logprob": 0.0, "pooled": 0.0}  # the stored values' source
    texts = development_texts(shared_dir / "dev", per_file=12)
    assert len(texts) > 150
    diffs = compare(reference_values(built, texts), reference_values(traced, texts))
    assert diffs["ids_equal"] == 1.0
    assert diffs["logprob"] <= 1e-3 and diffs["pooled"] <= 1e-4, diffs
    heads = head_scores(built, texts[::4]), head_scores(traced, texts[::4])
    for genre in heads[1]:
        assert np.abs(np.subtract(heads[0][genre], heads[1][genre])).max() <= 1e-4, genre


@pytest.mark.slow
def test_the_export_runs_with_no_pytorch_nor_transformers(tmp_path):
    """`fluency export-neural` in a process where PyTorch, transformers and onnxscript cannot
    be imported (as in an environment with only the `neural` extra)."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "for name in ('torch', 'transformers', 'accelerate', 'onnxscript'):\n"
        "    sys.modules[name] = None\n"
        "from scorer.cli import main\n"
        f"sys.exit(main(['export-neural', '--out', {str(tmp_path)!r}]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    card = json.loads((tmp_path / "export.json").read_text(encoding="utf-8"))
    assert card["builder"] == "training.gleu.onnx_llama" and "torch" not in card["libraries"]
    found = reference_values(tmp_path, TEXTS)
    stored = json.loads(STORED.read_text(encoding="utf-8"))["texts"]
    assert compare(found, stored) == {"ids_equal": 1.0, "logprob": 0.0, "pooled": 0.0}
