"""`neural_states.v1` from the pass cut after layer 20 (its states pooled in the graph) and from
the full pass: the same states to float32's last bits for texts of 1 to 600 tokens (a text
longer than a pass is read in pieces), alone or packed several to a pass as on a GPU; the cut
pass serves a batch without `neural.v2`, the full pass's states a batch with it."""

from __future__ import annotations

import dataclasses
import threading

import numpy as np
import pytest

from features.neural_lm import CONTEXT, HIDDEN, STATE_LAYER, load_neural
from features.neural_states import state_passes
from features.resources import Resources
from features.rows import FeatureRows

SENTENCE = "Traders said the market was quiet ahead of the meeting on Tuesday."
TEXTS = [
    "Hi",
    "Yes.",
    "The company said profits rose in the first quarter.",
    "profits the quarter in rose said first company The.",
    "Café Müller serves crêpes; naïve diners love it.",
    SENTENCE * 4,
    SENTENCE * 40,  # over CONTEXT tokens: two pieces
    "",
]


@pytest.fixture(scope="module")
def lm():
    found = load_neural(Resources())
    assert found.states is not None and STATE_LAYER in found.states_card["layers"]
    return found


def _full(lm, tokens):
    """The full pass's states, in a thread that has no passes of these texts yet."""
    from features.neural_lm import POOLINGS, STATE_POOLING, _passes

    at = (lm.layers.index(STATE_LAYER), POOLINGS.index(STATE_POOLING))
    return [None if s is None else s[at] for _, s in _passes(lm, tokens, budget=1)]


def test_the_cut_pass_gives_the_full_passs_states(lm):
    tokens = [lm.tokenize(t) for t in TEXTS]
    assert len(tokens[-2]) > CONTEXT and not tokens[-1]
    lm.recent.batch = {}  # no full passes to read: the cut graph serves
    cut = state_passes(lm, tokens)
    full = _full(lm, tokens)
    assert cut[-1] is None and full[-1] is None
    for a, b in zip(cut[:-1], full[:-1], strict=True):
        assert a.shape == (HIDDEN,) and a.dtype == np.float32
        assert np.abs(a.astype(np.float64) - b).max() <= 1e-6 * max(1.0, np.abs(b).max())
    assert np.abs(cut[2] - cut[3]).max() > 0.1  # a scramble is another state


def test_texts_packed_in_one_cut_pass_keep_their_own_states(lm):
    """As FLUENCY_DEVICE=gpu runs it (texts of similar length share a right-padded pass), on
    the CPU: each text's states are those of its pass alone."""
    tokens = [lm.tokenize(t) for t in TEXTS[:6]]
    lm.recent.batch = {}
    alone = state_passes(lm, tokens)
    packed_lm = dataclasses.replace(lm, device="gpu")  # budget: 256 padded tokens a pass
    assert packed_lm.budget > 1
    runs = []
    real = packed_lm.states

    class Counting:
        def run(self, names, feeds):
            runs.append(feeds["input_ids"].shape[0])
            return real.run(names, feeds)

    packed_lm.states = Counting()
    packed = state_passes(packed_lm, tokens)
    assert max(runs) > 1  # some pass held several texts
    for a, b in zip(alone, packed, strict=True):
        assert np.abs(a - b).max() <= 1e-5


def test_a_batch_without_logprobs_runs_the_cut_pass_and_parses_nothing(monkeypatch):
    import features.neural_lm as neural_lm
    import features.rows as rows_module

    def refuse(*args, **kwargs):
        raise AssertionError("ran the full pass or the parser")

    monkeypatch.setattr(neural_lm, "_pass", refuse)
    monkeypatch.setattr(rows_module, "parse", refuse)
    rows = FeatureRows(("neural_states.v1",), Resources())
    found = rows.rows([*TEXTS[:4], ""])
    assert len(found) == 5 and not any(found[-1].values())
    assert found[2] != found[3]


def test_a_batch_with_logprobs_reads_the_states_of_its_full_passes(monkeypatch):
    """`neural.v2` before `neural_states.v1` (the order a bundle lists them): one full pass a
    text, the cut graph never runs, and the states are the cut graph's to float32's bits."""
    rows = FeatureRows(("neural.v2", "neural_states.v1"), Resources())
    lm = rows.resources.get("neural", load_neural)
    cut = FeatureRows(("neural_states.v1",), Resources()).rows(TEXTS[2:4])

    class Refuse:
        def run(self, *args):
            raise AssertionError("ran the cut pass")

    monkeypatch.setattr(lm, "states", Refuse())
    both = rows.rows(TEXTS[2:4])
    for a, b in zip(both, cut, strict=True):
        values = np.array([a[k] for k in b])
        assert np.abs(values - np.array(list(b.values()))).max() <= 1e-6


def test_passes_run_side_by_side_give_the_same_states_and_logprobs(lm):
    """Two lanes (`features.neural_lanes`, as a gunicorn worker runs them): each pass on a
    thread of its own, every value the same to the bit as one lane's, in the order given."""
    from features.neural_lm import _passes

    tokens = [lm.tokenize(t) for t in TEXTS]
    one, two = dataclasses.replace(lm, lanes=1), dataclasses.replace(lm, lanes=2)
    threads = set()
    real = two.states

    class Recording:
        def run(self, names, feeds):
            threads.add(threading.current_thread().name)
            return real.run(names, feeds)

    two.states = Recording()
    one.recent.batch = {}
    alone, side = state_passes(one, tokens), state_passes(two, tokens)
    assert len(threads) == 2  # eight passes (one a piece), two lanes
    assert side[-1] is None
    for a, b in zip(alone[:-1], side[:-1], strict=True):
        assert np.array_equal(a, b)
    full_one, full_two = _passes(one, tokens, budget=1), _passes(two, tokens, budget=1)
    for (lp1, s1), (lp2, s2) in zip(full_one, full_two, strict=True):
        assert np.array_equal(lp1, lp2)
        assert (s1 is None and s2 is None) or np.array_equal(s1, s2)


def test_the_lanes_are_read_at_load(monkeypatch):
    monkeypatch.delenv("FLUENCY_NEURAL_LANES", raising=False)
    assert load_neural(Resources()).lanes == 1
    monkeypatch.setenv("FLUENCY_NEURAL_LANES", "2")
    assert load_neural(Resources()).lanes == 2
