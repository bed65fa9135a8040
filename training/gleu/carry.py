"""A shipped tier's heads carried over to a GLEU stage retrained on another corpus.

A head maps the GLEU score (with a few columns and readings) onto people's scale, and it was
fitted on the scores of the GLEU stage it shipped with. A stage trained on another corpus orders
texts much as that one does, but its distances have another zero and another spread. So the new
stage is put on the shipped stage's scale: its weights and intercept are multiplied and shifted
by the affine map that gives both scores the same mean and standard deviation on the texts the
fit held out, real and generated (linear equating, as test scores are put on one scale; a
regression of one on the other would shrink the spread by their correlation, and with it the
GLEU score's share in each head). Then every head of the tier reads the new score as it read
the old, whatever it holds and however it reads a text (summed over sentences too): the heads
are copied as they are. The card's `carried_heads` says where from and what the map is; the
new stage's `gleu` is then on the shipped stage's scale (> 0 still reads "looks real", at the
shipped stage's threshold).

What carrying costs against the shipped bundle, on people's ratings: docs/model.md,
"Retraining on another corpus".
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from features.errors import ModelLoadError
from features.resources import MODELS_DIR
from scorer.heads import Head, card_heads, head_columns
from scorer.readings import DERIVED, READINGS

__all__ = [
    "GleuMap",
    "carried_heads",
    "fit_gleu_map",
    "rescale",
    "shipped_scores",
    "write_card_entries",
]


@dataclass(frozen=True)
class GleuMap:
    """shipped score = slope * new score + intercept, fitted on `n_texts` texts, on which the
    two scores correlate at `pearson`."""

    slope: float
    intercept: float
    n_texts: int
    pearson: float


def fit_gleu_map(new: Sequence[float], shipped: Sequence[float]) -> GleuMap:
    """The affine map giving `new` the mean and standard deviation of `shipped` (scores of the
    same texts); a ValueError when it cannot carry a head: fewer than 3 texts, a constant
    score, or scores that do not rise together."""
    x, y = np.asarray(new, dtype=float), np.asarray(shipped, dtype=float)
    if len(x) != len(y) or len(x) < 3:
        raise ValueError(f"the map needs 3 or more texts scored twice, got {len(x)}, {len(y)}")
    if not (x.std() > 0 and y.std() > 0):
        raise ValueError("a GLEU score is constant on the held-out texts")
    r = float(np.corrcoef(x, y)[0, 1])
    if not r > 0:
        raise ValueError(f"the new and shipped GLEU scores correlate at {r:.3f}, not above 0")
    slope = float(y.std() / x.std())
    return GleuMap(slope, float(y.mean() - slope * x.mean()), len(x), r)


def rescale(pipeline, gleu_map: GleuMap) -> None:
    """Put a fitted pipeline's ranker on the shipped scale, in place: its score s becomes
    slope * s + intercept (weights times the slope; the intercept mapped). Its caps hold the
    standardised inputs, before the weights, and stay as they are. A ValueError for an SVM
    that is not a `RankSVM` (`--objective classify`): its score is libsvm's own."""
    svm = pipeline.steps[-1][1]
    if type(svm).__name__ != "RankSVM":
        raise ValueError(f"only a ranking SVM's score can be rescaled, not a {type(svm).__name__}")
    svm.coef_ = np.asarray(svm.coef_, dtype=float) * gleu_map.slope
    svm.intercept_ = float(svm.intercept_) * gleu_map.slope + gleu_map.intercept


def shipped_scores(
    tier: str,
    texts: Sequence[str],
    rows: Sequence[Mapping[str, float]],
    resources: Mapping[str, str],
    models_dir: str | Path = MODELS_DIR,
) -> np.ndarray:
    """The GLEU scores the shipped `tier` gives `texts`: from `rows`, their feature rows, when
    these hold its columns and were made from the very artefacts it records (`resources`, a
    card's), else from rows it makes itself."""
    from scorer.bundle import read_card
    from scorer.gleu_stage import load_gleu_stage

    folder, card = read_card(tier, models_dir)
    stage = load_gleu_stage(folder, card)
    recorded = {k: v for k, v in card.get("resources", {}).items() if k.endswith("_sha256")}
    same = all(resources.get(k) == v for k, v in recorded.items())
    if stage is not None and same and rows and set(stage.columns) <= set(rows[0]):
        return np.asarray(stage.decision_function(rows), dtype=float)
    from scorer.scoring import load_scorer

    scorer = load_scorer(tier, models_dir=models_dir).gleu_stage()
    return np.asarray(scorer.decision(scorer.sentence_rows(list(texts))), dtype=float)


def carried_heads(
    tier: str,
    gleu_map: GleuMap,
    columns: Sequence[str],
    *,
    fitted_on: str,
    models_dir: str | Path = MODELS_DIR,
) -> dict[str, Any]:
    """Card entries for a bundle whose GLEU stage yields `columns` and was put on
    the shipped `tier`'s scale by `gleu_map` (`rescale`): the tier's `heads` as they are, each
    one that reads only what this bundle yields; the `head_features` they read beyond the GLEU
    stage, if any; and `carried_heads`: where from, the map, on what it was fitted
    (`fitted_on`), and each head left behind with the reason."""
    from scorer.bundle import read_card

    _, card = read_card(tier, models_dir)  # the heads whole, their weights' file joined
    known = {*columns, *head_columns(card), *READINGS, *DERIVED}
    heads: dict[str, Any] = {}
    left: dict[str, str] = {}
    for genre, section in card_heads(card).items():
        try:
            head = Head.from_section(section)
        except ModelLoadError:
            left[genre] = "it has no linear weights (a pickled head), which are all a head serves"
            continue
        lacking = [c for c in head.inputs[1:] if c not in known]
        if lacking:
            left[genre] = f"it reads {', '.join(lacking)}, which this bundle does not yield"
        else:
            heads[genre] = section  # as the tier holds it
    out: dict[str, Any] = {
        "heads": dict(sorted(heads.items())),
        "carried_heads": {
            "from": tier,
            "from_model_sha256": card.get("model_sha256"),
            "gleu_map": {**asdict(gleu_map), "fitted_on": fitted_on},
            "method": "the GLEU stage's weights and intercept mapped so that its score has the "
            "shipped one's mean and standard deviation on the held-out texts; the heads as "
            "they are",
            "left_out": left,
        },
    }
    if heads and card.get("head_features"):
        out["head_features"] = list(card["head_features"])
    return out


def write_card_entries(folder: str | Path, entries: Mapping[str, Any]) -> dict[str, Any]:
    """The bundle's card at `folder` with `entries` added and its `summary` written from them
    (`scorer.summary`); a head of many inputs keeps its weights beside the card
    (`scorer.head_weights`). Returns the card as written."""
    from scorer.bundle import CARD_FILE
    from scorer.head_weights import write_weights
    from scorer.summary import summarize

    path = Path(folder) / CARD_FILE
    card = {**json.loads(path.read_text(encoding="utf-8")), **entries}
    card["summary"] = summarize(card)
    lean = write_weights(Path(folder), card)
    path.write_text(json.dumps(lean, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return lean
