"""The calibration stage: leave-one-file-out selection, and a bundle that carries both stages."""

from __future__ import annotations

import json

import numpy as np
import pytest

from scorer.errors import InputError, ModelLoadError
from training.calibrate import (
    JudgedFile,
    calibrate,
    input_folds,
    is_failed_output,
    leave_one_file_out,
)
from training.second_stage import candidates as _candidates


def _file(name: str, sign: float, n: int = 30, seed: int = 0) -> JudgedFile:
    rng = np.random.default_rng(seed)
    gleu = rng.normal(size=n)
    noise = rng.normal(size=n)
    return JudgedFile(
        name=name,
        texts=[f"t{i}" for i in range(n)],
        groups=[str(i // 3) for i in range(n)],
        human=sign * gleu + 0.1 * noise,
        gleu=gleu,
        features=[{"f": float(v)} for v in noise],
        n_left_out=0,
    )


def test_a_held_out_file_is_never_seen_in_its_own_fit():
    # Two files where people agree with GLEU and one where they disagree: fitted on the other
    # two, the model must score the contrary file backwards (Spearman near -1). Had the held-out
    # file leaked into its fit, the ridge would have been pulled towards it.
    files = [_file("a", 1.0, seed=1), _file("b", 1.0, seed=2), _file("c", -1.0, seed=3)]
    ridge = {"ridge(alpha=1)": _candidates()["ridge(alpha=1)"]}
    out = leave_one_file_out(files, ["f"], ridge)["ridge(alpha=1)"]
    assert out["c"]["spearman"] < -0.9
    assert set(out) == {"a", "b", "c"}


def test_input_folds_keep_each_input_whole_and_every_output_once():
    f = _file("a", 1.0, n=31)  # groups of 3 outputs, the last of one
    folds = input_folds(f, 3, seed=4)
    assert [x.name for x in folds] == ["a#1", "a#2", "a#3"]
    seen = sorted(t for x in folds for t in x.texts)
    assert seen == sorted(f.texts)
    owner = {g: x.name for x in folds for g in x.groups}
    assert all(len({x.name for x in folds if g in x.groups}) == 1 for g in owner)
    for x in folds:  # rows stay aligned with their texts
        for t, h, row in zip(x.texts, x.human, x.features, strict=True):
            i = f.texts.index(t)
            assert h == f.human[i] and row == f.features[i]
    assert [len(x.texts) for x in input_folds(f, 3, seed=4)] == [len(x.texts) for x in folds]
    with pytest.raises(InputError):
        input_folds(f, 1)
    with pytest.raises(InputError):
        input_folds(_file("b", 1.0, n=3), 2)  # one input cannot make two folds


def test_folds_hold_out_inputs_of_one_genre():
    # One file where people follow the feature, not GLEU: held out by folds of its own inputs,
    # a regressor fitted on the other folds has learnt that and ranks the held-out fold well.
    f = _file("own", 0.0, n=60, seed=5)
    f = JudgedFile(
        f.name, f.texts, f.groups, np.array([r["f"] for r in f.features]), f.gleu, f.features, 0
    )
    folds = input_folds(f, 2)
    out = leave_one_file_out(folds, ["f"], {"ridge(alpha=1)": _candidates()["ridge(alpha=1)"]})
    assert all(r["spearman"] > 0.9 for r in out["ridge(alpha=1)"].values())


def test_targets_are_z_normalised_within_each_file():
    f = _file("a", 50.0)
    assert abs(f.target.mean()) < 1e-9 and abs(f.target.std() - 1.0) < 1e-9


@pytest.mark.parametrize(
    ("text", "failed"),
    [("", True), ("  ", True), ("null", True), (" NULL\n", True), ("None", True), ("No.", False)],
)
def test_failed_outputs(text, failed):
    assert is_failed_output(text) is failed


@pytest.fixture(scope="module")
def default_scorer():
    from scorer.scoring import load_scorer

    return load_scorer(default_scorer_path())


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_calibrate_writes_a_bundle_with_both_stages(tmp_path, default_scorer):
    from scorer.calibration import CALIBRATION_FILE
    from scorer.model import MODEL_FILE, sha256_file
    from scorer.scoring import load_scorer

    good = [
        "The hotel is near the station.",
        "Our restaurant serves Italian food in the city centre.",
        "The cat sat on the mat.",
        "She has lived in London for ten years.",
    ]
    bad = ["hotel the near station is the", "food Italian serves in centre city our", "null", ""]
    for k, name in enumerate(("one", "two", "three")):
        rows = [
            {
                "text": t,
                "score": 3.0 - i % 2,
                "scores": {},
                "refs": [],
                "group": str(i // 2),
                "system": "s",
            }
            for i, t in enumerate(good)
        ] + [
            {
                "text": t,
                "score": 1.0 + k,
                "scores": {},
                "refs": [],
                "group": str(9 + i),
                "system": "s",
            }
            for i, t in enumerate(bad)
        ]
        _write(tmp_path / f"{name}.jsonl", rows)
    models = tmp_path / "models"
    section = calibrate(
        default_scorer,
        default_scorer_path(),
        sorted(tmp_path.glob("*.jsonl")),
        models / "cal",
        candidates=["ridge(alpha=10)"],
    )
    assert section["regressor"] == "ridge(alpha=10)"
    assert section["files"]["one"] == {"n": 6, "n_left_out": 2}
    # One file, its inputs held out in folds: the same bundle, the choice made within a genre.
    one = calibrate(
        default_scorer,
        default_scorer_path(),
        [tmp_path / "one.jsonl"],
        models / "cal-one",
        candidates=["ridge(alpha=10)"],
        folds=2,
    )
    assert one["selection"].startswith("held out: 2 folds of inputs")
    assert set(one["leave_one_file_out"]["ridge(alpha=10) [features]"]) == {"one#1", "one#2"}
    assert sum(one["folds"].values()) == 6
    # One dataset and no folds asked for: folds of its inputs, five by default (it has four).
    with pytest.raises(InputError, match="fewer than 5 folds"):
        calibrate(default_scorer, default_scorer_path(), [tmp_path / "one.jsonl"], models / "x")
    card = json.loads((models / "cal" / "card.json").read_text())
    assert card["calibration"]["sha256"] == sha256_file(models / "cal" / CALIBRATION_FILE)
    assert card["model_sha256"] == sha256_file(models / "cal" / MODEL_FILE)
    assert card["calibration"]["inputs"][0] == "gleu"

    # The bundle serves both stages: the GLEU score as the model it came from gives it, and a
    # fluency score on the human scale that orders texts as the fitted regressor says.
    served = load_scorer(models / "cal", models_dir=models)
    texts = [good[0], bad[0]]
    both = served.score_texts(texts)
    plain = default_scorer.gleu_stage().score_texts(texts)
    assert [s.gleu for s in both] == pytest.approx([s.score for s in plain], abs=1e-9)
    assert [s.gleu for s in plain] == pytest.approx([s.score for s in plain], abs=1e-9)
    # Each input is read within the range it took in the fit; the GLEU score is not bounded.
    clip = card["calibration"]["clip"]
    assert clip["low"][0] is None and clip["high"][0] is None
    assert len(clip["low"]) == len(card["calibration"]["inputs"])
    assert both[0].score != both[0].gleu
    assert both[0].score > both[1].score

    # A stage that is not linear is read from its pickle, checked against the card's hash.
    card["calibration"].pop("linear")
    (models / "cal" / "card.json").write_text(json.dumps(card))
    (models / "cal" / CALIBRATION_FILE).write_bytes(b"not a model")
    with pytest.raises(ModelLoadError, match="corrupt or was replaced"):
        load_scorer(models / "cal", models_dir=models)


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
    from scorer.calibration import CALIBRATION_FILE
    from scorer.scoring import load_scorer

    folder = MODELS_DIR / "default"
    assert not (folder / CALIBRATION_FILE).exists()
    served = load_scorer(folder)
    section = served.card["calibration"]
    assert section["genre"] == "general" and section["held_out"].startswith("one genre out")
    assert {"data-to-text", "mt", "summaries"} <= set(served.heads)
    for genre in served.genres:
        head = served.for_genre(genre).calibration
        assert type(head.model).__name__ == "LinearStage"
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
    ]
    assert d2t.card["model_sha256"] == default.card["model_sha256"]
    assert d2t.genre == "data-to-text" and d2t.aggregate_for() == head["aggregate"]
    assert d2t.calibration.inputs == default.heads["data-to-text"].inputs
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


def test_a_held_out_genre_is_never_seen_in_its_own_fit():
    # Two genres where people follow GLEU and one, of two datasets, where they go against it:
    # with the genre held out whole, neither of its datasets helps the other, so both are
    # scored backwards. Left out one dataset at a time, each would have learnt from its sibling.
    from training.second_stage import leave_one_genre_out

    files = [
        _file("a", 1.0, seed=1),
        _file("b", 1.0, seed=2),
        _file("c1", -1.0, seed=3),
        _file("c2", -1.0, seed=4),
    ]
    genres = {"a": "g1", "b": "g2", "c1": "g3", "c2": "g3"}
    ridge = {"ridge(alpha=1)": _candidates()["ridge(alpha=1)"]}
    by_genre = leave_one_genre_out(files, genres, ["f"], ridge)["ridge(alpha=1)"]
    by_file = leave_one_file_out(files, ["f"], ridge)["ridge(alpha=1)"]
    assert list(by_genre) == ["a", "b", "c1", "c2"]
    assert by_genre["c1"]["spearman"] < -0.9 and by_genre["c2"]["spearman"] < -0.9
    assert by_file["c1"]["spearman"] > by_genre["c1"]["spearman"] + 0.1  # c2 pulled it


def test_the_genre_criterion_weighs_each_genre_the_same():
    from training.second_stage import criterion

    per_file = {
        "d1": {"spearman": 0.5, "group_kendall": float("nan")},
        "d2": {"spearman": 0.5, "group_kendall": float("nan")},
        "d3": {"spearman": 0.5, "group_kendall": float("nan")},
        "m": {"spearman": -0.1, "group_kendall": float("nan")},
    }
    genres = {"d1": "d2t", "d2": "d2t", "d3": "d2t", "m": "mt"}
    assert criterion(per_file)[1] == pytest.approx(0.35)  # by file: 3 of 4 votes
    assert criterion(per_file, genres)[1] == pytest.approx(0.2)  # by genre: 1 of 2


def test_choose_holds_out_genres_when_the_files_span_several():
    from training.second_stage import choose

    files = [_file("a", 1.0, seed=1), _file("b", 1.0, seed=2), _file("c", 1.0, seed=3)]
    genres = {"a": "g1", "b": "g1", "c": "g2"}
    one = {"regressors": ["ridge(alpha=1)"], "input_sets": ("features",)}
    by_genre = choose(files, ["f"], genres=genres, **one)
    assert by_genre.held_out == "genres"
    assert set(by_genre.table["ridge(alpha=1) [features]"]) == {"a", "b", "c"}
    one_genre = choose(files, ["f"], genres={**genres, "c": "g1"}, **one)
    assert one_genre.held_out == "datasets"


def test_a_card_whose_clip_bounds_do_not_match_its_inputs_is_refused(tmp_path):
    # The bounds are read with the inputs they belong to: a card edited out of step with them
    # must not load, or every input after the gap would be clipped to another's range.
    import shutil

    from features.resources import MODELS_DIR
    from scorer.scoring import load_scorer

    folder = tmp_path / "default"
    shutil.copytree(MODELS_DIR / "default", folder)
    card = json.loads((folder / "card.json").read_text())
    card["calibration"]["clip"]["low"].pop()
    (folder / "card.json").write_text(json.dumps(card))
    with pytest.raises(ModelLoadError, match="clip"):
        load_scorer(folder)
