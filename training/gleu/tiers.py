"""The recipe of each shipped tier, as its card records it: `fluency train --tier NAME`.

A shipped bundle's card keeps the arguments it was trained with (`training.arguments`) and the
extractors it reads (`features`). Retraining "as the default was made" means those extractors
and those options for making and ranking the negatives, on another corpus: `recipe` reads them
from the card, so the recipe cannot drift from the bundle it names. What a run is about (the
corpus, the output, how many sentences, the seed, the processes) is never taken from a card.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from features.errors import ModelLoadError
from features.resources import MODELS_DIR

__all__ = ["BUILT_IN", "OPTIONS", "TIERS", "recipe", "resolve"]

TIERS = ("default", "fast", "full", "neural")
# The options a recipe sets, with the value a card that lacks one stands for (the value these
# options had before the card recorded them).
BUILT_IN: dict[str, Any] = {
    "objective": "rank",
    "levels": "binary",
    "kernels": ["linear"],
    "glue_sizes": [1, 2, 3, 4, 6, 8],
    "error_kinds": ["swap", "drop", "duplicate", "inflection", "repeat", "fragment", "garbage"],
    "error_share": 0.25,
    "lowercase_share": 0.0,
    "bare_share": 0.0,
    "passage_share": 0.0,
}
OPTIONS = ("features", *BUILT_IN)


def recipe(tier: str, models_dir: str | Path = MODELS_DIR) -> dict[str, Any]:
    """{option: value} for `OPTIONS`: the extractors of the shipped bundle `tier` and the
    options it was trained with, from its card."""
    if tier not in TIERS:
        raise ModelLoadError(f"unknown tier {tier!r}; the tiers are {', '.join(TIERS)}")
    path = Path(models_dir) / tier / "card.json"
    try:
        card = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ModelLoadError(f"the {tier} tier's card {path} cannot be read: {exc}") from exc
    arguments = (card.get("training") or {}).get("arguments") or {}
    out = {k: arguments.get(k) if arguments.get(k) is not None else v for k, v in BUILT_IN.items()}
    return {"features": list(card["features"]), **out}


def resolve(given: Mapping[str, Any], tier: str, name: str) -> dict[str, Any]:
    """The options of a run: each one given on the command line (not None) wins over the tier's
    recipe. Extractors that need an extra that is not installed are refused here, naming the
    extra, before any corpus is read; `name` is the bundle's, for the message."""
    from features.optional_imports import require_features

    options = recipe(tier)
    options.update((k, v) for k, v in given.items() if k in OPTIONS and v is not None)
    require_features(options["features"], name)
    return options
