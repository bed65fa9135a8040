"""The fluency model: an sklearn Pipeline over extracted features, saved as a checked bundle.

What a bundle holds and how it is checked: `scorer.bundle`. A linear model is also saved as
`gleu_stage.json` (`scorer.gleu_stage`), which scoring reads without scikit-learn; this module
is what training and the tools that need the fitted pipeline itself import.
"""

from __future__ import annotations

import json
import logging
import platform
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import joblib
import numpy as np
import sklearn
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.feature_extraction import DictVectorizer
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, LinearSVC
from sklearn.utils.validation import check_is_fitted

from features import registry
from features.extract import extract
from features.parsing import parse
from features.resources import Resources
from features.sentence import Sentence
from scorer.bundle import (
    CARD_FILE,
    MODEL_FILE,
    bundle_folder,
    feature_set_version,
    read_card,
    sha256_file,
)
from scorer.errors import ModelLoadError
from scorer.gleu_stage import CARD_SECTION, write_gleu_stage

__all__ = [
    "DEFAULT_FEATURES",
    "FeatureExtractor",
    "RankSVM",
    "build_model",
    "bundle_folder",
    "feature_set_version",
    "load_model",
    "save_model",
    "sha256_file",
]

logger = logging.getLogger(__name__)


def _default_features() -> tuple[str, ...]:
    return tuple(spec.name for spec in registry.all_specs())


DEFAULT_FEATURES: tuple[str, ...] = ()  # empty: every registered extractor


class FeatureExtractor(TransformerMixin, BaseEstimator):
    """Parsed sentences (or raw strings) -> one {"<extractor>/<name>": value} dict each."""

    def __init__(self, features: tuple[str, ...] = DEFAULT_FEATURES):
        self.features = features  # stored untouched: clone() and set_params() depend on it

    def fit(self, sentences=None, y=None):
        names = tuple(self.features) or _default_features()
        for name in names:
            registry.get(name)  # validation belongs in fit: an unknown name fails here
        # Names only, resolved through the registry at transform time: a saved bundle then
        # pickles no function of `features`, so moving an extractor's code breaks no model.
        self.features_ = names
        return self

    def transform(self, sentences: Sequence[Sentence | str], resources: Resources | None = None):
        check_is_fitted(self)
        items = list(sentences)
        if items and isinstance(items[0], str):
            items = parse(items, lemmas=False)  # no extractor reads lemmas or coarse POS
        return extract(items, self.features_, resources)


class RankSVM(BaseEstimator):
    """A linear ranking SVM (Joachims 2002) over ordered levels: y is a level, higher = better.

    scikit-learn has no ranking estimator, so this is the standard pairwise reduction: for
    pairs (i, j) with y_i > y_j, a `LinearSVC` learns sign(w . (x_i - x_j)) = +1 on the
    differences (both orientations, so the classes balance). `max_pairs` pairs are drawn at
    random (a seed) instead of all O(n^2). The score is w . x + b, where b puts the
    threshold between the top level and the rest at the value that best separates them on the
    training data, so `decision_function > 0` still reads "looks real".

    `kernel="rbf"`: the same linear ranker on a Nystroem approximation of the RBF kernel's
    feature map (`n_components` landmarks drawn from the training rows, gamma 1 / n_features as
    SVC's "scale" on standardised data), so the score can be non-linear in the features while
    training stays a LinearSVC on pair differences (an exact kernel over 50,000 pairs would
    not fit in memory).

    `max_pairs` defaults to 200,000: which pairs are drawn moves the weights, and with them
    agreement with people; fewer pairs made that agreement vary more between pair seeds and no
    better on average (docs/model.md). A fit then takes about 6 s.

    A linear ranker reads each input only up to the edge of its training range on the side
    where the input raises the score (`cap_low_`, `cap_high_`; the other side stays open, so a
    text worse than any it was trained on still reads lower). Length-driven inputs (summed
    log-probabilities, token counts) carry weights of opposite signs that cancel within that
    range and not beyond it: uncapped, a run of one token repeated 900 times scored far above
    real text, and a looping sentence rose the longer it looped (docs/model.md, "Capped
    inputs"). No scikit-learn transformer clips by the sign of a later step's weights, so
    this is done here. A bundle fitted before 0.9.0 carries no caps and reads as it did.
    """

    def __init__(
        self,
        C: float = 1.0,
        max_pairs: int = 200_000,
        random_state: int = 12345,
        kernel: str = "linear",
        n_components: int = 300,
    ):
        self.C = C
        self.max_pairs = max_pairs
        self.random_state = random_state
        self.kernel = kernel
        self.n_components = n_components

    def _map(self, X):
        mapping = getattr(self, "map_", None)  # a linear bundle may not carry the attribute
        return X if mapping is None else mapping.transform(X)

    def cap(self, X):
        """`X` as the ranker reads it: each input held within its training range on the side
        where it raises the score (unchanged for a kernel map or a ranker fitted before caps)."""
        low, high = getattr(self, "cap_low_", None), getattr(self, "cap_high_", None)
        X = np.asarray(X, dtype=float)
        return X if low is None else np.clip(X, low, high)

    def fit(self, X, y):
        X, y = np.asarray(X, dtype=float), np.asarray(y, dtype=float)
        if self.kernel not in ("linear", "rbf"):
            raise ValueError(f"RankSVM kernel must be 'linear' or 'rbf', got {self.kernel!r}")
        self.map_ = None
        if self.kernel == "rbf":
            from sklearn.kernel_approximation import Nystroem

            self.map_ = Nystroem(
                gamma=1.0 / X.shape[1],
                n_components=min(self.n_components, len(X)),
                random_state=self.random_state,
            ).fit(X)
            X = self.map_.transform(X)
        rng = np.random.default_rng(self.random_state)
        # Never more draws than there are distinct pairs: a small training set gains nothing.
        n_pairs = min(self.max_pairs, len(y) * (len(y) - 1) // 2)
        i = rng.integers(0, len(y), n_pairs * 3)
        j = rng.integers(0, len(y), n_pairs * 3)
        keep = y[i] != y[j]
        i, j = i[keep][:n_pairs], j[keep][:n_pairs]
        if not len(i):
            raise ValueError("RankSVM needs at least two different levels")
        diff = X[i] - X[j]
        sign = np.sign(y[i] - y[j])
        flip = rng.random(len(sign)) < 0.5  # balance the two classes
        diff[flip], sign[flip] = -diff[flip], -sign[flip]
        svc = LinearSVC(C=self.C, fit_intercept=False, random_state=self.random_state)
        svc.fit(diff, sign)
        self.coef_ = svc.coef_.ravel()
        self.cap_low_ = self.cap_high_ = None
        if self.map_ is None:
            self.cap_low_ = np.where(self.coef_ < 0, X.min(axis=0), -np.inf)
            self.cap_high_ = np.where(self.coef_ > 0, X.max(axis=0), np.inf)
        raw = X @ self.coef_
        top = y == y.max()
        cuts = np.unique(raw)
        accuracy = [np.mean((raw >= c) == top) for c in cuts]
        self.intercept_ = -float(cuts[int(np.argmax(accuracy))])
        self.classes_ = np.array([0, 1])
        return self

    def decision_function(self, X):
        check_is_fitted(self)
        return self._map(self.cap(X)) @ self.coef_ + self.intercept_

    def predict(self, X):
        return (self.decision_function(X) > 0).astype(int)


def build_model(
    *,
    C: float = 1.0,
    kernel: str = "rbf",
    gamma: str | float = "scale",
    features: tuple[str, ...] = DEFAULT_FEATURES,
    seed: int = 12345,
    objective: str = "classify",
) -> Pipeline:
    """Extract -> DictVectorizer -> StandardScaler -> SVM; the score is `decision_function`.

    `objective="classify"`: an `SVC`, real (1) against generated (0), as in the paper.
    `objective="rank"`: a `RankSVM` over levels (real above l=8 above l=4 ... above l=1).
    """
    svm = (
        SVC(C=C, kernel=kernel, gamma=gamma, random_state=seed)
        if objective == "classify"
        else RankSVM(C=C, random_state=seed)
    )
    return Pipeline(
        [
            ("extract", FeatureExtractor(features)),
            ("vectorize", DictVectorizer(sparse=False, sort=True)),
            ("scale", StandardScaler()),
            ("svm", svm),
        ]
    )


def save_model(pipeline: Pipeline, out: str | Path, card: Mapping[str, Any]) -> Path:
    """Write `model.joblib` and a `card.json` completed with features, versions and the hash."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    extractor = pipeline.named_steps["extract"]
    check_is_fitted(extractor)
    joblib.dump(pipeline, out / MODEL_FILE, compress=3)
    stage = write_gleu_stage(pipeline, out)
    import spacy

    full = {
        **card,
        "features": list(extractor.features_),
        "feature_columns": list(pipeline.named_steps["vectorize"].get_feature_names_out()),
        "feature_set_version": feature_set_version(extractor.features_),
        "libraries": {
            "python": platform.python_version(),
            "scikit-learn": sklearn.__version__,
            "numpy": np.__version__,
            "spacy": spacy.__version__,
        },
        "model_sha256": sha256_file(out / MODEL_FILE),
    }
    full.pop("head", None)  # where a card written by 0.10.0 or earlier named it
    full.pop(CARD_SECTION, None)
    if stage is not None:
        full[CARD_SECTION] = stage
    (out / CARD_FILE).write_text(json.dumps(full, indent=2, sort_keys=True) + "\n")
    return out


def load_model(path: str | Path, models_dir: str | Path) -> tuple[Pipeline, dict[str, Any]]:
    """Load a bundle's fitted pipeline after `read_card`'s checks (place, hash, feature set)."""
    path, card = read_card(path, models_dir)
    if card.get("libraries", {}).get("scikit-learn") != sklearn.__version__:
        logger.warning(
            "model %s was saved with scikit-learn %s, running %s",
            path,
            card.get("libraries", {}).get("scikit-learn"),
            sklearn.__version__,
        )
    model_path = path / MODEL_FILE
    try:
        pipeline = joblib.load(model_path)
    except Exception as exc:
        raise ModelLoadError(f"{model_path} could not be unpickled: {exc}") from exc
    if not isinstance(pipeline, Pipeline):
        raise ModelLoadError(f"{model_path} holds a {type(pipeline).__name__}, not a Pipeline")
    return pipeline, card
