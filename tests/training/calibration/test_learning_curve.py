"""The learning curve of `fluency calibrate` on made-up scores: whole inputs drawn and judged on
the rest, and the shipped heads applied as the service applies them and refitted without a file,
whatever their kind (`training.heads.refit`)."""

from __future__ import annotations

import numpy as np
import pytest

from scorer.heads import Head
from training.calibration.curve_plot import plot
from training.calibration.curves import file_curve, shipped_columns
from training.calibration.learning_curve import table, wins
from training.heads.data.files import MINUS_LENGTH, text_columns
from training.heads.data.judged import HeadFile


def _follows_x2(n_groups: int, per: int, seed: int, n_systems: int = 0) -> HeadFile:
    """People follow `x2`, not the GLEU score; the shipped head to compare with reads gleu."""
    rng = np.random.default_rng(seed)
    n = n_groups * per
    x2 = rng.normal(size=n)
    cols = {"gleu": rng.normal(size=n), "x2": x2, "surface.v2/n_tokens": rng.normal(size=n)}
    systems = [f"s{i % n_systems}" for i in range(n)] if n_systems else []
    return HeadFile(
        f"d{seed}",
        "mine",
        x2 + 0.3 * rng.normal(size=n),
        [f"g{i // per}" for i in range(n)],
        {"whole": cols},
        {MINUS_LENGTH: -cols["surface.v2/n_tokens"]},
        systems,
    )


GLEU_HEAD = Head(("gleu",), [1.0], 0.0, "whole", label="head mine")
X2_HEAD = Head(("x2",), [0.5], 0.0, "whole", label="head other")


def test_learning_curve_draws_whole_inputs_and_judges_on_the_rest(tmp_path):
    f = _follows_x2(100, 3, seed=1, n_systems=8)
    curve = file_curve(
        f, GLEU_HEAD, [X2_HEAD], {}, ["whole"], sizes=(25, 50, 240, 290), draws=2,
        n_samples=200, max_inputs=0,
    )  # fmt: skip
    # 300 outputs: 240 leaves 60 to judge on; 290 would leave fewer than 50.
    assert list(curve.draws) == [25, 50, 240]
    assert curve.columns == ("calibrated", "shipped head, held out", MINUS_LENGTH)
    for n, draws in curve.draws.items():
        assert len(draws) == 2
        for d in draws:
            assert n <= d.n < n + 3 and d.n + d.n_held == 300  # whole inputs of 3 outputs
            assert set(d.figures) == set(curve.columns)
    # People follow x2, which another head of the bundle reads: from 50 ratings on, every draw
    # leaves the head it started from (the GLEU score) for it, per text, within inputs and per
    # system (8 systems), and gains beyond the interval.
    assert all(d.head == "head other" and d.switched for n in (50, 240) for d in curve.draws[n])
    assert curve.no_systems is None
    assert curve.mean(50, "calibrated", "rho") > 0.9
    assert abs(curve.mean(50, "shipped head, held out", "rho")) < 0.2
    assert curve.mean(50, "calibrated", "tau") > 0.7
    assert curve.gain_interval(50)[0] > 0.6
    assert curve.mean(240, "calibrated", "system") > curve.mean(240, "shipped head, held out",
                                                                "system")  # fmt: skip
    text = table([curve])
    assert "| d1 | mine | 25 | 273 | " in text  # 9 inputs of 3 drawn
    assert text.splitlines()[-1].endswith(" | 2 of 2 |")
    assert "| 50 | 1 of 1 | 1 of 1 | – | – |" in wins([curve])
    other = file_curve(_follows_x2(60, 2, seed=2), GLEU_HEAD, [], {}, ["whole"], draws=1,
                       n_samples=200)  # fmt: skip
    plot([curve, other], tmp_path / "c.png")
    assert (tmp_path / "c.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # People follow nothing: the start stays, judged equal to itself.
    noise = _follows_x2(40, 3, seed=3)
    noise.human = np.random.default_rng(9).normal(size=len(noise.human))
    plain = file_curve(noise, GLEU_HEAD, [X2_HEAD], {}, ["whole"], sizes=(25,), draws=1,
                       n_samples=300, max_inputs=0)  # fmt: skip
    assert plain.no_systems == "its outputs name no system"
    assert np.isnan(plain.mean(25, "calibrated", "system"))
    assert not plain.draws[25][0].switched and plain.gain_interval(25) == (0.0, 0.0)


def test_shipped_heads_are_applied_as_the_service_applies_them():
    from features.resources import MODELS_DIR
    from scorer.scoring import load_scorer

    served = load_scorer(MODELS_DIR / "default")
    texts = [
        "The cat sat on the mat.",
        "mat the on sat cat the",
        "The museum opens at nine in the morning. It closes at six.",
        "We found a cheap restaurant near the park.",
    ]
    genre = "data-to-text"
    columns = text_columns(served, texts, ["whole", "weighted", "sum"])
    columns.pop("length")
    f = HeadFile("x", genre, np.zeros(len(texts)), texts, columns)
    found = shipped_columns(served.card, f)
    assert set(found) == {"general head, in-sample", "genre head, in-sample"}
    # The two paths batch their parses differently; float32 kernels then differ in the 8th place.
    near = {"rel": 1e-5, "abs": 1e-6}
    assert found["general head, in-sample"] == pytest.approx(
        served.score(texts, genre="general"), **near
    )
    assert found["genre head, in-sample"] == pytest.approx(served.score(texts, genre=genre), **near)
    # The same heads as `training.calibration.start` reads them, from the card's sections.
    general = Head.from_section(served.card["heads"]["general"], label="general")
    assert general.predict(columns) == pytest.approx(found["general head, in-sample"])


def test_a_head_fitted_on_a_file_is_refitted_without_it():
    from training.calibration.shipped_held_out import held_out_heads, starting_head
    from training.heads.estimators.select import fit_head

    files = [_follows_x2(30, 3, seed=s) for s in (1, 2, 3)]
    on_all = fit_head(files, "whole", ["gleu", "x2"])
    sec = Head(("gleu", "x2"), on_all.coef, on_all.intercept, "whole", label="x").to_section(
        "mine", files={f.name: len(f.human) for f in files}
    )
    other = GLEU_HEAD.to_section("other", files={"elsewhere": 10})
    card = {"heads": {"mine": sec, "other": other}}
    heads = held_out_heads(card, files, "d1")
    without = fit_head(files[1:], "whole", ["gleu", "x2"])
    assert heads["mine"].coef == pytest.approx(without.coef)
    assert heads["mine"].coef != pytest.approx(on_all.coef)
    assert heads["mine"].label == "head mine, without d1"
    assert heads["other"].coef == pytest.approx(GLEU_HEAD.coef)  # it never saw d1
    assert starting_head(heads, "mine")[0] == "mine"
    assert starting_head(heads, "poetry") is None  # no general head either


def test_a_learned_head_averaged_with_the_log_probability_is_refitted_without_a_file():
    """A ridge on the states averaged in z with SmolLM2's summed log-probability (the neural
    data-to-text head) held out is the same ridge fitted on the other files, its
    log-probability weight read from the same column."""
    from training.calibration.shipped_held_out import held_out_heads
    from training.heads.learned.ridge import fit
    from training.heads.learned.rows import StateFile

    rng = np.random.default_rng(4)
    names = [f"neural_states.v1/h{i:03d}" for i in range(8)]
    lp_name = "neural.v2/logprob_sum"
    direction = rng.normal(size=8)
    files = []
    for k in range(3):
        X = rng.normal(size=(60, 8))
        lp = -20 + X @ direction + rng.normal(size=60)
        human = X @ direction + 0.5 * rng.normal(size=60)
        cols = {"gleu": rng.normal(size=60), lp_name: lp} | {
            n: X[:, i] for i, n in enumerate(names)
        }
        files.append(
            HeadFile(f"d{k + 1}", "g", human, [f"i{i}" for i in range(60)], {"whole": cols})
        )
    states = {"layer": 20, "pooling": "mean", "alpha": 1000.0, "variant": "states + logprob"}
    shipped = Head((*names, lp_name), np.ones(9), 0.0, "whole", label="x")
    sec = shipped.to_section("mine", files={f.name: 60 for f in files}, states=states)
    heads = held_out_heads({"heads": {"mine": sec}}, files, "d1")

    def state_file(f):
        c = f.columns["whole"]
        X = np.column_stack([c[n] for n in names])[:, None, None, :]
        return StateFile(f.name, f.genre, f.human, X, c[lp_name], np.arange(len(f.human)))

    ridge = fit([state_file(f) for f in files[1:]], (0, 0), "states + logprob", 1000.0, [20],
                ["mean"])  # fmt: skip
    seen = state_file(files[0])
    expected = ridge.predict(seen.states[:, 0, 0, :], seen.logprob)
    assert heads["mine"].predict(files[0].columns) == pytest.approx(expected, abs=1e-9)
    assert heads["mine"].inputs[-1] == lp_name and heads["mine"].coef[-1] > 0
