"""`fluency calibrate`'s choice: the rule that leaves the starting head only on evidence, on
arrays and on synthetic ratings; a bundle that serves a head under its genre; and the shipped
bundles it copies. The selection that chose them: tests/training/heads/selection/test_choose.py."""

from __future__ import annotations

import json

import numpy as np
import pytest

from scorer.errors import ModelLoadError
from scorer.evidence.benchmark_data import is_empty_output
from scorer.heads import Head
from training.calibration.start import calibrate_from, named_readings
from training.calibration.switch import evidence, switch_to
from training.heads.data.files import MINUS_LENGTH
from training.heads.data.judged import HeadFile

# -- the switch rule, on arrays ------------------------------------------------------------------


def test_a_gain_clearly_above_zero_switches_and_none_does_when_gains_are_noise():
    rng = np.random.default_rng(0)
    sampled = rng.normal(size=(2000, 3)) * 0.05
    gain = np.array([0.01, 0.30, 0.02])
    chosen, low = switch_to(gain, sampled + gain)
    assert chosen == 1 and low[1] > 0.15 and (low[[0, 2]] < 0).all()
    chosen, low = switch_to(np.zeros(3), sampled)
    assert chosen is None and (low < 0).all()
    # Two candidates above zero: the larger gain wins.
    two = np.array([0.4, 0.3, 0.0])
    chosen, _ = switch_to(two, sampled + two)
    assert chosen == 0


def test_the_bound_holds_for_every_candidate_tried_at_once():
    # A gain of 2.2 standard errors is above zero at 95% for one candidate alone (1.96), not
    # as the best of 50 independent ones: the largest of 50 noises passes 2.2 most of the time.
    rng = np.random.default_rng(1)
    noise = rng.normal(size=(4000, 50))
    gain = np.zeros(50)
    gain[7] = 2.2
    alone, low_alone = switch_to(gain[[7]], noise[:, [7]] + 2.2)
    assert alone == 0 and 0.1 < low_alone[0] < 0.4
    chosen, low = switch_to(gain, noise + gain)
    assert chosen is None and low[7] < 0
    # A candidate that ties the start on every draw (the same ranking) is never taken.
    chosen, low = switch_to(np.zeros(1), np.zeros((100, 1)))
    assert chosen is None and low[0] == 0


def test_ranks_down_columns_are_scipys_with_ties_averaged():
    from scipy.stats import rankdata

    from training.heads.metrics.draws import ranks, rhos

    X = np.random.default_rng(2).integers(0, 4, size=(40, 6)).astype(float)  # many ties
    assert ranks(X) == pytest.approx(rankdata(X, axis=0))
    human = X[:, 0] + np.arange(40) / 100
    expected = [np.corrcoef(rankdata(X[:, k]), rankdata(human))[0, 1] for k in range(6)]
    assert rhos(X, human) == pytest.approx(expected)
    assert rhos(np.ones((5, 1)), np.arange(5.0))[0] == 0  # a constant orders nothing


# -- the switch rule, on synthetic ratings -------------------------------------------------------


def _rated(kind: str, seed: int = 5, n_groups: int = 25, per: int = 4) -> HeadFile:
    """100 ratings of 25 inputs: people follow minus the length, or the shipped head (`gleu`),
    or nothing at all."""
    rng = np.random.default_rng(seed)
    n = n_groups * per
    length = rng.integers(5, 40, size=n).astype(float)
    cols = {"gleu": rng.normal(size=n), "surface.v2/n_tokens": length, "x2": rng.normal(size=n)}
    human = {
        "length": -length / 10 + 0.5 * rng.normal(size=n),
        "head": cols["gleu"] + 0.5 * rng.normal(size=n),
        "noise": rng.normal(size=n),
    }[kind]
    columns = {"whole": cols, "sum": dict(cols)}
    groups = [f"g{i // per}" for i in range(n)]
    return HeadFile(kind, "mine", human, groups, columns, {MINUS_LENGTH: -length})


SHIPPED = Head(("gleu",), [0.4], 0.1, "whole", label="head mine")


@pytest.mark.parametrize(
    ("kind", "head"),
    [("length", "minus the length"), ("head", "head mine"), ("noise", "head mine")],
)
def test_the_starting_head_is_left_only_for_a_reading_people_follow(kind, head):
    f = _rated(kind)
    named = named_readings({"heads": {"mine": SHIPPED.to_section("mine")}}, ["whole", "sum"],
                           f.columns)  # fmt: skip
    assert [h.label for h in named] == [
        "head mine",
        "minus the length",
        "the GLEU score (whole)",
        "the GLEU score (sum)",
    ]
    outcome = calibrate_from([f], SHIPPED, named, ["whole", "sum"], max_inputs=1, n_samples=400)
    assert outcome.head.label == head
    assert outcome.kept is (head == "head mine")
    (_, first), (_, fitted), (last, ridge) = outcome.rounds
    assert last.endswith("of the feature columns on what the head in hand leaves, a ridge, 5 folds "
                         "of the inputs")  # fmt: skip
    assert ridge.labels == (f"{outcome.head.label} + a ridge on the feature columns",)
    assert ridge.chosen is None
    assert first.labels == ("minus the length", "the GLEU score (whole)", "the GLEU score (sum)")
    if kind == "length":
        assert first.chosen == 0 and first.low[0] > 0
        assert outcome.notes[0].startswith("named readings: minus the length gained +")
        # Written on the ratings' scale: z-normalised, a longer output scored lower.
        values = outcome.head.predict(f.columns)
        assert np.corrcoef(values, f.target)[0, 1] > 0.8
        assert outcome.head.coef[0] < 0 and abs(values.mean()) < 0.05
    else:
        assert first.chosen is None and fitted.chosen is None
        assert outcome.notes[0].startswith("named readings: none of 3 gained above zero at 95%")
        assert outcome.head is SHIPPED  # written as the bundle has it
    # Fitted candidates are judged in folds: the head in hand plus a column, and each column.
    assert "x2 (whole)" in fitted.labels and f"{outcome.head.label} + x2" in fitted.labels


def test_too_few_inputs_to_judge_a_switch_on_keep_the_start():
    # Two inputs of many outputs each: people follow the length here, but a bootstrap over two
    # inputs has three distinct draws, and two inputs do not stand for the next ones.
    f = _rated("length", n_groups=9, per=11)
    named = named_readings({}, ["whole"], f.columns)
    outcome = calibrate_from([f], SHIPPED, named, ["whole"], n_samples=200)
    assert outcome.kept and outcome.rounds == []
    assert outcome.notes == [
        "9 inputs, fewer than 10: too few to judge a switch on, nothing tried (rate more "
        "inputs, or leave --group-column out where outputs are not grouped)"
    ]
    more = _rated("length", n_groups=10, per=10)
    assert not calibrate_from([more], SHIPPED, named, ["whole"], n_samples=200).kept


def test_the_gain_is_judged_on_draws_of_inputs_for_every_candidate_at_once():
    f = _rated("length")
    start = {f.name: f.columns["whole"]["gleu"]}
    minus = {f.name: -f.columns["whole"]["surface.v2/n_tokens"]}
    ev = evidence(start, {"minus": minus, "same": start}, [f], n_samples=300)
    assert ev.chosen == 0 and ev.gain[1] == 0 and ev.low[1] == 0
    # Without inputs (every output its own), the same rule reads rho alone.
    from training.heads.metrics.figures import spearman

    alone = HeadFile(f.name, "mine", f.human, [str(i) for i in range(len(f.human))], f.columns)
    ev = evidence(start, {"minus": minus}, [alone], n_samples=300)
    assert ev.point[0] == pytest.approx(spearman(minus[f.name], f.human))
    assert ev.start == pytest.approx(spearman(start[f.name], f.human))
    assert ev.chosen == 0


@pytest.mark.parametrize(
    ("text", "failed"),
    [("", True), ("  ", True), ("null", True), (" NULL\n", True), ("None", True), ("No.", False)],
)
def test_failed_outputs(text, failed):
    assert is_empty_output(text) is failed


def default_scorer_path():
    from features.resources import MODELS_DIR

    return MODELS_DIR / "default"


def test_the_shipped_default_is_its_gleu_stage_and_heads_chosen_on_people():
    # The default's GLEU stage under heads chosen by training.heads: the general one held out
    # by genre, each genre head by dataset, each linear and served from the card, with no
    # pickle beside it and no scikit-learn imported to serve it.
    import subprocess
    import sys

    from features.resources import MODELS_DIR
    from scorer.scoring import load_scorer

    folder = MODELS_DIR / "default"
    served = load_scorer(folder)
    section = served.card["heads"]["general"]
    assert section["genre"] == "general" and section["held_out"].startswith("one genre out")
    assert {"data-to-text", "mt", "summaries"} <= set(served.heads)
    for genre in served.genres:
        head = served.for_genre(genre).head
        assert type(head).__name__ == "Head"  # NumPy arithmetic, nothing unpickled
        assert head.inputs[0] == "gleu"
    texts = [
        "The company said profits rose in the first quarter.",
        "The company said profits rose the in first quarter.",
        "profits the quarter rose said",
    ]
    scores = served.score_texts(texts)
    bare = served.gleu_stage().score_texts(texts)
    assert [s.gleu for s in scores] == pytest.approx([s.score for s in bare], abs=1e-9)
    assert [s.score for s in scores] != pytest.approx([s.gleu for s in scores], abs=1e-3)
    assert scores[0].score > scores[1].score > scores[2].score
    code = (
        "import sys\n"
        "from scorer.scoring import load_scorer\n"
        f"s = load_scorer({str(folder)!r})\n"
        "print(s.score(['The cat sat on the mat.'], genre='mt')[0])\n"
        "print('sklearn' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    value, imported = out.stdout.split()
    assert imported == "False"
    expected = served.score(["The cat sat on the mat."], genre="mt")[0]
    assert float(value) == pytest.approx(expected, abs=1e-9)


def test_the_service_returns_calibrated_fluency_beside_gleu():
    from features.resources import MODELS_DIR
    from scorer.web import create_app

    app = create_app({"TESTING": True, "MODELS_DIR": str(MODELS_DIR), "MODEL_PATH": "default"})
    client = app.test_client()
    texts = ["The cat sat on the mat.", "mat the on sat cat the"]
    scores = client.post("/v1/score", json={"sentences": texts}).get_json()["scores"]
    assert all(s["fluency"] != s["gleu"] for s in scores)
    assert scores[0]["fluency"] > scores[1]["fluency"] and scores[0]["gleu"] > scores[1]["gleu"]
    ranked = client.post("/v1/rerank", json={"candidates": texts[::-1]}).get_json()["ranked"]
    assert [r["index"] for r in ranked] == [1, 0]
    assert ranked[0]["fluency"] == pytest.approx(scores[0]["fluency"])
    assert ranked[0]["gleu"] == pytest.approx(scores[0]["gleu"])


def test_data_to_text_is_the_defaults_head_for_its_genre_served_under_its_old_name():
    # models/data-to-text was the default's GLEU stage (the same file) under a second stage of
    # its own; it is now the default's data-to-text head, and the old name still serves it.
    from features.resources import MODELS_DIR
    from scorer import load_scorers
    from scorer.bundles import describe
    from scorer.web import create_app

    assert not (MODELS_DIR / "data-to-text").exists()  # no second copy of the GLEU stage
    scorers = load_scorers(["default", "data-to-text"], models_dir=MODELS_DIR)
    default, d2t = scorers["default"], scorers["data-to-text"]
    assert d2t.rows is default.rows  # one parse for both
    head = default.card["heads"]["data-to-text"]
    assert head["genre"] == "data-to-text"
    assert sorted(head["files"]) == [
        "e2e2017",
        "novikova2017_bagel",
        "novikova2017_sfhot",
        "novikova2017_sfres",
        "webnlg2017",
        "webnlg2020",
    ]
    assert d2t.card["model_sha256"] == default.card["model_sha256"]
    assert d2t.genre == "data-to-text" and d2t.aggregate_for() == head["aggregate"]
    assert d2t.head.inputs == default.heads["data-to-text"].inputs
    texts = [
        "The Eagle is a coffee shop near Burger King. It serves Italian food.",
        "The Eagle is a coffee shop near Burger King. It serve Italian food food.",
        # Two sentences, as the others: the head reads texts whole, and a whole text of two
        # sentences pays for its second root (docs/model.md, "Genre heads").
        "coffee shop The Eagle near is Burger King. food Italian serves it.",
    ]
    scored = d2t.score_texts(texts)
    assert [s.score for s in scored] == [
        s.score for s in default.score_texts(texts, genre="data-to-text")
    ]
    assert d2t.aggregate_for() == head["aggregate"]  # the reading it was chosen with
    assert scored[0].score > scored[1].score > scored[2].score
    assert describe(d2t)["genre"] == "data-to-text"
    app = create_app(
        {"TESTING": True, "MODELS_DIR": str(MODELS_DIR), "MODELS": "default,data-to-text"}
    )
    client = app.test_client()
    named = {m["name"]: m for m in client.get("/v1/models").get_json()["models"]}
    assert named["data-to-text"]["genre"] == "data-to-text"
    old = client.post("/v1/score", json={"sentences": texts, "model": "data-to-text"})
    new = client.post("/v1/score", json={"sentences": texts, "genre": "data-to-text"})
    assert [s["fluency"] for s in old.get_json()["scores"]] == [
        s["fluency"] for s in new.get_json()["scores"]
    ]


def test_a_card_whose_clip_bounds_do_not_match_its_inputs_is_refused(tmp_path):
    # The bounds are read with the inputs they belong to: a card edited out of step with them
    # must not load, or every input after the gap would be clipped to another's range.
    import shutil

    from features.resources import MODELS_DIR
    from scorer.scoring import load_scorer

    folder = tmp_path / "default"
    shutil.copytree(MODELS_DIR / "default", folder)
    card = json.loads((folder / "card.json").read_text())
    card["heads"]["general"]["clip"]["low"].pop()
    (folder / "card.json").write_text(json.dumps(card))
    with pytest.raises(ModelLoadError, match="clip"):
        load_scorer(folder)
