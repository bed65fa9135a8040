"""The teacher of the default tier's taught heads: the neural tier's learned head recipe (a ridge
on SmolLM2's layer-20 mean states, `training.heads.learned.ridge`), at the general head's
shipped variant and alpha, refitted on the development files' judged outputs with one genre
left out, so that the student of a held-out genre learns from a teacher that never saw it.

The states of every text (`text_set_states`) are read through SmolLM2 once and kept under
`build/states/taught` in shards (`training.heads.learned.store`: resumes where it stopped,
shows progress), keyed by the texts and the graph's layers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from training.heads.learned.ridge import StateHead, fit
from training.heads.learned.rows import StateFile
from training.heads.learned.store import (
    StoredFile,
    fill_store,
    load_stored,
)
from training.heads.taught.texts import TextSet

__all__ = ["DEFAULT_ROOT", "SetStates", "Teacher", "text_set_states"]

DEFAULT_ROOT = Path("build/states/taught")


@dataclass(frozen=True)
class SetStates:
    """One text set's states at the states extractor's layer and pooling [n, 576] and SmolLM2's
    summed log-probability [n]."""

    states: np.ndarray
    logprob: np.ndarray


def text_set_states(
    sets: Sequence[TextSet], layers: Sequence[int], *, root: Path = DEFAULT_ROOT, jobs: int = 2
) -> dict[str, SetStates]:
    """{set name: its states}, every missing shard read through SmolLM2 in `jobs` processes."""
    from features.neural_lm import POOLINGS, STATE_LAYER, STATE_POOLING

    stored = [StoredFile(root, s.name, s.digest, s.texts, [list(layers), 512]) for s in sets]
    fill_store(stored, jobs)
    at = (list(layers).index(STATE_LAYER), POOLINGS.index(STATE_POOLING))
    out = {}
    for s, f in zip(sets, stored, strict=True):
        states, logprob = load_stored(f)
        out[s.name] = SetStates(np.ascontiguousarray(states[:, at[0], at[1]]), logprob)
    return out


@dataclass(frozen=True)
class Teacher:
    """A fitted teacher: the learned head and the genre it never saw ("" : none left out)."""

    head: StateHead
    without: str

    def scores(self, states: SetStates) -> np.ndarray:
        return self.head.predict(states.states, states.logprob)


def fit_teacher(files: Sequence[StateFile], setting: Mapping, without: str = "") -> Teacher:
    """The learned head of `setting` (the card's `states` entry: layer, pooling, variant,
    alpha) fitted on `files` (one layer and pooling each) less the genre `without`."""
    kept = [f for f in files if f.genre != without]
    if not kept:
        raise ValueError(f"no files outside {without!r} to fit the teacher on")
    layer, pooling = int(setting["layer"]), str(setting["pooling"])
    head = fit(kept, (0, 0), str(setting["variant"]), float(setting["alpha"]), [layer], [pooling])
    return Teacher(head, without)
