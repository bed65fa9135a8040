"""Bundles with genre heads for tests: a copy of a bundle whose card gets a `heads` section (and a
`heads_report`) written here by hand, and the shipped bundles, whose heads are tested the same
way once their cards ship them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from features.resources import MODELS_DIR
from scorer.heads import GENERAL, card_heads

# Held-out figures as `training.heads` reports them: the first row of a head's table.
GENERAL_HELD_OUT = {"rho": 0.41, "tau": 0.3, "rho_95": [0.35, 0.47], "tau_95": [0.25, 0.34]}
MT_HELD_OUT = {"rho": 0.33, "tau": 0.24, "rho_95": [0.21, 0.44], "tau_95": [0.15, 0.32]}
# Held out per system (`training.heads`): the general head's, on files of six or more systems.
GENERAL_SYSTEMS = {"accuracy": 0.7, "rho": 0.6, "accuracy_95": [0.6, 0.8], "rho_95": [0.4, 0.8]}
NOT_SHIPPED = "not shipped: held out, it does not beat minus length on both means"
# The bundles of models/ cheap enough to load in every run; the others run with -m slow.
CHEAP = ("default", "data-to-text", "fast")


def _row(label: str, figures: dict) -> dict:
    return {"label": label, **figures, "per_file": {}}


def heads_for(card: dict) -> dict[str, dict]:
    """Two linear heads on the card's own columns: `mt` reads the length alone, whole texts (its
    GLEU weight 0); `dialogue` the GLEU score, another column (capped above) and a reading, its
    sentences folded by token-weighted mean."""
    columns = list(card["feature_columns"])
    n_tokens = next(c for c in columns if c.endswith("/n_tokens"))
    other = next(c for c in columns if c != n_tokens and not c.endswith("/log_n_tokens"))
    return {
        "mt": {
            "genre": "mt",
            "aggregate": "whole",
            "inputs": ["gleu", n_tokens],
            "linear": {"coef": [0.0, -0.05], "intercept": 0.3},
            "clip": {"low": [None, None], "high": [None, None]},
        },
        "dialogue": {
            "genre": "dialogue",
            "aggregate": "weighted",
            "inputs": ["gleu", other, "reading/n_sentences"],
            "linear": {"coef": [0.8, 0.5, -0.1], "intercept": -0.2},
            "clip": {"low": [None, None, None], "high": [None, 0.5, None]},
        },
    }


def with_heads(source: Path, target: Path, name: str) -> Path:
    """`source` copied to `target` as the bundle `name`, its card given the heads of `heads_for`
    (a general linear one too where it has none) and a `heads_report`: `general` and `mt`
    shipped with their held-out figures, `dialogue` with none, `summaries` not shipped."""
    shutil.copytree(source, target)
    path = target / "card.json"
    card = json.loads(path.read_text())
    card["name"] = name
    general = card_heads(card).get(GENERAL) or {
        "aggregate": "weighted",
        "inputs": ["gleu"],
        "linear": {"coef": [1.2], "intercept": 0.1},
    }
    card.pop("calibration", None)
    card.pop("heads_report_file", None)  # the tables in the card, as 0.12.1 wrote them
    card["heads"] = {GENERAL: general, **heads_for(card)}
    card["heads_report"] = {
        "general": {
            "decision": "shipped",
            "table": [_row("head", GENERAL_HELD_OUT) | {"system": GENERAL_SYSTEMS}],
        },
        "mt": {"decision": "shipped", "table": [_row("head", MT_HELD_OUT)]},
        "summaries": {"decision": NOT_SHIPPED, "table": [_row("head", MT_HELD_OUT)]},
    }
    path.write_text(json.dumps(card))
    return target


def shipped_bundles() -> list:
    """Every bundle of models/ as a pytest parameter, those outside `CHEAP` marked slow."""
    names = sorted(
        p.name
        for p in MODELS_DIR.iterdir()
        if (p / "card.json").is_file() and (p / "model.joblib").is_file()
    )
    return [pytest.param(n, id=n, marks=() if n in CHEAP else pytest.mark.slow) for n in names]
