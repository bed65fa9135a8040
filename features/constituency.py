"""Constituency-parser scores: the role the Collins parser plays in Mutton et al. (2007).

GLEU reads a statistical parser's confidence in its best tree: text a grammar of English fits
gets a tree the model is sure of; word salad gets a low-probability, FRAG-rooted guess. We use
a benepar chart parser (Kitaev & Klein 2018) with a character-LSTM encoder, trained on the WSJ
sample by `fluency train-parser` (`training/gleu/parser.py`) and shipped in `models/benepar/`.

A tree's score is the sum of its labelled spans' scores (benepar's span classifier, the empty
label scoring 0). Read as a tree CRF over all binarised, labelled trees of the words, the best
tree has log-probability score(best) - log Z, with Z summed by torch-struct's inside algorithm
on the model's own chart, with benepar's constraint that the root span is a constituent.
benepar trains by a max-margin loss, not by likelihood, so this probability is the Gibbs
distribution of the scores, not a calibrated one; it is used only as a feature.
"""

from __future__ import annotations

import logging
import math
import pickle
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from features.errors import ModelLoadError
from features.registry import feature
from features.resources import ARTEFACTS, Resources
from features.sentence import Sentence

__all__ = [
    "DEFAULT_PATH",
    "MAX_TOKENS",
    "ParseStats",
    "ParserInput",
    "benepar_modules",
    "load_parser",
    "parse_constituency",
    "parser_words",
    "save_parser",
    "score_parses",
    "word_tokens",
]

logger = logging.getLogger(__name__)

(_CHECKPOINT,) = ARTEFACTS["benepar"]
DEFAULT_PATH = _CHECKPOINT.default
# Longer texts are parsed on their first MAX_TOKENS words: CKY is cubic in length (500 words
# cost about a second), and the features are per-word or ratios, so a long prefix stands
# for the whole. The encoder's own limit is 510 words.
MAX_TOKENS = 300
BATCH_TOKENS = 2000  # words per forward pass
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]")
_CHAR_UNK = "\x00"  # benepar's RetokenizerForCharLSTM.CHAR_UNK
CLAUSES = frozenset({"S", "SINV", "SQ", "SBARQ", "SBAR"})
NAMES = (
    "score_per_word",
    "logprob_per_word",
    "frag_ratio",
    "x_ratio",
    "max_depth",
    "root_clause",
)


@dataclass(frozen=True)
class ParserInput:
    """One sentence as benepar's `ChartParser.encode` reads it (its `BaseInputExample`
    interface): words, and the gold tree when training."""

    words: tuple[str, ...]
    tree: Any = None  # nltk.Tree with a TOP root, for training

    @property
    def space_after(self) -> list[bool]:
        return [True] * len(self.words)  # read only by subword encoders, not the char LSTM

    def leaves(self) -> list[str]:
        return list(self.tree.leaves()) if self.tree is not None else list(self.words)

    def pos(self) -> list[tuple[str, str]]:
        if self.tree is not None:
            return self.tree.pos()
        return [(w, "UNK") for w in self.words]


@dataclass(frozen=True)
class ParseStats:
    """The best tree of one word sequence and how sure the parser is of it."""

    n_words: int
    best_score: float  # sum of span scores of the best tree
    log_z: float  # log partition over all trees (natural log)
    labels: tuple[str, ...]  # phrasal labels of the best tree, unary chains split, preorder
    max_depth: int  # most phrasal nodes above any word
    # The best tree's nodes, preorder: (first word, end word exclusive, label chain "S::VP").
    nodes: tuple[tuple[int, int, str], ...] = ()

    @property
    def logprob(self) -> float:
        return self.best_score - self.log_z


def parser_words(tokens: Sequence[str], max_tokens: int = MAX_TOKENS) -> tuple[str, ...]:
    """spaCy tokens as the parser was trained to read them: whitespace tokens dropped (the
    treebank has none), quotes and dashes normalised as benepar normalises the treebank's
    words (`ptb_unescape`: curly quotes become straight ones; the parser was trained on the
    treebank's -LRB- as "(", which is what spaCy gives), control and format characters made
    the character LSTM's unknown character (its vocabulary uses \\x01-\\x04 as sentence
    and word boundaries), at most `max_tokens`."""
    words = [t for t in tokens if t.strip()][:max_tokens]
    words = benepar_modules().ptb_unescape.ptb_unescape(words)
    return tuple(_CONTROL.sub(_CHAR_UNK, w) for w in words)


def load_parser(path: str | Path = DEFAULT_PATH):
    """A benepar `ChartParser` from a checkpoint written by `save_parser`, in eval mode."""
    bp = benepar_modules()  # first: a ModelLoadError naming the extra when torch is missing too
    import torch

    path = Path(path)
    if not path.is_file():
        raise ModelLoadError(
            f"no benepar checkpoint at {path}; train one with "
            "`fluency train-parser --treebank treebank --out models/benepar`"
        )
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
        config = dict(data["config"])
        config["hparams"] = bp.nkutil.HParams(**config["hparams"])
        parser = bp.parse_chart.ChartParser(**config)
        parser.load_state_dict({k: v.float() for k, v in data["state_dict"].items()})
    except (KeyError, RuntimeError, TypeError, ValueError, EOFError, pickle.UnpicklingError) as exc:
        raise ModelLoadError(f"{path} is not a benepar checkpoint we can load: {exc}") from exc
    parser.eval()
    return parser


def save_parser(parser, path: str | Path) -> None:
    """benepar's single-file checkpoint (`config` + `state_dict`), weights stored as float16:
    half the size, and the dev F1 of the shipped model does not change (see its card)."""
    import torch

    state = {k: v.half() if v.is_floating_point() else v for k, v in parser.state_dict().items()}
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    torch.save({"config": parser.config, "state_dict": state}, path)


def benepar_modules():
    """benepar's modules (see `features._benepar_compat`); a ModelLoadError naming the `full`
    extra when it or PyTorch is not installed."""
    from features._benepar_compat import import_benepar

    try:
        return import_benepar()
    except ImportError as exc:
        raise ModelLoadError(f"{exc}: pip install 'fluency-scorer[full]'") from exc


def score_parses(parser, sentences: Sequence[Sequence[str]]) -> list[ParseStats]:
    """Parse word sequences (none empty) in length-sorted batches; one `ParseStats` each."""
    bp = benepar_modules()
    import torch

    out: list[ParseStats | None] = [None] * len(sentences)
    inputs = [ParserInput(tuple(words)) for words in sentences]
    for ids, batch in bp.subbatching.split(
        inputs, costs=[len(x.words) for x in inputs], max_cost=BATCH_TOKENS
    ):
        with torch.no_grad():
            for i, stats in zip(ids, _score_batch(parser, bp, batch), strict=True):
                out[i] = stats
    return out  # type: ignore[return-value]


def _score_batch(parser, bp, inputs: Sequence[ParserInput]) -> list[ParseStats]:
    import torch

    batch = parser.pad_encoded([parser.encode(x) for x in inputs])
    span_scores, _ = parser(batch)
    lengths = batch["valid_token_mask"].sum(-1) - 2  # start/stop tokens don't count
    # As benepar's `charts_from_pytorch_scores_batched`, but one TreeCRF gives the best tree,
    # its score and log Z (benepar builds its own and returns only the chart).
    scores = span_scores - span_scores[..., :1]  # the empty label scores 0, as in decoding
    if parser.decoder.force_root_constituent:
        scores[torch.arange(scores.shape[0]), 0, lengths - 1, 0] -= 1e9
    dist = bp.torch_struct.TreeCRF(scores, lengths=lengths)
    argmax = dist.argmax  # one-hot (span, label) of the best tree
    best = (argmax * scores).sum((1, 2, 3)).tolist()
    log_z = dist.partition.tolist()
    argmax[..., 0] += 1e-9  # a span outside the tree reads as the empty label (benepar's trick)
    charts = argmax.argmax(-1).numpy()
    return [
        _stats(parser.decoder, chart[:n, :n], n, b, z)
        for chart, n, b, z in zip(charts, lengths.tolist(), best, log_z, strict=True)
    ]


def _stats(decoder, chart, n: int, best: float, log_z: float) -> ParseStats:
    tree = decoder.compressed_output_from_chart(chart)
    labels: list[str] = []
    nodes: list[tuple[int, int, str]] = []
    depth = [0] * n
    for start, end, label_id in zip(tree.starts, tree.ends, tree.labels, strict=True):
        chain = [x for x in decoder.label_from_index[int(label_id)].split("::") if x]
        labels.extend(chain)
        if chain:
            nodes.append((int(start), int(end), "::".join(chain)))
        for i in range(start, end):
            depth[i] += len(chain)
    return ParseStats(
        n, float(best), float(log_z), tuple(labels), max(depth, default=0), tuple(nodes)
    )


def _load(resources: Resources):
    return load_parser(_CHECKPOINT.path(resources))


def _finite(x: float) -> float:
    return x if math.isfinite(x) else 0.0


@feature("constituency.v1", names=NAMES, requires=("benepar",))
def constituency(sentences: Sequence[Sentence], resources: Resources | None = None):
    """How well a treebank grammar fits the text, from the benepar parser's chart.

    - `score_per_word`: the best tree's score (sum of its labelled spans' scores) over the
      number of words parsed. Higher: the parser is surer of its analysis.
    - `logprob_per_word`: log P(best tree) (natural log; score(best) - log Z, tree CRF over
      the span scores, Z by the inside algorithm) over the number of words. At most 0;
      higher (nearer 0): probability mass concentrates on one tree, as it does for English.
    - `frag_ratio`, `x_ratio`: the share of the best tree's phrasal nodes labelled FRAG or X,
      what the parser falls back on when no grammatical analysis fits. Higher: less fluent.
    - `max_depth`: most phrasal nodes above any word (raw count; grows with length).
    - `root_clause`: 1 if the root is a clause (S, SINV, SQ, SBARQ, SBAR), else 0.

    Per-word figures are averaged so that length, a feature of its own, isn't counted twice.
    Only the first MAX_TOKENS words are parsed. Texts with no words: all zeros."""
    return [row for row, _ in parse_constituency(sentences, resources)]


def parse_constituency(
    sentences: Sequence[Sentence], resources: Resources | None = None
) -> list[tuple[dict[str, float], ParseStats | None]]:
    """`constituency`'s rows, each with the best tree it read them from (None for a text with
    no words); `ParseStats.nodes` index `parser_words`, `word_tokens` maps them to tokens."""
    resources = resources if resources is not None else Resources()
    parser = resources.get("benepar", _load)
    words = [parser_words(s.tokens) for s in sentences]
    todo = [i for i, w in enumerate(words) if w]
    parsed = dict(zip(todo, score_parses(parser, [words[i] for i in todo]), strict=True))
    return [(_row(parsed.get(i)), parsed.get(i)) for i in range(len(sentences))]


def word_tokens(tokens: Sequence[str], max_tokens: int = MAX_TOKENS) -> list[int]:
    """For each word `parser_words` keeps, the index of its token."""
    return [i for i, t in enumerate(tokens) if t.strip()][:max_tokens]


def _row(stats: ParseStats | None) -> dict[str, float]:
    if stats is None:
        return dict.fromkeys(NAMES, 0.0)
    n_nodes = max(len(stats.labels), 1)
    return {
        "score_per_word": _finite(stats.best_score / stats.n_words),
        "logprob_per_word": _finite(stats.logprob / stats.n_words),
        "frag_ratio": stats.labels.count("FRAG") / n_nodes,
        "x_ratio": stats.labels.count("X") / n_nodes,
        "max_depth": float(stats.max_depth),
        "root_clause": float(bool(stats.labels) and stats.labels[0] in CLAUSES),
    }
