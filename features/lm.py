"""Language-model signals: how probable an n-gram model of fluent text finds the sentence.

The model is a KenLM n-gram model (modified Kneser-Ney) estimated by `fluency train-lm` from the
training corpus; here it is only queried, with the `kenlm` module. The folder it lives in holds
`lm.binary`, `unigrams.tsv` (the same model's 1-gram log10 probabilities, for SLOR) and
`card.json` (whether it was trained lower-cased; the query follows suit).

Every sentence is scored as its spaCy tokens joined by spaces, with `<s>` before and `</s>` after:
the end-of-sentence event counts, since stopping mid-phrase is a disfluency. So a sentence of n
tokens has n + 1 scored events, and the per-event averages below divide by n + 1 (never by zero:
an empty text is just `</s>`). All log-probabilities are base 10, as KenLM gives them.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from features.errors import ModelLoadError
from features.registry import feature
from features.resources import ARTEFACTS, LM_CARD_FILE
from features.sentence import Sentence

__all__ = [
    "DEFAULT_LM",
    "TokenLogprob",
    "lm_events",
    "lm_features",
    "query_tokens",
    "query_words",
]

_LM, _UNIGRAMS = ARTEFACTS["lm"]
DEFAULT_LM = _LM.default
_SPECIAL = {"<s>", "</s>", "<unk>"}  # KenLM's own symbols: a text token spelled so is unknown

NAMES = ("mean_logprob", "min_logprob", "oov_rate", "slor", "ngram_ratio")


@dataclass
class _LanguageModel:
    model: Any  # kenlm.Model
    unigrams: dict[str, float]  # word -> log10 p(word); "<unk>" for unseen words
    lowercase: bool


def _load(resources) -> _LanguageModel:
    path, unigram_path = _LM.path(resources), _UNIGRAMS.path(resources)
    make = f"make it with: fluency train-lm --corpus CORPUS --out {path.parent}"
    if not path.is_file():
        raise ModelLoadError(f"no language model at {path}; {make}")
    if not unigram_path.is_file():
        raise ModelLoadError(f"no unigram file at {unigram_path} (needed for SLOR); {make}")
    try:
        import kenlm
    except ImportError as exc:
        raise ModelLoadError("the kenlm module is not installed: pip install camel-kenlm") from exc
    try:
        model = kenlm.Model(str(path))
    except (OSError, RuntimeError) as exc:
        raise ModelLoadError(f"cannot load the language model {path}: {exc}") from exc
    unigrams = {}
    with unigram_path.open(encoding="utf-8") as fh:
        for line in fh:
            word, _, value = line.rstrip("\n").rpartition("\t")
            unigrams[word] = float(value)
    if "<unk>" not in unigrams or "</s>" not in unigrams:
        raise ModelLoadError(f"{unigram_path} lacks <unk> or </s>: not written by train-lm")
    card_path = path.parent / LM_CARD_FILE
    card = json.loads(card_path.read_text(encoding="utf-8")) if card_path.is_file() else {}
    return _LanguageModel(model, unigrams, bool(card.get("lowercase", False)))


def query_tokens(tokens: Sequence[str], *, lowercase: bool = False) -> list[str]:
    """The words KenLM is asked about: control characters dropped (KenLM reads C strings),
    whitespace tokens dropped, KenLM's own symbols turned into `<unk>`."""
    return query_words(tokens, lowercase=lowercase)[0]


def query_words(tokens: Sequence[str], *, lowercase: bool = False) -> tuple[list[str], list[int]]:
    """`query_tokens`, and for each word the index of the token it came from."""
    words, owners = [], []
    for i, token in enumerate(tokens):
        if token.isascii() and token.isprintable() and " " not in token:
            word = token  # no control, format or space character: most tokens
        else:
            word = "".join(c for c in token if unicodedata.category(c) not in ("Cc", "Cf", "Zs"))
            word = word.strip()
        if not word:
            continue
        word = word.lower() if lowercase else word
        words.append("<unk>" if word in _SPECIAL else word)
        owners.append(i)
    return words, owners


def _score(words: list[str], lm: _LanguageModel) -> dict[str, float]:
    return _score_events(words, lm)[0]


def _score_events(words: list[str], lm: _LanguageModel) -> tuple[dict[str, float], list]:
    scores = list(lm.model.full_scores(" ".join(words), bos=True, eos=True))
    logprobs = [lp for lp, _, _ in scores]  # n words, then </s>
    n_events = len(scores)
    n_oov = sum(oov for _, _, oov in scores[:-1])
    unk = lm.unigrams["<unk>"]
    unigram = sum(lm.unigrams.get(w, unk) for w in words) + lm.unigrams["</s>"]
    row = {
        "mean_logprob": sum(logprobs) / n_events,
        "min_logprob": min(logprobs),
        "oov_rate": n_oov / len(words) if words else 0.0,
        "slor": (sum(logprobs) - unigram) / n_events,
        "ngram_ratio": sum(n for _, n, _ in scores) / (n_events * lm.model.order),
    }
    return row, scores


@feature("lm.v1", names=NAMES, requires=("lm",))
def lm_features(sentences: Sequence[Sentence], resources) -> list[dict[str, float]]:
    """n-gram language-model scores over the tokens plus `</s>` (n + 1 events, log10).

    - mean_logprob: mean log10 p(event | up to order-1 previous words); higher is more fluent.
      Minus this is log10 perplexity.
    - min_logprob: the least probable event (one bad word or junction); higher is more fluent.
    - oov_rate: tokens the model never saw / tokens (0 for no tokens); higher is less fluent,
      or just rarer vocabulary (names, numbers): read with slor.
    - slor: (log10 p_LM(sentence) - sum of the events' unigram log10 p) / (n + 1), the
      syntactic log-odds ratio of Kann et al. (2018): probability beyond what the words' own
      frequencies explain, so rare words are not mistaken for bad syntax; higher is more fluent.
    - ngram_ratio: mean length of the n-gram KenLM matched per event / model order, 0 to 1: how
      much of the context the training text attested; higher is more fluent.
    """
    lm = resources.get("lm", _load)
    return [_score(query_tokens(s.tokens, lowercase=lm.lowercase), lm) for s in sentences]


@dataclass(frozen=True)
class TokenLogprob:
    """One scored event: the token it is (None: the end of the sentence, `</s>`), its log10
    probability given the words before it, its unigram log10 probability (the word alone, as
    SLOR subtracts it), and whether the model never saw the word."""

    token: int | None
    logprob: float
    unigram: float
    oov: bool


def lm_events(
    sentences: Sequence[Sentence], resources
) -> list[tuple[dict[str, float], list[TokenLogprob]]]:
    """`lm_features`' rows, each with the events they were computed from (from one query)."""
    lm = resources.get("lm", _load)
    out = []
    for s in sentences:
        words, owners = query_words(s.tokens, lowercase=lm.lowercase)
        row, scores = _score_events(words, lm)
        unk = lm.unigrams["<unk>"]
        unigrams = [lm.unigrams.get(w, unk) for w in words] + [lm.unigrams["</s>"]]
        events = [
            TokenLogprob(owners[k] if k < len(owners) else None, float(lp), u, bool(oov))
            for k, ((lp, _, oov), u) in enumerate(zip(scores, unigrams, strict=True))
        ]
        out.append((row, events))
    return out
