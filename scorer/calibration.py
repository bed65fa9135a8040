"""The calibration stage of a bundle: the GLEU distance and features mapped onto a human scale.

A bundle may carry, beside its GLEU pipeline, `calibration.joblib`: a scikit-learn regressor
fitted by `fluency calibrate` from [GLEU distance, feature columns...] to human scores
z-normalised within each judgement file, so its output reads "standard deviations above the
average judged output". The card's `calibration` section names the inputs in order and the
file's SHA-256, checked before the file is unpickled, as the GLEU stage's is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from features.errors import ModelLoadError

__all__ = ["CALIBRATION_FILE", "GLEU_INPUT", "Calibration", "load_calibration"]

CALIBRATION_FILE = "calibration.joblib"
GLEU_INPUT = "gleu"


@dataclass(frozen=True)
class Calibration:
    model: Any  # fitted regressor with `predict`
    inputs: tuple[str, ...]  # "gleu", then feature columns

    def apply(self, gleu: Sequence[float], rows: Sequence[Mapping[str, float]]) -> np.ndarray:
        """Calibrated fluency per text, from its GLEU score and its (aggregated) feature row."""
        if not len(gleu):
            return np.empty(0)
        columns = self.inputs[1:]
        X = np.column_stack(
            [np.asarray(gleu, dtype=float), [[row[c] for c in columns] for row in rows]]
            if columns
            else [np.asarray(gleu, dtype=float)]
        )
        return np.asarray(self.model.predict(X), dtype=float)


def load_calibration(folder: str | Path, card: Mapping[str, Any]) -> Calibration | None:
    """The bundle's calibration stage, or None when its card has none."""
    section = card.get("calibration")
    if not section:
        return None
    import joblib

    from scorer.bundle import check_hash

    path = Path(folder) / CALIBRATION_FILE
    inputs = tuple(section.get("inputs") or ())
    if not inputs or inputs[0] != GLEU_INPUT:
        raise ModelLoadError(f"{folder}: the card's calibration inputs must start with 'gleu'")
    missing = [c for c in inputs[1:] if c not in card.get("feature_columns", [])]
    if missing:
        raise ModelLoadError(f"{folder}: calibration reads columns the model lacks: {missing}")
    if not path.is_file():
        raise ModelLoadError(f"{folder}: the card names a calibration stage but {path} is absent")
    check_hash(path, section.get("sha256"))
    try:
        model = joblib.load(path)
    except Exception as exc:
        raise ModelLoadError(f"{path} could not be unpickled: {exc}") from exc
    if not hasattr(model, "predict"):
        raise ModelLoadError(f"{path} holds a {type(model).__name__}, not a regressor")
    return Calibration(model, inputs)
