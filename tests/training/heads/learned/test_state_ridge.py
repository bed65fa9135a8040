"""The learned head on SmolLM2's states (training/heads/learned/ridge.py) on numbers made here: the
ridge and its average with the summed log-probability are the arithmetic they claim, the alpha
is the strongest within one standard error of the best, and the ship rule
(`training.heads.selection.ship_rule.ships`) reads its table."""

from __future__ import annotations

import numpy as np
import pytest

from training.heads.learned.ridge import choose, fit, held_out_predictions
from training.heads.learned.rows import StateFile
from training.heads.metrics.figures import Judgement
from training.heads.selection.ship_rule import ships

LAYERS, POOLINGS = (8, 16), ("mean", "last")


def _files(n_files=4, n=300, noise=0.5, seed=0):
    """Files whose ratings follow one direction of the layer-16 mean states."""
    rng = np.random.default_rng(seed)
    direction = rng.normal(size=32)
    out = []
    for k in range(n_files):
        states = rng.normal(size=(n, len(LAYERS), len(POOLINGS), 32)).astype(np.float32)
        signal = states[:, 1, 0] @ direction
        human = signal + noise * rng.normal(size=n) * signal.std()
        logprob = -5.0 * rng.random(n) - 20
        out.append(StateFile(f"f{k}", "g" if k < 2 else "h", human, states, logprob, np.arange(n)))
    return out


def test_the_ridge_finds_the_direction_people_follow_and_the_average_is_half_each_in_z():
    files = _files()
    head = fit(files[:3], (1, 0), "states", 10.0, LAYERS, POOLINGS)
    test = files[3]
    pred = head.predict(test.states[:, 1, 0], test.logprob)
    assert np.corrcoef(pred, test.human)[0, 1] > 0.8
    assert head.logprob_coef == 0 and (head.layer, head.pooling) == (16, "mean")
    wrong = fit(files[:3], (0, 0), "states", 10.0, LAYERS, POOLINGS)  # layer 8: no signal
    assert (
        abs(np.corrcoef(wrong.predict(test.states[:, 0, 0], test.logprob), test.human)[0, 1]) < 0.2
    )
    both = fit(files[:3], (1, 0), "states + logprob", 10.0, LAYERS, POOLINGS)
    X = np.concatenate([f.states[:, 1, 0] for f in files[:3]]).astype(float)
    lp = np.concatenate([f.logprob for f in files[:3]])
    w = np.concatenate([np.full(300, 1 / (300 * (2 if f.genre == "g" else 1))) for f in files[:3]])
    w = w / w.mean()
    r = head.predict(X, lp)

    def z(x):
        m = np.average(x, weights=w)
        return (x - m) / np.sqrt(np.average((x - m) ** 2, weights=w))

    assert np.allclose(both.predict(X, lp), 0.5 * z(r) + 0.5 * z(lp), atol=1e-9)
    # A stronger ridge pulls the weights toward zero.
    strong = fit(files[:3], (1, 0), "states", 1e6, LAYERS, POOLINGS)
    assert np.abs(strong.coef).sum() < 0.1 * np.abs(head.coef).sum()


def test_held_out_predictions_never_fit_on_the_unit_they_judge():
    files = _files()
    preds = held_out_predictions(
        files, True, LAYERS, POOLINGS, alphas=(10.0,), variants=("states",)
    )
    key = (16, "mean", "states", 10.0)
    assert set(preds[key]) == {f.name for f in files}
    # Genre g (f0, f1) held out: its predictions come from a fit on f2, f3 alone.
    alone = fit(files[2:], (1, 0), "states", 10.0, LAYERS, POOLINGS)
    assert np.allclose(preds[key]["f0"], alone.predict(files[0].states[:, 1, 0], files[0].logprob))


def _j(values):
    per = {f"f{k}": (v, v / 2) for k, v in enumerate(values)}
    return Judgement(per, float(np.mean(values)), float(np.mean(values)) / 2)


def test_the_alpha_is_the_strongest_within_one_standard_error_of_the_best():
    rng = np.random.default_rng(1)
    base = rng.uniform(0.1, 0.4, size=10)
    judged = {
        (16, "mean", "states", 10.0): _j(base + 0.010),
        (16, "mean", "states", 100.0): _j(base + 0.012),  # the best point
        (16, "mean", "states", 1000.0): _j(base + 0.011 + np.array([0.006, -0.006] * 5)),
        (16, "mean", "states", 10000.0): _j(base - 0.2),  # far below: never chosen
        (8, "mean", "states", 100.0): _j(base - 0.05),
    }
    chosen, how = choose(judged, alphas=(10.0, 100.0, 1000.0, 10000.0))
    assert chosen == (16, "mean", "states", 1000.0)
    assert how["best"]["key"] == [16, "mean", "states", 100.0]
    assert 10000.0 not in how["alphas_within_one_se"]


def test_a_learned_head_ships_on_the_means_with_its_per_file_wins_as_evidence():
    head = _j([0.3, 0.3, 0.3, 0.1])
    minus, logprob = _j([0.1] * 4), _j([0.2] * 4)
    current = _j([0.2, 0.2, 0.5, 0.5])  # wins 2 of 4 files against it, and is below its mean
    r = ships(head, minus=minus, best_input=("logprob sum", logprob), current=current)
    assert not r.ok and r.failed == ("current head",)
    current = _j([0.2, 0.2, 0.35, 0.2])  # below on 2 of 4 files, above on the mean: ships
    r = ships(
        head,
        minus=minus,
        best_input=("logprob sum", logprob),
        current=current,
        evidence={"current head": current},
    )
    assert r.ok and "2 of 4 vs current head" in r.why
    r = ships(head, minus=_j([0.3] * 4), best_input=("logprob sum", logprob))
    assert not r.ok and "minus the length" in r.why


@pytest.mark.parametrize("variant", ["states", "states + logprob"])
def test_a_fit_is_finite_on_constant_columns(variant):
    files = _files(n_files=2)
    for f in files:
        f.states[:, 1, 0, :4] = 1.0  # columns with no spread
    head = fit(files, (1, 0), variant, 10.0, LAYERS, POOLINGS)
    assert np.isfinite(head.coef).all() and np.isfinite(head.intercept)


def test_one_fit_for_every_alpha_is_each_alpha_fitted_alone():
    from training.heads.learned.ridge import fit_all

    files = _files(n_files=3)
    together = fit_all(files, (1, 0), [10.0, 1000.0], LAYERS, POOLINGS)
    for (variant, alpha), head in together.items():
        alone = fit(files, (1, 0), variant, alpha, LAYERS, POOLINGS)
        assert np.allclose(head.coef, alone.coef, atol=1e-10)
        assert head.intercept == pytest.approx(alone.intercept, abs=1e-10)
        assert head.logprob_coef == pytest.approx(alone.logprob_coef)
    assert not np.allclose(together["states", 10.0].coef, together["states", 1000.0].coef)
