"""The linear GLEU stage (`gleu_stage.json`) against the fitted pipeline it was exported from,
and what a scoring process imports: real models, real parsers, real feature rows."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import numpy as np
import pytest

from features.resources import MODELS_DIR
from scorer.errors import ModelLoadError
from scorer.gleu_stage import (
    GLEU_STAGE_FILE,
    LinearGleuStage,
    PipelineGleuStage,
    linear_arrays,
    load_gleu_stage,
)
from scorer.model import load_model
from scorer.scoring import load_scorer

TEXTS = [
    "The company said its profit rose sharply in the first quarter.",
    "profit the rose company quarter said first sharply in its the.",
    "Shares of the bank fell after it reported a loss . And then",
    "null",
    "?!",
    "The board approved a new dividend of ten cents a share. It said so on Monday.",
]


@pytest.mark.parametrize("name", ["default", "full", "fast"])
def test_the_linear_stage_scores_exactly_as_the_pipeline(name):
    scorer = load_scorer(name)
    assert isinstance(scorer.gleu_svm, LinearGleuStage)
    rows = scorer.sentence_rows(TEXTS)
    from_stage = scorer.gleu_svm.decision_function(rows)
    pipeline, _ = load_model(name, MODELS_DIR)
    from_pipeline = pipeline[1:].decision_function(rows)
    assert np.array_equal(from_stage, from_pipeline)  # bit for bit, not approximately
    # and the file that would be written today is the shipped one
    shipped = json.loads((MODELS_DIR / name / GLEU_STAGE_FILE).read_text())
    assert linear_arrays(pipeline) == shipped
    # a missing column reads as 0, as DictVectorizer fills it
    partial = [{k: v for k, v in rows[0].items() if not k.startswith("surface.")}]
    assert np.array_equal(
        scorer.gleu_svm.decision_function(partial), pipeline[1:].decision_function(partial)
    )


def _ranker():
    """A capped ranking SVM over two columns, fitted on 400 made-up rows; (pipeline, rows)."""
    from sklearn.feature_extraction import DictVectorizer
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    from scorer.model import FeatureExtractor, RankSVM

    rng = np.random.default_rng(3)
    n = rng.uniform(5, 40, 400)
    rows = [
        {"surface.v2/n_tokens": a, "lm.v1/mean_logprob": b}
        for a, b in zip(n, -2.0 - rng.normal(0, 0.5, 400), strict=True)
    ]
    y = np.array([r["lm.v1/mean_logprob"] > -2.0 for r in rows], dtype=float)
    pipeline = Pipeline(
        [
            ("extract", FeatureExtractor(("surface.v2", "lm.v1"))),
            ("vectorize", DictVectorizer(sparse=False, sort=True)),
            ("scale", StandardScaler()),
            ("svm", RankSVM(max_pairs=5000)),
        ]
    )
    pipeline.named_steps["extract"].fit()
    pipeline[1:].fit(rows, y)
    return pipeline, rows


def test_a_capped_stage_round_trips_and_scores_exactly_as_its_pipeline(tmp_path):
    """A ranker fitted from 0.9.0 writes its caps (format /2, null where a side is open); the
    stage read back from JSON caps as the pipeline does, on rows far outside the training range
    as well as inside it."""
    pipeline, rows = _ranker()
    arrays = linear_arrays(pipeline)
    assert arrays["format"] == "fluency-linear-head/2"
    assert None in arrays["low"] + arrays["high"]  # each input is open on one side
    (tmp_path / GLEU_STAGE_FILE).write_text(json.dumps(arrays))
    data = json.loads((tmp_path / GLEU_STAGE_FILE).read_text())
    keys = ("features", "columns", "mean", "scale", "coef", "intercept", "low", "high")
    stage = LinearGleuStage(*(data[k] for k in keys))
    far = [
        {"surface.v2/n_tokens": 900.0, "lm.v1/mean_logprob": 0.0},
        {"surface.v2/n_tokens": 1.0, "lm.v1/mean_logprob": -40.0},
    ]
    for probe in (rows[:20], far):
        assert np.array_equal(stage.decision_function(probe), pipeline[1:].decision_function(probe))
    inside = pipeline[1:].decision_function(rows)
    assert stage.decision_function(far[:1])[0] <= inside.max()  # capped on its raising side
    assert stage.decision_function(far[1:])[0] < inside.min()  # open on its lowering side


def test_saving_over_an_old_bundle_writes_the_new_names(tmp_path):
    """A model saved into the folder of a bundle written by 0.10.0 (`head.json`, card section
    `head`) leaves `gleu_stage.json` named by the card's `gleu_stage`, and neither old name."""
    from scorer.bundle import sha256_file
    from scorer.model import save_model

    pipeline, rows = _ranker()
    (tmp_path / "head.json").write_text("{}")
    save_model(pipeline, tmp_path, {"name": "x", "head": {"file": "head.json", "sha256": "0"}})
    card = json.loads((tmp_path / "card.json").read_text())
    assert "head" not in card and not (tmp_path / "head.json").exists()
    assert card["gleu_stage"] == {
        "file": GLEU_STAGE_FILE,
        "sha256": sha256_file(tmp_path / GLEU_STAGE_FILE),
    }
    stage = load_gleu_stage(tmp_path, card)
    assert np.array_equal(stage.decision_function(rows), pipeline[1:].decision_function(rows))


def test_the_lazy_pipeline_is_the_bundles_and_takes_over_scoring():
    scorer = load_scorer("fast")
    before = scorer.score(TEXTS[:3])
    assert scorer.pipeline.named_steps["extract"].features_ == scorer.features
    assert isinstance(scorer.gleu_svm, PipelineGleuStage)
    assert scorer.score(TEXTS[:3]) == before


@pytest.mark.parametrize("name", ["default", "fast"])
def test_a_scoring_process_imports_neither_sklearn_nor_torch(name):
    code = (
        "import sys\n"
        "from scorer.scoring import load_scorer\n"
        f"s = load_scorer({name!r})\n"
        "s.score(['The cat sat on the mat.', 'Two sentences. Here they are.'])\n"
        "print(sorted(m for m in ('sklearn', 'torch', 'scipy.stats', 'pandas') "
        "if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_full_model_imports_torch_for_benepar_but_not_sklearn():
    code = (
        "import sys\n"
        "from scorer.scoring import load_scorer\n"
        "s = load_scorer('full')\n"
        "s.score(['The cat sat on the mat.'])\n"
        "print(sorted(m for m in ('sklearn', 'torch', 'pandas') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['torch']"


def _copy(tmp_path, name="fast"):
    folder = tmp_path / name
    shutil.copytree(MODELS_DIR / name, folder)
    return folder


def test_a_corrupt_or_missing_stage_is_refused_with_a_reason(tmp_path):
    folder = _copy(tmp_path)
    stage = folder / GLEU_STAGE_FILE
    text = stage.read_text()
    stage.write_text(text.replace('"intercept": ', '"intercept": 1'))
    with pytest.raises(ModelLoadError, match="corrupt or was replaced"):
        load_scorer("fast", models_dir=tmp_path)
    stage.unlink()
    with pytest.raises(ModelLoadError, match="is absent"):
        load_scorer("fast", models_dir=tmp_path)


def test_a_stage_that_does_not_parse_is_refused(tmp_path):
    from scorer.bundle import sha256_file

    folder = _copy(tmp_path)
    (folder / GLEU_STAGE_FILE).write_text('{"format": "fluency-linear-head/1", "columns": []}')
    card = json.loads((folder / "card.json").read_text())
    card["gleu_stage"]["sha256"] = sha256_file(folder / GLEU_STAGE_FILE)
    (folder / "card.json").write_text(json.dumps(card))
    with pytest.raises(ModelLoadError, match="not a readable linear GLEU stage"):
        load_scorer("fast", models_dir=tmp_path)


def test_a_card_naming_another_file_is_refused(tmp_path):
    folder = _copy(tmp_path)
    card = json.loads((folder / "card.json").read_text())
    card["gleu_stage"]["file"] = "../default/gleu_stage.json"
    (folder / "card.json").write_text(json.dumps(card))
    with pytest.raises(ModelLoadError, match=r"must name the file gleu_stage\.json"):
        load_scorer("fast", models_dir=tmp_path)


def test_a_bundle_without_a_linear_stage_scores_through_its_pipeline(tmp_path):
    folder = _copy(tmp_path)
    card = json.loads((folder / "card.json").read_text())
    del card["gleu_stage"]
    (folder / "card.json").write_text(json.dumps(card))
    (folder / GLEU_STAGE_FILE).unlink()
    plain = load_scorer("fast", models_dir=tmp_path)
    assert isinstance(plain.gleu_svm, PipelineGleuStage)
    assert plain.score(TEXTS) == load_scorer("fast").score(TEXTS)
