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


def test_the_learned_heads_take_a_complete_entry_and_run_no_pass(tmp_path, monkeypatch, lm):
    from types import SimpleNamespace

    import training.heads.learned.rows as rows
    from training.heads.data.judged import HeadFile

    path = _judged(tmp_path / "tiny.jsonl")
    cache = tmp_path / "states"
    store.fill_store([store.store_folder(cache / "store", path, {}, lm.layers)], jobs=1)

    def no_pass(texts, jobs):
        raise AssertionError("SmolLM2 ran again on outputs the store holds")

    monkeypatch.setattr(rows, "text_states", no_pass)
    scorer = SimpleNamespace(resources=SimpleNamespace(get=lambda *_: lm), placeholders={})
    human = np.arange(len(TEXTS), dtype=float)
    groups = [str(k % 2) for k in range(len(TEXTS))]
    judged = HeadFile("tiny", "tiny", human, groups, {}, {})
    cut = {"max_outputs": 0, "max_words": 0, "seed": 1, "jobs": 1, "cache_dir": cache}
    (every,) = rows.state_files(
        scorer, [path], {}, [judged], train_outputs=-1, train_words=3, **cut
    )
    want_states, want_sums, _ = pooled_states(lm, TEXTS)
    np.testing.assert_array_equal(every.states, want_states)
    np.testing.assert_array_equal(every.logprob, want_sums)
    np.testing.assert_array_equal(every.human, human)
    # A cut of whole inputs is a choice of the store's rows.
    from scorer.evidence.benchmark_data import sample_outputs

    keep = sample_outputs(groups, 2, 1)
    assert 0 < len(keep) < len(TEXTS)
    judged_cut = HeadFile("tiny", "tiny", human[keep], [groups[i] for i in keep], {}, {})
    two = {**cut, "max_outputs": 2}
    (some,) = rows.state_files(
        scorer, [path], {}, [judged_cut], train_outputs=2, train_words=0, **two
    )
    np.testing.assert_array_equal(some.human, human[keep])
    np.testing.assert_array_equal(some.states, want_states[keep])
