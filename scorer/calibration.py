"""Deprecated since 0.18.0, gone in the next release: the heads are `scorer.heads` (`Head`,
`load_head`, `load_genre_heads`, `read_head`) and what they read `scorer.readings`."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from scorer.heads import (
    GENERAL,
    GLEU_INPUT,
    Head,
    card_heads,
    head_columns,
    load_genre_heads,
    load_head,
    read_head,
    without_general_head,
)
from scorer.readings import (
    DERIVED,
    READINGS,
    SAID_AGAIN,
    TEXT_READINGS,
    bundle_readings,
    reading_columns,
    text_readings,
    with_derived,
)

__all__ = [
    "DERIVED",
    "GENERAL",
    "GLEU_INPUT",
    "READINGS",
    "SAID_AGAIN",
    "TEXT_READINGS",
    "Calibration",
    "bundle_readings",
    "card_heads",
    "head_columns",
    "load_calibration",
    "load_genre_heads",
    "load_head_section",
    "reading_columns",
    "text_readings",
    "with_derived",
    "without_general_head",
]

MOVED = "scorer.calibration is deprecated: use scorer.heads and scorer.readings"
warnings.warn(MOVED, DeprecationWarning, stacklevel=2)


class Calibration:
    """Deprecated: `scorer.heads.Head`. `Calibration(model, inputs, aggregate, clip)` with a
    linear `model` (its `coef` and `intercept`) gives that `Head`."""

    def __new__(
        cls,
        model: Any,
        inputs: Sequence[str],
        aggregate: str | None = None,
        clip: tuple | None = None,
    ) -> Head:
        warnings.warn(f"{MOVED} (Head)", DeprecationWarning, stacklevel=2)
        if not hasattr(model, "coef") or not hasattr(model, "intercept"):
            raise TypeError("a head is linear: give Head(inputs, coef, intercept, reading, clip)")
        return Head(tuple(inputs), model.coef, model.intercept, aggregate, clip)


def load_calibration(folder: str | Path, card: Mapping[str, Any]) -> Head | None:
    """Deprecated: `scorer.heads.load_head`."""
    warnings.warn(f"{MOVED} (load_head)", DeprecationWarning, stacklevel=2)
    return load_head(folder, card)


def load_head_section(folder: str | Path, card: Mapping[str, Any], section, **what: str) -> Head:
    """Deprecated: `scorer.heads.read_head` (`what=` names the head in errors)."""
    warnings.warn(f"{MOVED} (read_head)", DeprecationWarning, stacklevel=2)
    return read_head(folder, card, section, **what)
