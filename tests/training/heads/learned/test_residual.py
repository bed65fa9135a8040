"""The learned head's residual variant (`training.heads.learned.residual`): the current head plus a
ridge on SmolLM2's states fitted to what it leaves, held out one genre (or dataset) out and
fitted on every file, on synthetic files whose states are random columns named as
`neural_states.v1` names them."""

from __future__ import annotations

import numpy as np
import pytest

from scorer.heads import Head
from training.heads import MINUS_LENGTH, HeadFile
from training.heads.learned.residual import (
    RESIDUAL,
    base_head,
    current_from,
    fit_residual,
    held_out_residual,
)
from training.heads.metrics.figures import judge

AT = (20, "mean")  # the states extractor's layer and pooling
ALPHAS = (1.0, 1e9)
N_STATES = 16
STATES = tuple(f"neural_states.v1/h{k:03d}" for k in range(N_STATES))
# The head in hand: the GLEU score, read weighted, its weight and intercept.
CURRENT = Head(inputs=("gleu",), coef=[0.35], intercept=-0.1, reading="weighted", label="current")


def _file(name: str, genre: str, seed: int, states_weight: float) -> HeadFile:
    """Ratings that follow the GLEU score and, by `states_weight`, one direction in the states."""
    rng = np.random.default_rng(seed)
    n, per = 240, 4
    states = rng.normal(size=(n, N_STATES))
    gleu = rng.normal(size=n)
    direction = np.zeros(N_STATES)
    direction[:3] = [1.0, -0.7, 0.5]
    human = gleu + states_weight * states @ direction + 0.5 * rng.normal(size=n)
    cols = {"gleu": gleu} | {c: states[:, k] for k, c in enumerate(STATES)}
    return HeadFile(
        name,
        genre,
        human,
        [f"g{i // per}" for i in range(n)],
        {"weighted": cols},
        {MINUS_LENGTH: -rng.integers(5, 30, n).astype(float)},
    )


def _files(states_weight: float) -> list[HeadFile]:
    return [
        _file(f"{g}{k}", g, 10 * k + i, states_weight) for i, g in enumerate("abc") for k in (0, 1)
    ]


def _criterion(preds, files, by_genre=True) -> float:
    return judge(preds, files, by_genre).criterion


def test_held_out_the_states_add_what_the_current_head_misses_and_a_strong_ridge_is_the_head():
    files = _files(states_weight=0.8)
    preds = held_out_residual(files, files, True, CURRENT, AT, ALPHAS)
    assert set(preds) == {(*AT, RESIDUAL, a) for a in ALPHAS}
    weak, strong = (preds[(*AT, RESIDUAL, a)] for a in ALPHAS)
    alone = {f.name: f.columns["weighted"]["gleu"] for f in files}
    assert _criterion(weak, files) > _criterion(alone, files) + 0.15
    for f in files:  # a ridge of 1e9 per 1,000 rows adds nothing: the current head, rescaled
        assert np.corrcoef(strong[f.name], alone[f.name])[0, 1] == pytest.approx(1.0, abs=1e-6)


def test_no_file_is_scored_by_a_fit_that_saw_its_genre():
    files = _files(states_weight=0.8)
    flipped = [
        HeadFile(
            f.name,
            f.genre,
            -f.human if f.genre == "a" else f.human,
            f.groups,
            f.columns,
            f.baselines,
        )
        for f in files
    ]
    # Ratings of genre "a" turned upside down: a fit that saw them would read "a" better.
    base = held_out_residual(files, files, True, CURRENT, AT, ALPHAS)
    moved = held_out_residual(flipped, files, True, CURRENT, AT, ALPHAS)
    key = (*AT, RESIDUAL, ALPHAS[0])
    for name in ("a0", "a1"):
        assert np.allclose(base[key][name], moved[key][name])
    assert not np.allclose(base[key]["b0"], moved[key]["b0"])


def test_the_current_heads_inputs_are_refitted_without_the_unit_as_every_head_judged_is():
    files = _files(states_weight=0.0)
    one = base_head(files, CURRENT)
    assert one.inputs == ("gleu",) and one.coef.tolist() == [1.0] and one.intercept == 0.0
    two = Head(("gleu", STATES[0]), [0.3, 0.1], 0.0, "weighted", label="c")
    refit = base_head(files, two)
    assert refit.inputs == two.inputs and refit.coef[0] > 0


def test_the_fitted_head_is_one_linear_head_whose_weights_add_and_whose_base_is_kept():
    files = _files(states_weight=0.8)
    head = fit_residual(files, CURRENT, 1.0)
    assert head.reading == "weighted" and head.inputs == ("gleu", *STATES)
    assert head.coef[0] > 0 and np.abs(head.coef[1:4]).sum() > 0.5
    held = _file("new", "d", 99, 0.8)
    X = np.column_stack([held.columns["weighted"][c] for c in head.inputs])
    assert np.allclose(head.predict(held.columns), X @ head.coef + head.intercept)
    assert np.corrcoef(head.predict(held.columns), held.human)[0, 1] > 0.8
    section = head.to_section(
        "general",
        states={
            "base": {"reading": "weighted", "inputs": ["gleu"], "coef": [0.35], "intercept": -0.1}
        },
    )
    start = current_from(Head.from_section(section))
    assert start.inputs == ("gleu",) and start.coef.tolist() == [0.35]


def test_a_shipped_residual_head_is_refitted_without_a_file_as_the_learning_curve_asks():
    from training.calibration.shipped_held_out import held_out_heads

    files = _files(states_weight=0.8)
    head = fit_residual(files, CURRENT, 1.0)
    states = {"layer": 20, "pooling": "mean", "alpha": 1.0, "variant": RESIDUAL}
    states["base"] = CURRENT.base_entry()
    sec = head.to_section("general", states=states, files={f.name: len(f.human) for f in files})
    out = held_out_heads({"heads": {"general": sec}}, files, "a0")["general"]
    again = fit_residual([f for f in files if f.name != "a0"], CURRENT, 1.0)
    assert out.inputs == again.inputs and np.allclose(out.coef, again.coef)
    assert not np.allclose(out.coef, head.coef)  # the file's ratings are out of the fit


# -- with the real neural tier -------------------------------------------------------------------


def test_a_residual_general_head_is_written_served_and_explained_in_its_two_parts(tmp_path):
    """The variant fitted on SmolLM2's real states of two-sentence texts (and their shuffles)
    under the general head's reading, written as `python -m training.heads.learned --write` writes
    a head into a copy of the neural bundle and loaded as the service loads it: it scores as
    fitted, and an explanation gives the GLEU part and the states part apart, adding up."""
    import shutil

    from web.support import shuffles

    from features.resources import MODELS_DIR
    from scorer import load_scorer
    from scorer.explain import as_dict, explain_texts
    from training.heads.data.files import text_columns
    from training.heads.learned.candidates import residual_section
    from training.heads.learned.report import write_heads

    pairs = [
        ("The council plans to build new homes.", "Work starts on the site next spring."),
        ("My grandfather grew tomatoes in his garden.", "He gave most of them away."),
        ("The restaurant near the river serves Italian food.", "It is cheap and friendly."),
        ("Heavy rain closed several roads last night.", "Two villages were cut off."),
        ("The museum opens a new exhibition next week.", "It shows early photographs."),
        ("Our train was delayed by a signal failure.", "We reached the city an hour late."),
    ]
    texts, groups, human = [], [], []
    for k, (a, b) in enumerate(pairs):
        for j, first in enumerate([a, *shuffles(a, 2, seed=k)]):
            texts.append(f"{first} {b}")
            groups.append(f"g{k}")
            human.append(3.0 - j)
    shutil.copytree(MODELS_DIR / "neural", tmp_path / "neural")
    neural = load_scorer(tmp_path / "neural", models_dir=tmp_path)
    section = neural.card["heads"]["general"]
    current = Head.from_section(section, label="current")
    columns = text_columns(neural, texts, [current.reading], heads=True)
    columns.pop("length")
    f = HeadFile("mine", "mine", np.array(human), groups, columns)
    head = fit_residual([f], current, 100.0)
    decision = {"decision": "shipped: for the test"}
    sec = residual_section(
        head, (20, "mean", RESIDUAL, 100.0), current, [f], decision, "test", "general", "test"
    )
    write_heads(neural, {"general": sec}, {"general": {"decision": "shipped: for the test"}})
    served = load_scorer(tmp_path / "neural", models_dir=tmp_path)
    assert served.score(texts) == pytest.approx(head.predict(columns), abs=1e-6)
    assert served.card["heads"]["general"]["states"]["base"]["inputs"] == list(current.inputs)
    for e in explain_texts(served, texts[:3]):
        c = as_dict(e, top=1000)["contributions"]
        parts = c["parts"]
        assert set(parts) >= {"intercept", "GLEU score", "SmolLM2 states"}
        assert sum(parts.values()) == pytest.approx(e.fluency, abs=1e-6)
        assert parts["GLEU score"] == pytest.approx(head.coef[0] * e.gleu, abs=1e-6)
        listed = c["intercept"] + sum(x["contribution"] for x in c["features"]) + c["rest"]
        assert listed + c["residual"] == pytest.approx(e.fluency, abs=1e-6)
        assert any(x["feature"] == "SmolLM2 states" for x in c["features"])
