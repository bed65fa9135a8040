"""The selection that chose the shipped heads (`training.heads.selection.choose.choose`, which
`fluency benchmark --protocol lodo` calls): one file held out by folds of whole inputs, several by
file or by genre, and a fitted head that loses to its best single input ships the input."""

from __future__ import annotations

import numpy as np
import pytest

from scorer.errors import InputError
from training.calibration.calibrate import write_bundle
from training.heads.data.files import MINUS_LENGTH
from training.heads.data.judged import HeadFile, input_folds
from training.heads.selection.choose import choose
from training.heads.tier import section


def _file(name, rng, *, n_groups=40, per=4, genre="mine", noise=0.5):
    """People follow `gleu` (with noise); `x2` is noise; `row` numbers the outputs."""
    n = n_groups * per
    gleu = rng.normal(size=n)
    human = gleu + noise * rng.normal(size=n)
    cols = {"gleu": gleu, "x2": rng.normal(size=n), "row": np.arange(n, dtype=float)}
    groups = [f"{name}{i // per}" for i in range(n)]
    return HeadFile(name, genre, human, groups, {"whole": cols}, {MINUS_LENGTH: rng.normal(size=n)})


def test_input_folds_keep_each_input_whole_and_every_output_once():
    f = _file("a", np.random.default_rng(0), n_groups=31, per=3)
    folds = input_folds(f, 3, seed=4)
    assert [x.name for x in folds] == ["a#1", "a#2", "a#3"]
    rows = [x.columns["whole"]["row"].astype(int) for x in folds]
    assert sorted(np.concatenate(rows).tolist()) == list(range(len(f.human)))
    for x, r in zip(folds, rows, strict=True):  # every column and the baseline move together
        assert x.human.tolist() == f.human[r].tolist()
        assert x.groups == [f.groups[i] for i in r]
        assert x.baselines[MINUS_LENGTH].tolist() == f.baselines[MINUS_LENGTH][r].tolist()
    owners = {g: {x.name for x in folds if g in x.groups} for g in f.groups}
    assert all(len(o) == 1 for o in owners.values())  # an input is never split
    sizes = [len(x.human) for x in folds]
    assert max(sizes) - min(sizes) <= 3  # one input of 3 outputs at most apart
    with pytest.raises(InputError, match="at least 2"):
        input_folds(f, 1)
    with pytest.raises(InputError, match="fewer than 5 folds"):
        input_folds(_file("b", np.random.default_rng(1), n_groups=4), 5)


def test_one_file_is_held_out_by_folds_several_by_file_or_by_genre():
    rng = np.random.default_rng(2)
    one = choose([_file("a", rng)], ["whole"], n_samples=50)
    assert one.decision["held_out"] == "5 folds of the inputs of a"
    assert set(one.decision["table"][0]["per_file"]) == {f"a#{i}" for i in range(1, 6)}
    assert one.ships and one.fitted.inputs == ("gleu",) and not one.fell_back
    files = [_file(n, rng, genre=g) for n, g in (("a", "g1"), ("b", "g1"), ("c", "g2"))]
    assert choose(files, ["whole"], n_samples=50).decision["held_out"] == "one dataset out"
    by_genre = choose(files, ["whole"], by_genre=True, n_samples=50)
    assert by_genre.decision["held_out"] == "one genre out"
    same_genre = [_file(n, rng) for n in "ab"]
    assert choose(same_genre, ["whole"], by_genre=True, n_samples=50).decision["held_out"] == (
        "one dataset out"
    )


def _within_and_across(rng, n_groups=150, per=6):
    """People rate inputs apart by their quality q and the outputs of one input apart by w.
    `gleu` orders the outputs of an input exactly (w) but reads q under a large offset per input;
    `x2` reads q closely and the outputs of an input in a random order. Fitted on the human
    scores, gleu + x2 ranks across inputs far better (rho) and within them worse (tau)."""
    n = n_groups * per
    q = np.repeat(rng.normal(size=n_groups), per)
    w = rng.normal(size=n)
    human = 2.0 * q + w
    gleu = q + 1.5 * np.repeat(rng.normal(size=n_groups), per) + w
    x2 = q + 0.05 * rng.normal(size=n)
    groups = [str(i // per) for i in range(n)]
    minus_length = -human + 3.0 * rng.normal(size=n)  # worse than either input
    return HeadFile("mine", "mine", human, groups, {"whole": {"gleu": gleu, "x2": x2}},
                    {MINUS_LENGTH: minus_length})  # fmt: skip


def test_a_fitted_head_that_loses_to_its_best_single_input_ships_the_input(tmp_path):
    from features.resources import MODELS_DIR
    from scorer.scoring import load_scorer
    from training.heads.estimators.select import held_out
    from training.heads.metrics.figures import judge

    f = _within_and_across(np.random.default_rng(3))
    choice = choose([f], ["whole"], n_samples=100)
    # The selection added x2: held out, rho + tau rose with an interval above zero ...
    assert choice.selected == ("whole", ("gleu", "x2"))
    folds = input_folds(f, 5, seed=12345)  # the folds `choose` holds out
    both, alone = (
        judge(held_out(folds, "whole", inputs, False), folds, False)
        for inputs in (["gleu", "x2"], ["gleu"])
    )
    assert both.criterion > alone.criterion and both.rho > alone.rho + 0.2
    # ... but per-input tau fell, so the head does not beat gleu alone on both means: gleu ships.
    assert both.tau < alone.tau - 0.1
    assert choice.fell_back and choice.ships
    assert choice.fitted.inputs == ("gleu",)
    assert "did not beat gleu (whole) on both means" in choice.decision["decision"]
    head, _, best = choice.decision["table"][:3]
    assert best["label"] == "best single input: gleu (whole)"
    assert (
        (head["rho"], head["tau"])
        == (best["rho"], best["tau"])
        == (
            pytest.approx(alone.rho, abs=1e-4),
            pytest.approx(alone.tau, abs=1e-4),
        )
    )

    # Written into a copy of the default, the genre serves gleu alone through the head's weights.
    held = choice.decision["held_out"]
    card_head = section(choice.fitted, [f], choice.decision, genre="mine", held=held, command="")
    models = tmp_path / "models"
    write_bundle(MODELS_DIR / "default", models / "mine", "mine", card_head, choice.decision)
    served = load_scorer(models / "mine", models_dir=models)
    assert "mine" in served.genres and served.card["name"] == "mine"
    mine = served.for_genre("mine")
    assert mine.head.inputs == ("gleu",)
    texts = ["The hotel is near the station.", "station the near hotel is the"]
    scores = mine.score_texts(texts)
    coef, intercept = choice.fitted.coef[0], choice.fitted.intercept
    assert [s.score for s in scores] == pytest.approx([coef * s.gleu + intercept for s in scores])
    assert scores[0].score > scores[1].score
    report = served.card["heads_report"]["mine"]
    assert report["decision"] == choice.decision["decision"]
    assert set(served.genres) > {"general", "mine", "data-to-text"}  # the default's heads kept
