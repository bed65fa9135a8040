"""A model bundle on disk, checked before anything in it is unpickled or read.

A bundle is a folder `models/<name>/` holding `model.joblib` and `card.json` (feature names and
order, feature-set version, library versions, training data and its hash, seed, metrics, and the
SHA-256 of `model.joblib`), and, for a linear model, `gleu_stage.json` (`scorer.gleu_stage`);
one with heads also `heads_report.json`, their held-out tables (`scorer.heads_report`), which
scoring never reads.
joblib files run code when loaded, so a bundle is read only from inside the configured models
directory and only when every file's hash matches its card. Nothing here imports scikit-learn:
scoring with a linear GLEU stage and linear heads never needs it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from features import registry
from features.errors import ModelLoadError
from scorer.head_weights import join_weights

__all__ = [
    "CARD_FILE",
    "MODEL_FILE",
    "bundle_folder",
    "check_hash",
    "feature_set_version",
    "read_card",
    "sha256_file",
]

MODEL_FILE, CARD_FILE = "model.joblib", "card.json"


def feature_set_version(features: Sequence[str]) -> str:
    """A short hash of the extractors and the exact columns they yield."""
    specs = [registry.get(n) for n in features]
    text = "|".join(f"{s.name}:{','.join(s.names)}" for s in specs)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def check_hash(path: Path, expected: object) -> None:
    """Refuse a file whose SHA-256 is not the one its card records."""
    digest = sha256_file(path)
    if digest != expected:
        raise ModelLoadError(
            f"{path} has SHA-256 {digest[:12]}..., its card says {str(expected)[:12]}...: "
            "the file is corrupt or was replaced"
        )


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
    except ValueError:
        return False
    return True


def bundle_folder(path: str | Path, models_dir: str | Path) -> Path:
    """Where a bundle is: `path` itself, or a bare name under `models_dir` (models/<name>)."""
    path = Path(path)
    if not path.is_absolute() and not path.exists():
        return Path(models_dir) / path
    return path


def read_card(path: str | Path, models_dir: str | Path) -> tuple[Path, dict[str, Any]]:
    """The bundle's folder and card, after checking where it is, that `model.joblib` is the
    file its card names (SHA-256), and that this code yields the features it was trained on."""
    models_dir = Path(models_dir)
    path = bundle_folder(path, models_dir)
    if not _inside(path, models_dir):
        raise ModelLoadError(
            f"model {path} is outside the models directory {models_dir}; joblib files run code "
            "when loaded, so only models under FLUENCY_MODELS_DIR are loaded"
        )
    card_path, model_path = path / CARD_FILE, path / MODEL_FILE
    if not card_path.is_file() or not model_path.is_file():
        raise ModelLoadError(f"no model at {path}: expected {MODEL_FILE} and {CARD_FILE} there")
    try:
        card = json.loads(card_path.read_text())
    except (OSError, ValueError) as exc:
        raise ModelLoadError(f"{card_path} is not a readable JSON model card: {exc}") from exc
    if not isinstance(card, dict) or "model_sha256" not in card or "features" not in card:
        raise ModelLoadError(f"{card_path} lacks model_sha256/features; retrain or repair it")
    check_hash(model_path, card["model_sha256"])
    card = join_weights(path, card)  # a learned head's weights, kept beside the card
    try:
        version = feature_set_version(card["features"])
    except Exception as exc:
        raise ModelLoadError(f"{path}: its features are not available here ({exc})") from exc
    if version != card.get("feature_set_version"):
        raise ModelLoadError(
            f"{path} was trained on feature set {card.get('feature_set_version')}, this code "
            f"yields {version} for {card['features']}: retrain the model"
        )
    return path, card
