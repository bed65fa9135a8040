"""SmolLM2-135M's hidden states as features: `neural_states.v1` (the layer and pooling a learned
head reads, `features.neural_lm.STATE_LAYER` and `STATE_POOLING`), and every layer and pooling
the graph returns for choosing them (`pooled_states`); both from the passes that give
`neural.v2`'s log-probabilities (`features.neural_lm.scored_passes`)."""

from __future__ import annotations

from collections.abc import Sequence

from features.errors import ModelLoadError
from features.neural_lm import (
    HIDDEN,
    POOLINGS,
    REEXPORT,
    STATE_LAYER,
    STATE_POOLING,
    NeuralLM,
    load_neural,
    scored_passes,
)
from features.registry import feature
from features.sentence import Sentence

__all__ = ["STATE_NAMES", "neural_state_features", "pooled_states"]


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


STATE_NAMES = tuple(f"h{i:03d}" for i in range(HIDDEN))


@feature("neural_states.v1", names=STATE_NAMES, requires=("neural",))
def neural_state_features(sentences: Sequence[Sentence], resources) -> list[dict[str, float]]:
    """SmolLM2-135M's hidden state after layer `STATE_LAYER` of 30, averaged over the text's
    tokens (`STATE_POOLING`): 576 numbers a text (0 for a text of no tokens), from the same
    passes as `neural.v2`'s log-probabilities. No fluency reading of its own: a learned head
    (training/state_head.py) weighs them against people's ratings."""
    lm = resources.get("neural", load_neural)
    if STATE_LAYER not in lm.layers:
        raise ModelLoadError(f"the ONNX graph returns no states of layer {STATE_LAYER}: {REEXPORT}")
    at = (lm.layers.index(STATE_LAYER), POOLINGS.index(STATE_POOLING))
    found = scored_passes(lm, [lm.tokenize(s.text) for s in sentences])
    return [
        dict.fromkeys(STATE_NAMES, 0.0)
        if states is None
        else dict(zip(STATE_NAMES, states[at].astype(float).tolist(), strict=True))
        for _, states in found
    ]
