"""The second stage's choices: the within-input ranker, the readings as inputs (the same values in
training and in service), and the reading of a text a bundle is fitted and served with."""

from __future__ import annotations

import json

import joblib
import numpy as np
import pytest

from features.resources import MODELS_DIR
from scorer.calibration import CALIBRATION_FILE, READINGS
from scorer.ranking import InputRanker, input_pairs
from training.calibrate import calibrate, judged_file
from training.second_stage import design, inputs_of


def test_input_pairs_stay_inside_inputs_and_skip_ties():
    y = np.array([1.0, 2.0, 2.0, 5.0, 1.0])
    i, j = input_pairs(y, ["a", "a", "a", "b", "b"], max_pairs=100, seed=0)
    pairs = {tuple(sorted(p)) for p in zip(i.tolist(), j.tolist(), strict=True)}
    assert pairs == {(0, 1), (0, 2), (3, 4)}  # 1 and 2 tie; nothing crosses inputs


def test_the_ranker_learns_the_order_within_inputs_that_a_regression_misses():
    # Each input has its own level (a nuisance the raters' scale carries, here 5x the signal);
    # inside an input people follow x0. Regression on raw scores chases the levels through x1;
    # the ranker, fitted on within-input pairs only, recovers x0.
    rng = np.random.default_rng(0)
    n_inputs, per = 200, 5
    level = np.repeat(rng.normal(scale=5.0, size=n_inputs), per)
    x0 = rng.normal(size=n_inputs * per)
    x1 = level + rng.normal(scale=0.5, size=n_inputs * per)
    y = level + x0
    groups = np.repeat(np.arange(n_inputs), per).tolist()
    X = np.column_stack([x0, x1])
    ranker = InputRanker(C=1.0).fit(X, y, groups=groups)
    w = ranker.coef_ / np.abs(ranker.coef_).sum()
    assert w[0] > 0.9
    pred = ranker.predict(X)
    assert np.isfinite(pred).all() and abs(np.polyfit(pred, y, 1)[0] - 1.0) < 0.5
    with pytest.raises(ValueError, match="scored apart"):
        InputRanker().fit(X[:3], np.ones(3), groups=["a", "a", "b"])


def test_pairs_across_inputs_add_the_order_between_inputs_and_stay_inside_datasets():
    # Between inputs people follow x1 (the level); within inputs, x0. The within-input ranker
    # sees only x0; with half its pairs drawn across inputs it weighs x1 too. No pair drawn
    # across inputs joins two datasets.
    from scorer.ranking import dataset_pairs

    rng = np.random.default_rng(0)
    n_inputs, per = 200, 5
    level = np.repeat(rng.normal(scale=2.0, size=n_inputs), per)
    x0, x1 = rng.normal(size=n_inputs * per), level + rng.normal(scale=0.1, size=n_inputs * per)
    y = level + x0
    groups = np.repeat(np.arange(n_inputs), per).tolist()
    datasets = ["d1" if g < 100 else "d2" for g in groups]
    X = np.column_stack([x0, x1])
    within = InputRanker(C=1.0).fit(X, y, groups=groups, datasets=datasets)
    both = InputRanker(C=1.0, across=0.5).fit(X, y, groups=groups, datasets=datasets)
    share = lambda r: abs(r.coef_[1]) / np.abs(r.coef_).sum()  # noqa: E731
    assert share(within) < 0.2 and share(both) > share(within) + 0.2
    assert repr(both) == "InputRanker(C=1, across=0.5)" and repr(within) == "InputRanker(C=1)"
    i, j = dataset_pairs(y, datasets, n_pairs=500, seed=0)
    assert 400 <= len(i) <= 500
    assert all(datasets[a] == datasets[b] for a, b in zip(i, j, strict=True))


def _synthetic(name: str, n: int, sign: float, seed: int):
    from training.second_stage import JudgedFile

    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    human = sign * x + rng.normal(scale=0.3, size=n)
    return JudgedFile(
        name=name,
        texts=[""] * n,
        groups=[str(k // 4) for k in range(n)],
        human=human,
        gleu=x,
        features=[{} for _ in range(n)],
        n_left_out=0,
    )


def test_every_dataset_weighs_the_same_in_the_fit_whatever_its_size():
    # A dataset of 1,000 outputs and one of 100 that read the GLEU score the opposite way: the
    # fit weighted by dataset is the fit with the small one repeated ten times, so neither sets
    # the weights alone (unweighted, the large one would).
    from training.second_stage import candidates, dataset_weights, fit_on, targets

    big, small = _synthetic("big", 1000, 1.0, 0), _synthetic("small", 100, -1.0, 1)
    w = dataset_weights([big, small])
    assert w[:1000].sum() == pytest.approx(w[1000:].sum()) and w.mean() == pytest.approx(1.0)
    affine = candidates()["linear(gleu only)"]
    weighted = fit_on(affine, [big, small], [], ())
    repeated = [big] + [small] * 10
    X = design(repeated, [], ())
    from sklearn.linear_model import LinearRegression

    # `targets` z-normalises within each dataset; repeat that for the reference fit.
    y = np.concatenate([targets([big]), np.tile(targets([small]), 10)])
    plain = LinearRegression().fit(X[:, :1], y)
    assert weighted.model.steps[-1][1].coef_[0] == pytest.approx(plain.coef_[0], abs=1e-9)
    assert abs(weighted.model.steps[-1][1].coef_[0]) < 0.15  # the two datasets cancel out
    unweighted = LinearRegression().fit(design([big, small], [], ())[:, :1], targets([big, small]))
    assert unweighted.coef_[0] > 0.5


def test_the_ranker_weighs_pairs_by_their_outputs_weights():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 2))
    y = X[:, 0] - X[:, 1] + rng.normal(scale=0.5, size=400)
    groups = [k // 5 for k in range(400)]
    plain = InputRanker(C=1.0).fit(X, y, groups=groups)
    ones = InputRanker(C=1.0).fit(X, y, groups=groups, sample_weight=np.ones(400))
    assert ones.coef_ == pytest.approx(plain.coef_, abs=1e-12)
    # Weight only where x1 is the signal: the ranker follows those inputs.
    y2 = np.where(np.arange(400) < 200, X[:, 0], X[:, 1])
    w = np.where(np.arange(400) < 200, 0.0, 1.0)
    second = InputRanker(C=1.0).fit(X, y2, groups=groups, sample_weight=w)
    assert abs(second.coef_[1]) > 5 * abs(second.coef_[0])


GOOD = [
    "The hotel is near the station. It has a pool and a bar.",
    "Our restaurant serves Italian food in the city centre.",
    "The cat sat on the mat.",
    "She has lived in London for ten years. She works in a bank.",
]
BAD = [
    "hotel the near station is the. pool a has it",
    "food Italian serves in centre city our",
    "mat the on sat cat the",
    "London years ten in lived has she",
]


def _datasets(folder):
    for k, name in enumerate(("one", "two", "three")):
        rows = [
            {"text": t, "score": 4.0 - i % 2 + k, "scores": {}, "refs": [], "group": str(i),
             "system": "good"}
            for i, t in enumerate(GOOD)
        ] + [
            {"text": t, "score": 1.0 + k + 0.1 * i, "scores": {}, "refs": [], "group": str(i),
             "system": "bad"}
            for i, t in enumerate(BAD)
        ]  # fmt: skip
        (folder / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return sorted(folder.glob("*.jsonl"))


@pytest.fixture(scope="module")
def default():
    from scorer.scoring import load_scorer

    return load_scorer(MODELS_DIR / "default")


def test_a_bundle_reading_readings_serves_what_it_was_fitted_on(tmp_path, default):
    from scorer.scoring import load_scorer

    paths = _datasets(tmp_path)
    cache = tmp_path / "rows"
    section = calibrate(
        default,
        MODELS_DIR / "default",
        paths,
        tmp_path / "models" / "cal",
        candidates=["ridge(alpha=10)", "ranker(C=1)"],
        input_sets=["features+readings"],
        aggregates=["whole", "min"],
        cache_dir=cache,
    )
    assert section["inputs"][-len(READINGS) :] == list(READINGS)
    assert section["aggregate"] in ("whole", "min") and set(section["aggregates"]) == {
        "whole",
        "min",
    }
    served = load_scorer(tmp_path / "models" / "cal", models_dir=tmp_path / "models")
    assert served.calibration.needs_readings
    assert served.aggregate_for() == section["aggregate"]  # read as it was fitted
    assert served.aggregate_for(aggregate="weighted") == "weighted"  # unless asked otherwise
    judged = judged_file(default, paths[0], cache_dir=cache, aggregate=section["aggregate"])
    model = joblib.load(tmp_path / "models" / "cal" / CALIBRATION_FILE)
    columns = list(default.card["feature_columns"])
    expected = model.predict(design([judged], columns, READINGS))
    got = [s.score for s in served.score_texts(judged.texts)]
    # spaCy's confidences move in the 7th digit with the batch a text is parsed in
    assert got == pytest.approx(expected.tolist(), abs=1e-5)
    # The readings themselves: a text of two sentences read both ways.
    r = judged.readings
    two = judged.texts.index(GOOD[0])
    assert r["reading/n_sentences"][two] == 2.0
    assert r["reading/min"][two] <= r["reading/weighted"][two] <= r["reading/max"][two]
    assert r["reading/n_tokens"][two] > r["reading/n_tokens"][judged.texts.index(GOOD[2])]


def test_readings_go_last_in_the_inputs():
    assert inputs_of(["a/x"], "features+readings") == ["gleu", "a/x", *READINGS]
    assert inputs_of(["a/x"], "features") == ["gleu", "a/x"]


@pytest.mark.parametrize("name", ["linear(gleu only)", "ridge(alpha=10)", "huber(epsilon=1.35)",
                                  "ranker(C=1)", "gbrt(depth=2)"])  # fmt: skip
def test_a_linear_stage_is_served_as_numpy_arithmetic_with_the_same_scores(name):
    from scorer.calibration import LinearStage, linear_form
    from training.second_stage import candidates

    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 5)) * [1, 10, 0.1, 3, 1] + [0, 5, -2, 0, 1]
    y = X @ [1.0, 0.1, -3.0, 0.2, 0.0] + rng.normal(size=300)
    model = candidates()[name]
    model = (
        model.fit(X, y, groups=[str(i // 4) for i in range(300)])
        if "ranker" in name
        else (model.fit(X, y))
    )
    form = linear_form(model)
    if name.startswith("gbrt"):
        assert form is None  # not linear: stays a pickle
        return
    stage = LinearStage(form["coef"], form["intercept"])
    assert stage.predict(X) == pytest.approx(model.predict(X), abs=1e-9)


def test_a_linear_bundle_loads_and_scores_without_scikit_learn(tmp_path, default):
    import subprocess
    import sys

    paths = _datasets(tmp_path)
    calibrate(
        default,
        MODELS_DIR / "default",
        paths,
        tmp_path / "models" / "lin",
        candidates=["ridge(alpha=10)"],
        cache_dir=tmp_path / "rows",
    )
    card = json.loads((tmp_path / "models" / "lin" / "card.json").read_text())
    assert len(card["calibration"]["linear"]["coef"]) == len(card["calibration"]["inputs"])
    code = (
        "import sys\n"
        "from scorer.scoring import load_scorer\n"
        f"s = load_scorer({str(tmp_path / 'models' / 'lin')!r}, "
        f"models_dir={str(tmp_path / 'models')!r})\n"
        "print(s.score(['The cat sat on the mat.'])[0])\n"
        "print('sklearn' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    value, imported = out.stdout.split()
    assert imported == "False"
    from scorer.scoring import load_scorer

    served = load_scorer(tmp_path / "models" / "lin", models_dir=tmp_path / "models")
    pickled = joblib.load(tmp_path / "models" / "lin" / CALIBRATION_FILE)
    assert served.calibration.model.__class__.__name__ == "LinearStage"
    assert float(value) == pytest.approx(served.score(["The cat sat on the mat."])[0], abs=1e-9)
    assert pickled.predict is not None
