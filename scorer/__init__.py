"""Fluency (GLEU) and reference-based accuracy for generated English text.

    >>> from scorer import load_scorer, rerank, score_accuracy
    >>> scorer = load_scorer("default")
    >>> scorer.score(["The company said profits rose in the first quarter."])

Several bundles at once, those on the same GLEU base sharing the LM, the parsers and the rows
already read (`scorer.bundles`):

    >>> from scorer import load_scorers
    >>> scorers = load_scorers(["default", "data-to-text"])  # {name: FluencyScorer}
    >>> scorers["data-to-text"].score(["The company said profits rose in the first quarter."])

The names below are the public API. They are imported on first use (PEP 562), so `import
scorer` and `fluency --help` do not load spaCy, scikit-learn or torch.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__all__ = [
    "FeatureError",
    "FluencyScorer",
    "GenreError",
    "InputError",
    "ModelLoadError",
    "Ranked",
    "Score",
    "ScorerError",
    "all_pairs",
    "load_scorer",
    "load_scorers",
    "paired_approximate_randomization",
    "paired_bootstrap",
    "rerank",
    "score_accuracy",
]

_WHERE = {
    "FeatureError": "scorer.errors",
    "GenreError": "scorer.errors",
    "InputError": "scorer.errors",
    "ModelLoadError": "scorer.errors",
    "ScorerError": "scorer.errors",
    "FluencyScorer": "scorer.scoring",
    "Score": "scorer.scoring",
    "load_scorer": "scorer.scoring",
    "load_scorers": "scorer.bundles",
    "Ranked": "scorer.rerank",
    "rerank": "scorer.rerank",
    "score_accuracy": "features.accuracy",
    "all_pairs": "scorer.evidence.significance",
    "paired_approximate_randomization": "scorer.evidence.significance",
    "paired_bootstrap": "scorer.evidence.significance",
}

if TYPE_CHECKING:  # pragma: no cover
    from features.accuracy import score_accuracy
    from scorer.bundles import load_scorers
    from scorer.errors import FeatureError, GenreError, InputError, ModelLoadError, ScorerError
    from scorer.evidence.significance import (
        all_pairs,
        paired_approximate_randomization,
        paired_bootstrap,
    )
    from scorer.rerank import Ranked, rerank
    from scorer.scoring import FluencyScorer, Score, load_scorer


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'scorer' has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
