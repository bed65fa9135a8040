"""Retraining as a user does: `fluency train --tier default` on a small corpus the test writes,
then scoring with the bundle through the CLI and over HTTP (a real gunicorn on loopback)."""

from __future__ import annotations

import contextlib
import io
import json
import random
from pathlib import Path

import pytest
import requests
from web.support import REAL, shuffles, start_server, stop_server

from features.resources import MODELS_DIR
from scorer.cli import main
from scorer.scoring import load_scorer

SENTENCES = Path(__file__).resolve().parents[2] / "web" / "data" / "sentences.txt"
SUBJECTS = ["The company", "The bank", "Our small team", "The minister", "A farmer", "The board"]
VERBS = ["said", "reported", "expected", "announced", "denied", "confirmed"]
OBJECTS = [
    "that profits would rise next year",
    "a sharp fall in exports",
    "new measures to support prices",
    "that the talks had failed",
    "an agreement with its lenders",
    "record sales in the first quarter",
]
TAILS = ["", " on Tuesday", " after the meeting", " in a statement", " last week"]


def _corpus(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    made = [
        f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)}{rng.choice(TAILS)}."
        for _ in range(n)
    ]
    return SENTENCES.read_text().splitlines() + made


@pytest.fixture(scope="module")
def retrained(tmp_path_factory) -> tuple[Path, str]:
    """A models folder holding `retrained` (the default tier's recipe and heads, 150 real
    sentences) and `bare` (the same recipe, `--no-heads`), and what `fluency train` printed."""
    root = tmp_path_factory.mktemp("retrain")
    corpus = root / "corpus.txt"
    corpus.write_text("\n".join(_corpus(400, 1)) + "\n")
    models = root / "models"
    argv = ["train", "--corpus", str(corpus), "--sentences", "150", "--seed", "7", "--jobs", "1"]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main([*argv, "--tier", "default", "--out", str(models / "retrained")]) == 0
    assert main([*argv, "--out", str(models / "bare"), "--no-heads"]) == 0
    return models, printed.getvalue()


def _card(folder: Path) -> dict:
    return json.loads((folder / "card.json").read_text())


def test_the_bundle_follows_the_tiers_recipe_and_carries_its_heads(retrained):
    models, _ = retrained
    card, shipped = _card(models / "retrained"), _card(MODELS_DIR / "default")
    assert card["features"] == shipped["features"]  # no neural, no constituency parser
    assert card["training"]["tier"] == "default"
    for option in ("glue_sizes", "error_share", "objective", "levels"):
        assert card["training"][option] == shipped["training"]["arguments"][option], option
    carried = card["carried_heads"]
    assert carried["from"] == "default" and carried["from_model_sha256"] == shipped["model_sha256"]
    assert carried["gleu_map"]["n_texts"] == 60  # a fifth of 300 texts, held out by the fit
    assert carried["gleu_map"]["pearson"] > 0.5 and carried["gleu_map"]["slope"] > 0
    # Every head the bundle can read is carried as it is; each one left out says why.
    assert set(card["heads"]) | set(carried["left_out"]) == set(shipped["heads"])
    for genre, section in card["heads"].items():
        assert section == shipped["heads"][genre], genre
    assert "carried over from the default tier" in card["summary"]
    bare = _card(models / "bare")
    assert not bare.get("heads") and "carried_heads" not in bare


def test_train_says_how_to_score_and_serve_the_bundle(retrained):
    models, printed = retrained
    assert f"FLUENCY_MODELS_DIR={models.resolve()} fluency score --model retrained" in printed
    assert "FLUENCY_MODELS=retrained make run" in printed
    assert "/v1/admin/reload" in printed and "fluency calibrate" in printed


def test_the_rescaled_gleu_stage_is_the_pipelines_to_the_last_digits(retrained):
    """The map is applied to the ranker before saving: the fitted pipeline (model.joblib) and
    the linear stage scoring reads (gleu_stage.json) give the same score."""
    models, _ = retrained
    scorer = load_scorer("retrained", models_dir=models).gleu_stage()
    rows = scorer.sentence_rows([REAL, *shuffles(REAL, 3, seed=1)])
    linear = scorer.decision(rows)
    pipeline = scorer.pipeline[1:].decision_function(rows)
    assert list(linear) == pytest.approx(list(pipeline), abs=1e-9)


def test_cli_scores_fluency_with_carried_heads_and_says_gleu_without(
    retrained, tmp_path, monkeypatch, capsys
):
    models, _ = retrained
    monkeypatch.setenv("FLUENCY_MODELS_DIR", str(models))
    texts = [REAL, *shuffles(REAL, 3, seed=2)]
    path = tmp_path / "in.txt"
    path.write_text("\n".join(texts) + "\n")
    assert main(["score", str(path), "--model", "retrained", "--format", "json"]) == 0
    captured = capsys.readouterr()
    rows = [json.loads(line) for line in captured.out.splitlines()]
    assert {r["scale"] for r in rows} == {"fluency"} and "no head" not in captured.err
    assert rows[0]["score"] > max(r["score"] for r in rows[1:])
    assert rows[0]["score"] != rows[0]["gleu"]
    assert main(["score", str(path), "--model", "bare"]) == 0
    captured = capsys.readouterr()
    scores = [float(line) for line in captured.out.splitlines()]
    assert scores[0] > max(scores[1:])
    assert "model bare has no head" in captured.err and "GLEU distance" in captured.err


def test_http_answers_say_the_scale(retrained, tmp_path):
    models, _ = retrained
    env = {"FLUENCY_MODELS": "retrained,bare", "FLUENCY_MODEL_PATH": str(models / "retrained")}
    server = start_server(models, tmp_path / "gunicorn.log", workers=1, env=env)
    try:
        texts = [REAL, *shuffles(REAL, 3, seed=3)]
        url = server.url + "/v1/score"
        carried = requests.post(url, json={"sentences": texts}, timeout=60).json()
        assert carried["model"] == "retrained" and carried["scale"] == "fluency"
        fluency = [s["fluency"] for s in carried["scores"]]
        assert fluency[0] > max(fluency[1:])
        bare = requests.post(url, json={"sentences": texts, "model": "bare"}, timeout=60).json()
        assert bare["scale"] == "gleu"
        assert all(s["fluency"] == s["gleu"] for s in bare["scores"])
        ranked = requests.post(
            server.url + "/v1/rerank", json={"candidates": texts[::-1]}, timeout=60
        ).json()
        assert ranked["scale"] == "fluency" and ranked["ranked"][0]["text"] == REAL
    finally:
        stop_server(server.proc)
