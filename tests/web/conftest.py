"""Fixtures for the service: a small real model, the app on it, and a real gunicorn server.

The model is trained once per test run (about 10 s) on `data/sentences.txt` (70 plain sentences
written for these tests) against glued and corrupted negatives, with the real spaCy parse, into
a temporary models folder. It is small, but every request goes through the real code: bundle
checks, spaCy, the feature extractors, the SVM.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from web.support import ADMIN_TOKEN, Server, start_server, stop_server

from features import registry
from scorer.model import save_model
from scorer.web import create_app
from training.gleu.corpus import read_corpus
from training.gleu.svm import featurize, fit, make_dataset

CORPUS = Path(__file__).resolve().parent / "data" / "sentences.txt"


def model_features() -> tuple[str, ...]:
    names = {spec.name for spec in registry.all_specs()}
    return ("surface.v2", "spacy.v1") if "spacy.v1" in names else ("surface.v2",)


@pytest.fixture(scope="session")
def models_dir(tmp_path_factory) -> Path:
    """A models folder holding `tiny` (trained here) and `tiny-copy` (same model, other name)."""
    root = tmp_path_factory.mktemp("models")
    corpus = read_corpus([str(CORPUS)], seed=7)
    texts, labels, _ = make_dataset(corpus.sentences, n_positive=len(corpus.sentences), seed=7)
    features = model_features()
    rows = featurize(texts, features, progress=False)
    model, metrics = fit(rows, labels, seed=7, features=features, n_jobs=1)
    save_model(model, root / "tiny", {"name": "tiny", "metrics": metrics})
    shutil.copytree(root / "tiny", root / "tiny-copy")
    card = json.loads((root / "tiny-copy" / "card.json").read_text())
    card["name"] = "tiny-copy"
    (root / "tiny-copy" / "card.json").write_text(json.dumps(card))
    return root


@pytest.fixture(scope="session")
def app_config(models_dir) -> dict:
    return {
        "TESTING": True,
        "MODELS_DIR": str(models_dir),
        "MODEL_PATH": str(models_dir / "tiny"),
        "MAX_BATCH": 12,
        "MAX_CHARS": 300,
        "MAX_REFERENCES": 3,
        "MAX_CONTENT_LENGTH": 20_000,
        "ADMIN_TOKEN": ADMIN_TOKEN,
        "RELOAD_INTERVAL": 0,  # tests reload back to back; test_admin.py checks the limit
    }


@pytest.fixture(scope="session")
def app(app_config):
    return create_app(app_config)


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture(scope="session")
def server(models_dir, tmp_path_factory) -> Iterator[Server]:
    """gunicorn, 2 workers, --preload, on a free loopback port; stopped after the session."""
    srv = start_server(models_dir, tmp_path_factory.mktemp("gunicorn") / "server.log")
    yield srv
    stop_server(srv.proc)
