"""The teacher (`training.heads.taught.teacher`): its texts' states read through the real SmolLM2
graph once and kept, at the states extractor's layer and pooling, what the served learned head
reads; a teacher fitted without a genre learns from the others alone."""

from __future__ import annotations

import numpy as np
import pytest

from features.neural_lm import POOLINGS, STATE_LAYER, STATE_POOLING, load_neural
from features.neural_states import pooled_states
from features.resources import Resources
from training.heads.learned.rows import StateFile
from training.heads.taught.teacher import fit_teacher, text_set_states
from training.heads.taught.texts import TextSet

TEXTS = (
    "The company said profits rose in the first quarter.",
    "profits the quarter in rose said first company The.",
    "The hotel is near the station and has a bar.",
)


@pytest.fixture(scope="module")
def lm():
    return load_neural(Resources())


def test_states_are_the_extractors_layer_and_pooling_and_kept(tmp_path, lm):
    sets = [TextSet("a", "x", TEXTS[:2], ("output",) * 2), TextSet("b", "", TEXTS[2:], ("real",))]
    found = text_set_states(sets, lm.layers, root=tmp_path, jobs=1)
    want, sums, _ = pooled_states(lm, list(TEXTS))
    at = (lm.layers.index(STATE_LAYER), POOLINGS.index(STATE_POOLING))
    np.testing.assert_array_equal(found["a"].states, want[:2, at[0], at[1]])
    np.testing.assert_array_equal(found["b"].logprob, sums[2:])
    shards = sorted(tmp_path.rglob("shard-*.npz"))
    assert len(shards) == 2
    again = text_set_states(sets, lm.layers, root=tmp_path, jobs=1)  # read back, not again
    assert sorted(tmp_path.rglob("shard-*.npz")) == shards
    np.testing.assert_array_equal(again["b"].states, found["b"].states)


def test_a_teacher_leaves_its_genre_out():
    rng = np.random.default_rng(0)
    files = []
    for k, genre in enumerate("aabb"):
        st = rng.normal(size=(50, 1, 1, 6)).astype(np.float32)
        human = st[:, 0, 0, 0] * (1 if genre == "a" else -1) + 0.1 * rng.normal(size=50)
        files.append(StateFile(f"f{k}", genre, human, st, rng.normal(size=50), np.arange(50)))
    setting = {"layer": 20, "pooling": "mean", "variant": "states", "alpha": 1.0}
    without_a, without_b = fit_teacher(files, setting, "a"), fit_teacher(files, setting, "b")
    assert without_a.head.coef[0] < 0 < without_b.head.coef[0]  # each learned the other genre
    with pytest.raises(ValueError, match="no files outside"):
        fit_teacher(files[:2], setting, "a")
