"""The last calibration rounds: the head in hand plus a ridge on many columns fitted to what it
leaves of the user's ratings (`training.heads.estimators.residual_ridge`), on synthetic ratings
whose states are random columns named as `neural_states.v1` names them, and on the real neural
tier."""

from __future__ import annotations

import numpy as np
import pytest

from scorer.heads import Head
from training.calibration.start import calibrate_from
from training.heads.data.files import MINUS_LENGTH
from training.heads.data.judged import HeadFile
from training.heads.estimators.fitted import BASE, with_base
from training.heads.estimators.residual_ridge import (
    ResidualRidge,
    choose_alpha,
    fit_rest,
    state_columns,
)

N_STATES = 24
STATES = tuple(f"neural_states.v1/h{k:03d}" for k in range(N_STATES))
SHIPPED = Head(("gleu",), [0.4], 0.1, "whole", label="head mine")


def _rated(kind: str, seed: int = 3, n_groups: int = 40, per: int = 5) -> HeadFile:
    """Ratings that follow the head and, with "states", also a direction in the states."""
    rng = np.random.default_rng(seed)
    n = n_groups * per
    cols = {"gleu": rng.normal(size=n), "surface.v2/n_tokens": rng.integers(5, 40, n) * 1.0}
    states = rng.normal(size=(n, N_STATES)) * rng.uniform(0.5, 3.0, N_STATES)
    cols |= {c: states[:, k] for k, c in enumerate(STATES)}
    direction = np.zeros(N_STATES)
    direction[:4] = [1.0, -0.8, 0.6, 0.5]
    human = 3.0 + 2.0 * (0.5 * cols["gleu"] + 0.4 * rng.normal(size=n))
    if kind == "states":
        human = human + 2.0 * (states / states.std(axis=0)) @ direction * 0.3
    groups = [f"g{i // per}" for i in range(n)]
    columns = {"whole": cols}
    return HeadFile(
        kind, "mine", human, groups, columns, {MINUS_LENGTH: -cols["surface.v2/n_tokens"]}
    )


def test_the_states_are_the_columns_only_a_learned_head_reads():
    f = _rated("head")
    assert state_columns(f, "whole") == STATES
    assert state_columns(f, "sum") == ()


def test_a_strong_ridge_gives_the_head_in_hand_back_on_the_users_scale():
    f = with_base([_rated("states")], SHIPPED)[0]
    fit = fit_rest([f], "whole", STATES, [1e-3, 1e9])
    weak, strong = np.abs(fit.coef).sum(axis=1)
    assert strong < 1e-5 < 0.1 < weak
    # What is left once the states count for nothing: the head in hand, slope kept positive.
    base = SHIPPED.predict(f.columns)
    X = np.column_stack([f.columns["whole"][c] for c in STATES])
    predicted = fit.slope * base + X @ fit.coef[1] + fit.intercept[1]
    assert fit.slope > 0
    assert np.corrcoef(predicted, base)[0, 1] == pytest.approx(1.0, abs=1e-9)


def test_the_alpha_is_the_strongest_within_one_standard_error_of_the_best():
    follows = with_base([_rated("states")], SHIPPED)
    ignores = with_base([_rated("head")], SHIPPED)
    alphas = (1.0, 100.0, 1e4, 1e7)
    # States that carry the ratings get a ridge that lets them; noise states the strongest.
    assert choose_alpha(follows, "whole", STATES, folds=5, seed=1, alphas=alphas) <= 100.0
    assert choose_alpha(ignores, "whole", STATES, folds=5, seed=1, alphas=alphas) >= 1e4


@pytest.mark.parametrize(("kind", "switched"), [("states", True), ("head", False)])
def test_the_ridge_on_the_states_is_taken_only_where_the_ratings_follow_them(kind, switched):
    f = _rated(kind)
    held = _rated(kind, seed=11)
    outcome = calibrate_from([f], SHIPPED, [], ["whole"], max_inputs=1, n_samples=400)
    (features, before), (name, ev) = outcome.rounds[-2:]
    assert features == "1 of the feature columns on what the head in hand leaves, a ridge, 5 " + (
        "folds of the inputs"
    )
    assert before.labels == ("head mine + a ridge on the feature columns",)
    assert before.chosen is None  # the length column carries nothing here
    assert name == f"{N_STATES} of SmolLM2's states on what the head in hand leaves, a ridge, " + (
        "5 folds of the inputs"
    )
    assert ev.labels == ("head mine + a ridge on SmolLM2's states",)
    assert (ev.chosen == 0) is switched and bool(ev.low[0] > 0) is switched
    assert outcome.kept is not switched
    if not switched:
        assert outcome.head is SHIPPED
        return
    head = outcome.head
    assert head.label.startswith("head mine + a ridge on SmolLM2's states (alpha ")
    assert head.inputs == ("gleu", *STATES)
    # On ratings it never saw, it orders outputs better than the head it started from.
    mine = np.corrcoef(head.predict(held.columns), held.human)[0, 1]
    theirs = np.corrcoef(SHIPPED.predict(held.columns), held.human)[0, 1]
    assert mine > theirs + 0.1
    # Written as a card holds it, it scores as fitted.
    again = Head.from_section(head.to_section("mine"), label="again")
    assert np.allclose(again.predict(held.columns), head.predict(held.columns))


def test_states_the_head_in_hand_reads_already_take_the_sum_of_both_weights():
    learned = Head(
        ("gleu", *STATES[:3]), [0.3, 0.2, -0.1, 0.05], 0.0, "whole", label="head learned"
    )
    files = with_base([_rated("states")], learned)
    ridge = ResidualRidge("whole", learned, STATES)
    head = ridge.fit(files, folds=5, seed=1)
    assert head.inputs == ("gleu", *STATES)
    fit = fit_rest(files, "whole", STATES, [float(head.label.split("alpha ")[1].split()[0])])
    assert head.coef[1] == pytest.approx(fit.slope * 0.2 + fit.coef[0, 0])
    cols = files[0].columns["whole"]
    X = np.column_stack([cols[c] for c in STATES])
    expected = fit.slope * cols[BASE] + X @ fit.coef[0] + fit.intercept[0]
    assert np.allclose(head.predict(files[0].columns), expected)
    clipped = Head((STATES[0],), [1.0], 0.0, "whole", ([-1.0], [1.0]), label="head clipped")
    with pytest.raises(ValueError, match=r"clips neural_states\.v1/h000"):
        ResidualRidge("whole", clipped, STATES).fit(with_base([_rated("states")], clipped), 5, 1)


def test_a_learned_head_is_refitted_without_a_file_as_a_ridge_on_its_states():
    from training.calibration.shipped_held_out import held_out_heads

    files = [HeadFile(f"d{k}", "mine", *_parts(_rated("states", seed=k))) for k in (1, 2, 3)]
    shipped = Head(("gleu", *STATES), np.r_[0.0, np.ones(N_STATES)], 0.0, "whole", label="x")
    states = {"layer": 20, "pooling": "mean", "variant": "states", "alpha": 100.0}
    sec = shipped.to_section("learned", files={f.name: len(f.human) for f in files}, states=states)
    heads = held_out_heads({"heads": {"learned": sec}}, files, "d1")
    head = heads["learned"]
    assert head.label == "head learned, without d1" and head.inputs == STATES
    # A ridge at the head's alpha on d2 and d3 alone: it finds the direction the ratings
    # follow, with weights of either sign (a non-negative refit could not).
    assert (head.coef[:4] > 0).tolist() == [True, False, True, True]
    d1 = files[0]
    assert np.corrcoef(head.predict(d1.columns), d1.human)[0, 1] > 0.3
    refit = held_out_heads({"heads": {"learned": sec}}, files[1:], "d2")["learned"]
    assert not np.allclose(refit.coef, head.coef)


def _parts(f: HeadFile):
    return f.human, f.groups, f.columns, f.baselines


# -- with the real neural tier -------------------------------------------------------------------


def test_a_head_with_a_ridge_on_the_states_is_written_into_the_neural_bundle_and_served(tmp_path):
    """The round fitted on SmolLM2's real states of 40 texts (10 sentences, 3 shuffles each),
    written by `fluency calibrate`'s writer and loaded as the service loads a bundle: it scores
    as fitted."""
    from web.support import shuffles

    from features.resources import MODELS_DIR
    from scorer import load_scorer
    from training.calibration.calibrate import write_bundle
    from training.heads.data.files import text_columns

    sentences = [
        "The council plans to build new homes on the site of the old factory.",
        "My grandfather grew tomatoes and beans in a small garden behind the house.",
        "The restaurant near the river serves cheap Italian food to families.",
        "She finished the report before the meeting started on Monday morning.",
        "Heavy rain closed several roads in the north of the county last night.",
        "The museum opens a new exhibition of early photographs next week.",
        "Our train was delayed because of a signal failure outside the station.",
        "He bought a second-hand bicycle and rides it to work every day.",
        "The team won the final after scoring twice in the last ten minutes.",
        "Prices at the market rose sharply after the poor harvest this year.",
    ]
    texts, groups, human = [], [], []
    for k, s in enumerate(sentences):
        for j, t in enumerate([s, *shuffles(s, 3, seed=k)]):
            texts += [t]
            groups += [f"g{k}"]
            human += [3.0 if j == 0 else 1.0 + 0.1 * j]
    neural = load_scorer("neural")
    columns = text_columns(neural, texts, ["whole"], heads=True)
    columns.pop("length")
    f = HeadFile("mine", "mine", np.array(human), groups, columns)
    start = Head.from_section(neural.card["heads"]["data-to-text"], label="head data-to-text")
    states = state_columns(f, "whole")
    assert len(states) == 576 and set(states) <= set(start.inputs)
    head = ResidualRidge("whole", start, states).fit(with_base([f], start), folds=5, seed=1)
    decision = {"ship": True, "decision": f"shipped: {head.label}"}
    out = write_bundle(
        MODELS_DIR / "neural", tmp_path / "mine", "mine", head.to_section("mine"), decision
    )
    served = load_scorer(out, models_dir=tmp_path)
    assert served.score(texts, genre="mine") == pytest.approx(head.predict(columns), abs=1e-6)
    assert served.score(texts, genre="data-to-text") == pytest.approx(
        neural.score(texts, genre="data-to-text"), abs=1e-9
    )
