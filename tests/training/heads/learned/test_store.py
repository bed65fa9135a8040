"""The states store (`training.heads.learned.store`): every output of a judged file read through
the real SmolLM2 graph once, in shards; an interrupted run resumes at the shards missing and
leaves the others as they were; what it loads is what `pooled_states` gives the same texts."""

from __future__ import annotations

import json

import numpy as np
import pytest

import training.heads.learned.store as store
from features.neural_lm import load_neural
from features.neural_states import pooled_states
from features.resources import Resources

TEXTS = [
    "The company said profits rose in the first quarter.",
    "profits the quarter in rose said first company The.",
    "Café Müller serves crêpes; naïve diners love it.",
    "Yes.",
    "The hotel is near the station and has a bar.",
]


@pytest.fixture(scope="module")
def lm():
    return load_neural(Resources())


def _line(k, text):
    return {"id": str(k), "text": text, "score": k, "scores": {}, "refs": [], "group": str(k % 2)}


def _judged(path):
    with path.open("w") as f:
        for k, t in enumerate(TEXTS):
            f.write(json.dumps(_line(k, t)) + "\n")
    return path


def test_a_store_fills_by_shards_resumes_and_loads_what_the_passes_give(tmp_path, monkeypatch, lm):
    monkeypatch.setattr(store, "SHARD", 2)
    path = _judged(tmp_path / "tiny.jsonl")
    entry = store.store_folder(tmp_path / "store", path, {}, lm.layers)
    assert entry.n_shards == 3 and entry.missing() == [0, 1, 2]
    with pytest.raises(FileNotFoundError, match="3 of 3 shards missing"):
        store.load_stored(entry)
    store.fill_store([entry], jobs=1)
    assert entry.complete
    kept = entry.shard_path(0).stat().st_mtime_ns
    entry.shard_path(1).unlink()  # an interrupted run: one shard never written
    assert entry.missing() == [1]
    store.fill_store([entry], jobs=1)
    assert entry.complete and entry.shard_path(0).stat().st_mtime_ns == kept
    states, sums = store.load_stored(entry)
    want_states, want_sums, _ = pooled_states(lm, TEXTS)
    assert states.shape == (5, len(lm.layers), 2, want_states.shape[-1])
    np.testing.assert_array_equal(states, want_states)
    np.testing.assert_array_equal(sums, want_sums)
    rows = np.array([4, 1])
    np.testing.assert_array_equal(store.load_stored(entry, rows)[0], want_states[rows])


def test_a_changed_file_has_another_entry(tmp_path, lm):
    path = _judged(tmp_path / "tiny.jsonl")
    before = store.store_folder(tmp_path / "store", path, {}, lm.layers).folder
    with path.open("a") as f:
        f.write(json.dumps(_line(9, "One more.")) + "\n")
    after = store.store_folder(tmp_path / "store", path, {}, lm.layers)
    assert after.folder != before and len(after.texts) == 6
