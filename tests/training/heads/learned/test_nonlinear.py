"""Nonlinear heads on the states (training/heads/learned/nonlinear.py) on numbers made here: a
kernel ridge through a Nyström map finds a rating the ridge cannot (a square of one direction),
is held out as every kind is, and faces the ridge under the one ship rule; where people follow a
straight line, it does not pass."""

from __future__ import annotations

import numpy as np

from training.heads.data.files import MINUS_LENGTH
from training.heads.data.judged import HeadFile
from training.heads.estimators.kinds import held_out
from training.heads.learned.nonlinear import FAMILIES, PipelineKind, decide, settings
from training.heads.learned.rows import StateFile

LAYERS, POOLINGS = (20,), ("mean",)


def _files(square: bool, n_files=4, n=240, seed=0):
    """State files whose ratings follow one direction of the states, or its square, and the
    judged files beside them (each output its own input: per-input tau has no pairs)."""
    rng = np.random.default_rng(seed)
    direction = rng.normal(size=16) / 4
    states_files, judged = [], []
    for k in range(n_files):
        states = rng.normal(size=(n, 1, 1, 16)).astype(np.float32)
        signal = states[:, 0, 0] @ direction
        signal = signal**2 if square else signal
        human = signal + 0.3 * signal.std() * rng.normal(size=n)
        logprob = -5.0 * rng.random(n) - 20
        name, genre = f"f{k}", "g" if k < 2 else "h"
        states_files.append(StateFile(name, genre, human, states, logprob, np.arange(n)))
        groups = [f"{k}-{i // 4}" for i in range(n)]
        columns = {"whole": {"neural.v2/logprob_sum": logprob}}
        baselines = {MINUS_LENGTH: -rng.integers(5, 30, size=n).astype(float)}
        judged.append(HeadFile(name, genre, human, groups, columns, baselines))
    return states_files, judged


def _small():
    made = settings(n_components=100)
    return {k: v for k, v in made.items() if k in ((FAMILIES[0], 1.0), (FAMILIES[0], 100.0))}


def test_every_family_has_settings_from_weak_to_strong_and_fits_weighted_rows():
    made = settings(n_components=50)
    assert {k[0] for k in made} == set(FAMILIES)
    files, _ = _files(square=True)
    kind = PipelineKind(made[FAMILIES[1], 1.0], (0, 0)).fit(files[:3])
    assert kind.predict(files[3]).shape == (240,)
    preds = held_out(PipelineKind(made[FAMILIES[0], 1.0], (0, 0)), files, True)
    assert set(preds) == {f.name for f in files}


def test_a_kernel_ridge_beats_the_ridge_where_people_follow_a_square_and_not_a_line():
    files, judged = _files(square=True)
    entry = decide(files, judged, True, (0, 0), (LAYERS, POOLINGS, 10.0), made=_small(), samples=50)
    head, ridge = entry["table"][0], entry["table"][1]
    assert head["label"].startswith("head: kernel ridge")
    assert head["rho"] > ridge["rho"] + 0.3 and entry["decision"].startswith("passes")
    assert "not written" in entry["decision"]
    files, judged = _files(square=False, seed=1)
    entry = decide(files, judged, True, (0, 0), (LAYERS, POOLINGS, 10.0), made=_small(), samples=50)
    assert entry["decision"].startswith("not shipped")
    assert "not above the current head" in entry["decision"]
