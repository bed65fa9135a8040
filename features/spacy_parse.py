"""Dependency-parser signals from spaCy: the role Connexor plays in Mutton et al. (2007).

A parser trained on well-formed text finds one tree for a sentence and is sure of its moves;
word salad makes it split the input into fragments, fall back to the catch-all label `dep`,
build crossing arcs, and hesitate between moves. Every value comes from the one shared parse
(`features.parsing.parse`, which records the greedy parser's move log-probabilities in the same
pass): nothing here calls spaCy.

Each feature, its direction for fluent text, and its normalisation:
- `extra_roots`: roots beyond the first (spaCy's sentence splits of one input): lower. Count.
- `extra_roots_per_token`: the same over the token count: lower.
- `largest_tree_share`: tokens in the largest tree over all tokens: higher (1 for one tree).
- `dep_ratio`: tokens labelled `dep` (unclassified dependent) over tokens: lower.
- `nonprojective_ratio`: arcs that cross another arc over arcs: lower (English is mostly
  projective; spaCy's pseudo-projective parser only makes crossing arcs when pressed).
- `mean_arc_length`: mean |head - dependent| over arcs, divided by log2(2 + tokens), so long
  sentences are not penalised for being long: moderate.
- `root_is_verb`: the first root is a verb or auxiliary (fine tag VB*/MD): higher.
- `logprob_sum`: the sum of the chosen moves' natural-log probabilities: higher (closer to 0).
  Grows with length; the model has `surface.v2` lengths beside it.
- `logprob_mean`: the same per move: higher.
- `logprob_min`: the least sure move: higher.
- `unsure_move_ratio`: moves the parser took with probability below 0.5, over moves: lower.

Empty text gives zeros (and `largest_tree_share` 1): the empty sentence has no evidence either way.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from features.registry import feature
from features.sentence import Sentence

NAMES = (
    "extra_roots",
    "extra_roots_per_token",
    "largest_tree_share",
    "dep_ratio",
    "nonprojective_ratio",
    "mean_arc_length",
    "root_is_verb",
    "logprob_sum",
    "logprob_mean",
    "logprob_min",
    "unsure_move_ratio",
)
_UNSURE = math.log(0.5)


def crossing_arcs(heads: Sequence[int]) -> int:
    """Arcs that cross at least one other arc (a root points to itself and has no arc).

    Arcs (a, b) and (c, d), each with its ends sorted, cross when a < c < b < d. numpy over all
    pairs at once: 500 tokens is 250,000 pairs, a millisecond.
    """
    arcs = np.array([sorted((h, d)) for d, h in enumerate(heads) if h != d], dtype=np.int64)
    if len(arcs) < 2:
        return 0
    a, b = arcs[:, 0][:, None], arcs[:, 1][:, None]
    c, d = arcs[:, 0][None, :], arcs[:, 1][None, :]
    cross = ((a < c) & (c < b) & (b < d)) | ((c < a) & (a < d) & (d < b))
    return int(cross.any(axis=1).sum())


def tree_roots(s: Sentence) -> list[int]:
    """For each token, the root of its tree (as `extra_roots` and `largest_tree_share` count
    trees): a text the parser splits into fragments has several roots."""
    out = []
    for i in range(s.n_tokens):
        node, steps = i, 0
        while s.heads[node] != node and steps <= s.n_tokens:  # guard against a cycle
            node, steps = s.heads[node], steps + 1
        out.append(node)
    return out


def _tree_sizes(s: Sentence) -> list[int]:
    sizes: dict[int, int] = {}
    for i in range(s.n_tokens):
        node, steps = i, 0
        while s.heads[node] != node and steps <= s.n_tokens:  # guard against a cycle
            node, steps = s.heads[node], steps + 1
        sizes[node] = sizes.get(node, 0) + 1
    return list(sizes.values())


def _signals(s: Sentence) -> dict[str, float]:
    n = s.n_tokens
    if n == 0:
        row = dict.fromkeys(NAMES, 0.0)
        row["largest_tree_share"] = 1.0
        return row
    roots = s.roots
    arcs = [(h, d) for d, h in enumerate(s.heads) if h != d]
    lps = np.asarray(s.transition_logprobs, dtype=np.float64)
    lps = lps[np.isfinite(lps)]
    first_root_tag = s.tags[roots[0]] if s.tags and roots else ""
    return {
        "extra_roots": float(max(len(roots) - 1, 0)),
        "extra_roots_per_token": max(len(roots) - 1, 0) / n,
        "largest_tree_share": max(_tree_sizes(s)) / n,
        "dep_ratio": sum(d == "dep" for d in s.deps) / n,
        "nonprojective_ratio": crossing_arcs(s.heads) / len(arcs) if arcs else 0.0,
        "mean_arc_length": (
            float(np.mean([abs(h - d) for h, d in arcs])) / math.log2(2 + n) if arcs else 0.0
        ),
        "root_is_verb": float(first_root_tag.startswith("VB") or first_root_tag == "MD"),
        "logprob_sum": float(lps.sum()) if lps.size else 0.0,
        "logprob_mean": float(lps.mean()) if lps.size else 0.0,
        "logprob_min": float(lps.min()) if lps.size else 0.0,
        "unsure_move_ratio": float((lps < _UNSURE).mean()) if lps.size else 0.0,
    }


@feature("spacy.v1", names=NAMES, requires=("spacy",))
def spacy_signals(sentences: Sequence[Sentence], resources=None) -> list[dict[str, float]]:
    """Fragments, unclassified and crossing arcs, and the greedy parser's move confidence, from
    the shared spaCy parse (see the module docstring for each feature's direction)."""
    return [_signals(s) for s in sentences]
