"""SmolLM2-135M's hidden states as features: `neural_states.v1` (the layer and pooling a learned
head reads, `features.neural_lm.STATE_LAYER` and `STATE_POOLING`), and every layer and pooling
the full graph returns for choosing them (`pooled_states`).

`neural_states.v1` is read from the passes that give `neural.v2`'s log-probabilities when the
batch ran them (a model reading both: `features.neural_lm.scored_passes`), else from the pass
cut after `STATE_LAYER` (`state_passes`): the states pooled inside the graph, no later layers
and no output matrix, about half the work. Either way a text's states are the mean over its own
tokens in float64, stored float32: the same to float32's last bits (tests/features/
test_neural_states.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from features.errors import ModelLoadError
from features.neural_lanes import side_by_side
from features.neural_lm import (
    CONTEXT,
    HIDDEN,
    POOLINGS,
    REEXPORT,
    STATE_LAYER,
    STATE_POOLING,
    NeuralLM,
    load_neural,
    pass_groups,
    scored_passes,
)
from features.registry import feature
from features.sentence import Sentence

__all__ = ["STATE_NAMES", "neural_state_features", "pooled_states", "state_passes"]


def pooled_states(lm: NeuralLM, texts: Sequence[str]):
    """(states, logprob sums, token counts) of texts read whole, from the same passes: states
    [texts, layers, len(POOLINGS), hidden] float32, each text's hidden states after each of the
    graph's layers (`lm.layers`) pooled over its own tokens (`_pool`; zeros for a text of no
    tokens). What training/state_head.py chooses the layer and pooling from."""
    import numpy as np

    if not lm.layers:
        raise ModelLoadError(f"the ONNX graph returns no hidden states: {REEXPORT}")
    tokens = [lm.tokenize(t) for t in texts]
    found = scored_passes(lm, tokens)
    empty = np.zeros((len(lm.layers), len(POOLINGS), HIDDEN), np.float32)
    states = np.stack([empty if s is None else s for _, s in found]) if found else empty[None][:0]
    sums = np.array([float(lp.sum()) for lp, _ in found])
    return states, sums, np.array([len(t) for t in tokens], dtype=float)


def _cut_graph_serves(lm: NeuralLM) -> bool:
    card = lm.states_card
    return (
        lm.states is not None
        and STATE_LAYER in card.get("layers", ())
        and card.get("pooling") == STATE_POOLING
    )


def state_passes(lm: NeuralLM, token_lists: Sequence[list[int]]) -> list:
    """Each token list's states after `STATE_LAYER` pooled `STATE_POOLING` over its tokens
    ([HIDDEN] float32; None for no tokens): from this thread's last full passes when they hold
    every list, else from the cut pass (module docstring); the full passes when the export has
    no cut graph. A list longer than a pass holds is read in pieces, as `scored_passes` reads
    it, and their means weighed by their tokens."""
    import numpy as np

    keys = [tuple(t) for t in token_lists]
    memo = getattr(lm.recent, "batch", None) or {}
    if not _cut_graph_serves(lm) or all(k in memo for k in keys):
        if STATE_LAYER not in lm.layers:
            raise ModelLoadError(
                f"the ONNX graph returns no states of layer {STATE_LAYER}: {REEXPORT}"
            )
        at = (lm.layers.index(STATE_LAYER), POOLINGS.index(STATE_POOLING))
        return [None if s is None else s[at] for _, s in scored_passes(lm, token_lists)]
    column = list(lm.states_card["layers"]).index(STATE_LAYER)
    size = CONTEXT - 1
    pieces = [
        (k, [lm.bos, *t[i : i + size]])
        for k, t in enumerate(token_lists)
        for i in range(0, len(t), size)
    ]

    def run(group: list[int]):
        width = max(len(pieces[i][1]) for i in group)
        ids = np.zeros((len(group), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, i in enumerate(group):
            seq = pieces[i][1]
            ids[row, : len(seq)], mask[row, : len(seq)] = seq, 1
        return lm.states.run(None, {"input_ids": ids, "attention_mask": mask})[0]

    groups = pass_groups([len(seq) for _, seq in pieces], lm.budget)
    parts: list[list] = [[] for _ in token_lists]  # (mean, tokens) of each piece
    for group, pooled in zip(groups, side_by_side(run, groups, lm.lanes), strict=True):
        for row, i in enumerate(group):
            parts[pieces[i][0]].append((pooled[row, column], len(pieces[i][1]) - 1))
    return [_mean(p) for p in parts]


def _mean(parts: list):
    """float32 mean over a text's tokens of its pieces' float64 (mean, tokens); None for none."""
    import numpy as np

    if not parts:
        return None
    if len(parts) == 1:
        return parts[0][0].astype(np.float32)
    total = sum(mean * n for mean, n in parts)
    return (total / sum(n for _, n in parts)).astype(np.float32)


STATE_NAMES = tuple(f"h{i:03d}" for i in range(HIDDEN))


@feature("neural_states.v1", names=STATE_NAMES, requires=("neural",))
def neural_state_features(sentences: Sequence[Sentence], resources) -> list[dict[str, float]]:
    """SmolLM2-135M's hidden state after layer `STATE_LAYER` of 30, averaged over the text's
    tokens (`STATE_POOLING`): 576 numbers a text (0 for a text of no tokens), from the same
    passes as `neural.v2`'s log-probabilities when the batch ran them, else from the cut pass.
    No fluency reading of its own: a learned head (training/state_head.py) weighs them against
    people's ratings."""
    lm = resources.get("neural", load_neural)
    found = state_passes(lm, [lm.tokenize(s.text) for s in sentences])
    return [
        dict.fromkeys(STATE_NAMES, 0.0)
        if states is None
        else dict(zip(STATE_NAMES, states.astype(float).tolist(), strict=True))
        for states in found
    ]
