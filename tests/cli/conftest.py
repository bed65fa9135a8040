"""A small real model for the command-line tests: two cheap feature families (surface, spaCy),
trained through `fluency train` on sentences written here, once per test run."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from scorer.cli import main

SUBJECTS = ["The company", "The bank", "Our small team", "The minister", "A farmer"]
VERBS = ["said", "reported", "expected", "announced", "denied"]
OBJECTS = ["that profits would rise", "a sharp fall in exports", "new measures on prices"]


@pytest.fixture(scope="session")
def small_models(tmp_path_factory) -> Path:
    """A models folder holding `small`; point FLUENCY_MODELS_DIR (or MODELS_DIR) at it."""
    rng = random.Random(1)
    root = tmp_path_factory.mktemp("small")
    corpus = root / "corpus.txt"
    lines = [
        f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)}." for _ in range(200)
    ]
    corpus.write_text("\n".join(lines) + "\n")
    argv = ["train", "--corpus", str(corpus), "--out", str(root / "models" / "small")]
    argv += ["--sentences", "60", "--seed", "7", "--jobs", "1"]
    assert main([*argv, "--features", "surface.v2", "spacy.v1"]) == 0
    return root / "models"


@pytest.fixture
def small(small_models, monkeypatch) -> list[str]:
    """`--model small` arguments, with the environment pointing at the small model's folder."""
    monkeypatch.setenv("FLUENCY_MODELS_DIR", str(small_models))
    return ["--model", "small"]
