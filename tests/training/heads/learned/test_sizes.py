"""The learned heads against the size of what they are fitted on
(`training.heads.learned.sizes`): the cuts asked for, the bar each unit's head faces (a learned
head at the cut its card names), and the one ship rule over every cut's held-out figures."""

from __future__ import annotations

import argparse
from types import SimpleNamespace

import numpy as np
import pytest

from training.heads.data.files import MINUS_LENGTH
from training.heads.data.judged import HeadFile
from training.heads.learned.choice import LOGPROB_LABEL
from training.heads.learned.sizes import Fit, _bar, parse_size, rule
from training.heads.metrics.figures import judge
from training.heads.metrics.systems import system_view


def test_sizes_read_as_outputs_and_words_or_all():
    assert parse_size("1500:40000") == (1500, 40000)
    assert parse_size("600") == (600, 0)
    assert parse_size("all") == (-1, 0)
    for bad in ("0", "-5:10", "x", "10:y"):
        with pytest.raises(argparse.ArgumentTypeError):
            parse_size(bad)


def _files(n=3, size=40, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for k in range(n):
        human = rng.normal(size=size)
        groups = [str(i // 4) for i in range(size)]
        length = {MINUS_LENGTH: rng.normal(size=size)}
        out.append(HeadFile(f"f{k}", "g", human, groups, {}, length))
    return out


def _found(preds, files, checks, chosen=(20, "mean", "states", 3000.0), current=None):
    refs = {
        MINUS_LENGTH: judge({f.name: f.baselines[MINUS_LENGTH] for f in files}, files, False),
        LOGPROB_LABEL: judge({f.name: -f.baselines[MINUS_LENGTH] for f in files}, files, False),
    }
    return SimpleNamespace(preds=preds, refs=refs, checks=checks, chosen=chosen, current=current)


def test_every_cut_faces_the_same_bar_under_the_one_rule():
    files = _files()
    rng = np.random.default_rng(1)
    close = {f.name: f.human + 0.3 * rng.normal(size=len(f.human)) for f in files}
    far = {f.name: f.human + 3.0 * rng.normal(size=len(f.human)) for f in files}
    bar = {f.name: f.human + 1.0 * rng.normal(size=len(f.human)) for f in files}
    view = system_view(files, False, n_samples=20)
    fits = [
        Fit((600, 0), {"f0": 40}, _found(far, files, {"shuffles": 0.99})),
        Fit((-1, 0), {"f0": 40}, _found(close, files, {"shuffles": 0.99})),
        Fit((3000, 0), {"f0": 40}, _found(close, files, {"shuffles": 0.5})),
    ]
    rows = rule(fits, files, False, bar, 0.95, view, seed=3)
    assert [r["size"] for r in rows] == ["600:0", "all", "3000:0"]
    assert not rows[0]["ships"] and "current head" in rows[0]["failed"]
    assert rows[1]["ships"] and rows[1]["criterion"] > rows[0]["criterion"]
    assert not rows[2]["ships"] and rows[2]["failed"] == ["scrambles"]
    assert rows[1]["rho_95"][0] <= rows[1]["rho"] <= rows[1]["rho_95"][1]


def test_a_learned_heads_bar_is_its_own_cut_and_a_missing_cut_is_an_error():
    learned = SimpleNamespace(states={"layer": 20}, about={"files": {"f0": 10, "f1": 12}})
    linear = SimpleNamespace(states=None, about={})
    fits = [
        Fit((600, 0), {"f0": 10, "f1": 12, "f2": 9}, SimpleNamespace(current="at 600")),
        Fit((1500, 0), {"f0": 20, "f1": 25, "f2": 9}, SimpleNamespace(current="at 1500")),
    ]
    assert _bar("general", fits, {"general": learned}) == ("at 600", "its card's cut, 600:0")
    assert _bar("mt", fits, {"general": learned, "mt": linear})[0] == "at 600"
    # A run of a few of the files (`--files`) finds the cut on the files it has.
    few = [Fit(f.size, {"f1": f.fitted["f1"]}, f.found) for f in fits]
    assert _bar("general", few, {"general": learned})[0] == "at 600"
    moved = SimpleNamespace(states={"layer": 20}, about={"files": {"f0": 11}})
    with pytest.raises(RuntimeError, match="no cut of --sizes"):
        _bar("general", fits, {"general": moved})


def test_the_commands_that_write_learned_heads_check_what_is_said_again_by_default():
    """A head these commands write carries its weight on what is said again, as `python -m
    training.heads` gives it: the check is on unless asked off."""
    from training.heads.learned import command, sizes

    assert sizes._options([]).said_again == 200
    assert command._options([]).said_again == 200
    assert sizes._options(["--said-again", "0"]).said_again == 0
