"""A bundle's GLEU stage as scoring reads it: feature rows in, signed distances out.

The GLEU stage is the first of a bundle's two stages: the ranking SVM whose signed distance is
the GLEU score. The second stages, fitted on people's ratings, are the heads
(`scorer.heads`); nothing here is one.

The fitted pipeline (`scorer.model`) is extract -> DictVectorizer -> StandardScaler -> SVM.
When the SVM is linear (`RankSVM` without a kernel map: every shipped model), all that scoring
needs of it is five arrays: the column order, the scaler's mean and scale, the weights and the
intercept, and, for a ranker fitted from 0.9.0, the caps it holds each input within
(`scorer.model.RankSVM.cap`; `null` where a side is open). `gleu_stage.json` holds them,
written beside `model.joblib` when the bundle is saved and hash-checked through the card
(section `gleu_stage`) when it is loaded. A bundle saved by 0.10.0 or earlier names the same
file `head.json` in a section `head`; both are read (`stage_file`). Scoring then runs on
NumPy alone: scikit-learn, with the SciPy and pandas it imports, is about 1 s and 135 MiB of
a process's start-up, and only training, a non-linear model or a pickled head load it.

Why not the pipeline itself: unpickling it imports scikit-learn. The arithmetic here is the
pipeline's own, step for step in float64 (missing columns 0 as DictVectorizer fills them,
`(x - mean) / scale`, the caps, then `z @ w + b`), so scores are identical to the last bit;
the tests compare the two on real feature rows.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from features.errors import ModelLoadError

__all__ = [
    "CARD_SECTION",
    "GLEU_STAGE_FILE",
    "LinearGleuStage",
    "PipelineGleuStage",
    "linear_arrays",
    "load_gleu_stage",
    "stage_file",
    "write_gleu_stage",
]

GLEU_STAGE_FILE = "gleu_stage.json"
CARD_SECTION = "gleu_stage"
# Cards written by 0.10.0 or earlier: section `head`, file `head.json` (the same content).
_OLD_SECTION, _OLD_FILE = "head", "head.json"
# The file's own format names, kept as they were so that shipped files keep their hashes.
_FORMAT = "fluency-linear-head/2"  # /2 adds the caps; /1 (no caps) still loads
_FORMATS = ("fluency-linear-head/1", _FORMAT)


class LinearGleuStage:
    """GLEU score = cap((x - mean) / scale) @ coef + intercept, over `columns` in order; `low` and
    `high` are the caps (None: none)."""

    def __init__(
        self,
        features: Sequence[str],
        columns: Sequence[str],
        mean: Sequence[float],
        scale: Sequence[float],
        coef: Sequence[float],
        intercept: float,
        low: Sequence[float] | None = None,
        high: Sequence[float] | None = None,
    ):
        self.features = tuple(features)
        self.columns = tuple(columns)
        self.mean = np.asarray(mean, dtype=np.float64)
        self.scale = np.asarray(scale, dtype=np.float64)
        self.coef = np.asarray(coef, dtype=np.float64)
        self.intercept = float(intercept)
        n = len(self.columns)
        if not (self.mean.shape == self.scale.shape == self.coef.shape == (n,)):
            raise ValueError(
                f"a linear GLEU stage needs {n} means, scales and weights, one per column"
            )
        self.caps = None
        if low is not None or high is not None:
            caps = _bounds(low, -np.inf, n), _bounds(high, np.inf, n)
            if caps[0].shape != (n,) or caps[1].shape != (n,):
                raise ValueError(
                    f"a linear GLEU stage's caps need {n} bounds a side, one per column"
                )
            self.caps = caps

    def vectorize(self, rows: Sequence[Mapping[str, float]]) -> np.ndarray:
        return np.array(
            [[row.get(c, 0.0) for c in self.columns] for row in rows], dtype=np.float64
        ).reshape(len(rows), len(self.columns))

    def standardize(self, X: np.ndarray) -> np.ndarray:
        """Standardised and capped: the inputs as the ranker reads them."""
        Z = (X - self.mean) / self.scale
        return Z if self.caps is None else np.clip(Z, *self.caps)

    def raw(self, Z: np.ndarray) -> np.ndarray:
        return Z @ self.coef + self.intercept

    def decision_function(self, rows: Sequence[Mapping[str, float]]) -> np.ndarray:
        return self.raw(self.standardize(self.vectorize(rows)))

    @property
    def linear(self) -> tuple[np.ndarray, float]:
        return self.coef, self.intercept


class PipelineGleuStage:
    """The same interface over a fitted pipeline (non-linear models, bundles saved without
    `gleu_stage.json`)."""

    def __init__(self, pipeline):
        self.pipeline = pipeline
        steps = pipeline.named_steps
        self.features = tuple(getattr(steps.get("extract"), "features_", ()))
        vectorize = steps.get("vectorize")
        names = vectorize.get_feature_names_out() if hasattr(vectorize, "vocabulary_") else ()
        self.columns = tuple(names)
        scaler = steps.get("scale")
        mean = getattr(scaler, "mean_", None)
        self.mean = np.zeros(len(self.columns)) if mean is None else np.asarray(mean, float)

    def vectorize(self, rows):
        return np.asarray(self.pipeline.named_steps["vectorize"].transform(list(rows)), float)

    def standardize(self, X):
        Z = np.asarray(self.pipeline.named_steps["scale"].transform(X), dtype=float)
        cap = getattr(self.pipeline.steps[-1][1], "cap", None)
        return Z if cap is None else cap(Z)

    def raw(self, Z):
        return np.asarray(self.pipeline.steps[-1][1].decision_function(Z), dtype=float).ravel()

    def decision_function(self, rows):
        return self.pipeline[1:].decision_function(rows)

    @property
    def linear(self) -> tuple[np.ndarray, float] | None:
        return linear_weights(self.pipeline.steps[-1][1])


def _bounds(values: Sequence[float | None] | None, open_side: float, n: int) -> np.ndarray:
    """A side's caps as floats, None (JSON null) read as open."""
    if values is None:
        return np.full(n, open_side)
    return np.array([open_side if v is None else float(v) for v in values], dtype=np.float64)


def linear_weights(svm) -> tuple[np.ndarray, float] | None:
    """(w, b) with decision_function(z) = z @ w + b, or None when the model is not linear."""
    if getattr(svm, "map_", None) is not None:  # RankSVM on a kernel approximation
        return None
    try:
        coef = np.asarray(svm.coef_, dtype=float)
    except AttributeError:  # SVC with a non-linear kernel: coef_ is refused
        return None
    intercept = np.atleast_1d(np.asarray(svm.intercept_, dtype=float))
    if coef.ndim == 2 and coef.shape[0] != 1:  # several classes: no single score
        return None
    return coef.ravel(), float(intercept[0])


def linear_arrays(pipeline) -> dict[str, Any] | None:
    """What `gleu_stage.json` holds, or None when the pipeline is not one that
    `LinearGleuStage` reproduces exactly: a ranking SVM without a kernel map after a standard
    scaler. (SVC with a linear kernel is linear too, but libsvm sums its support vectors in
    another order, so its scores would differ in the last digits.)"""
    steps = pipeline.named_steps
    svm, scaler = pipeline.steps[-1][1], steps.get("scale")
    if type(svm).__name__ != "RankSVM" or getattr(svm, "map_", None) is not None:
        return None
    if type(scaler).__name__ != "StandardScaler" or not (scaler.with_mean and scaler.with_std):
        return None
    caps = getattr(svm, "cap_low_", None), getattr(svm, "cap_high_", None)
    return {
        "format": _FORMAT if caps[0] is not None else _FORMATS[0],
        "features": list(steps["extract"].features_),
        "columns": [str(c) for c in steps["vectorize"].get_feature_names_out()],
        "mean": [float(v) for v in scaler.mean_],
        "scale": [float(v) for v in scaler.scale_],
        "coef": [float(v) for v in np.ravel(svm.coef_)],
        "intercept": float(svm.intercept_),
        **{
            side: [float(v) if np.isfinite(v) else None for v in values]
            for side, values in zip(("low", "high"), caps, strict=True)
            if values is not None
        },
    }


def write_gleu_stage(pipeline, folder: str | Path) -> dict[str, str] | None:
    """Write `gleu_stage.json` for a linear pipeline; the card section naming it (file and
    SHA-256), or None (and no file) when the pipeline is not linear. A `head.json` of an older
    save in the same folder is removed: the card names one file or the other."""
    from scorer.bundle import sha256_file

    arrays = linear_arrays(pipeline)
    path = Path(folder) / GLEU_STAGE_FILE
    (Path(folder) / _OLD_FILE).unlink(missing_ok=True)
    if arrays is None:
        path.unlink(missing_ok=True)
        return None
    # json writes each float's shortest repr, which reads back as the same float64.
    path.write_text(json.dumps(arrays, indent=1) + "\n")
    return {"file": GLEU_STAGE_FILE, "sha256": sha256_file(path)}


def stage_file(card: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]] | None:
    """(file name, card section) of the bundle's linear GLEU stage, from the card's `gleu_stage`
    (file `gleu_stage.json`) or, in a card written by 0.10.0 or earlier, its `head` (file
    `head.json`); None when the card names neither."""
    for key, name in ((CARD_SECTION, GLEU_STAGE_FILE), (_OLD_SECTION, _OLD_FILE)):
        section = card.get(key)
        if section:
            if not isinstance(section, Mapping) or section.get("file", name) != name:
                raise ModelLoadError(f"the card's {key} must name the file {name}")
            return name, section
    return None


def load_gleu_stage(folder: str | Path, card: Mapping[str, Any]) -> LinearGleuStage | None:
    """The bundle's linear GLEU stage, or None when its card names none."""
    from scorer.bundle import check_hash

    named = stage_file(card)
    if named is None:
        return None
    name, section = named
    path = Path(folder) / name
    if not path.is_file():
        raise ModelLoadError(f"{folder}: the card names a linear GLEU stage but {path} is absent")
    check_hash(path, section.get("sha256"))
    try:
        data = json.loads(path.read_text())
        if data.get("format") not in _FORMATS:
            raise ValueError(f"format {data.get('format')!r}, expected one of {_FORMATS}")
        stage = LinearGleuStage(
            data["features"],
            data["columns"],
            data["mean"],
            data["scale"],
            data["coef"],
            data["intercept"],
            data.get("low"),
            data.get("high"),
        )
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ModelLoadError(f"{path} is not a readable linear GLEU stage: {exc}") from exc
    if list(stage.features) != list(card["features"]) or list(stage.columns) != list(
        card.get("feature_columns", stage.columns)
    ):
        raise ModelLoadError(f"{path} does not match its card's features and columns")
    return stage
