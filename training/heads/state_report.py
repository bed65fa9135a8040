"""The learned head's tables and card (`training.heads.state_ridge`): the rows of its table
(`training.heads.tables.row`, as every head's) per text, per system and per file with intervals
and per-file wins, as Markdown, and the head as a card section written through the lean card's
writer (`training.heads.cards.write_card`)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from scorer.calibration import card_heads
from training.heads.files import MINUS_LENGTH

__all__ = ["add_states_family", "per_file_lines", "section", "table_lines", "write_heads"]

LOGPROB = "neural.v2/logprob_sum"
STATES = "neural_states.v1"


def table_lines(rows: Sequence[Mapping], n_files: int) -> list[str]:
    """The rows as markdown: per text rho / tau with intervals, per system pair accuracy with
    its interval, per-file wins against each comparison."""
    names = [MINUS_LENGTH, "logprob sum", "current head"]
    out = [
        "| reading | rho [95%] | tau [95%] | system pairs [95%] | "
        + " | ".join(f"wins vs {n} (of {n_files})" for n in names)
        + " |",
        "|---|---|---|---|" + "---|" * len(names),
    ]
    for r in rows:
        s = r.get("system") or {}
        out.append(
            f"| {r['label']} | {_cell(r['rho'], r['rho_95'])} | {_cell(r['tau'], r['tau_95'])} | "
            f"{_cell(s.get('accuracy'), s.get('accuracy_95'))} | "
            + " | ".join(str(r["wins"][n]) for n in names)
            + " |"
        )
    return out


def _cell(value, interval=None) -> str:
    if value is None:
        return "–"
    if not interval or interval[0] is None:
        return f"{value:.3f}"
    return f"{value:.3f} [{interval[0]:.3f}, {interval[1]:.3f}]"


def per_file_lines(rows: Sequence[Mapping]) -> list[str]:
    """Per file rho / tau of every row, one file a line."""
    files = list(rows[0]["per_file"])
    out = ["| file | " + " | ".join(r["label"] for r in rows) + " |"]
    out.append("|---|" + "---|" * len(rows))
    for name in files:
        cells = []
        for r in rows:
            rho, tau = r["per_file"][name]
            cells.append(_cell(rho) + ("" if tau is None else f" / {tau:.3f}"))
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    return out


def section(
    head,
    files: Sequence,
    decision: Mapping,
    command: str,
    *,
    genre: str = "general",
    held: str = "one genre out, over every genre",
) -> dict:
    """A head's card section (`scorer.calibration.load_head_section`): a linear head
    read whole, over the GLEU score (weight 0), the state columns and the summed
    log-probability; no clip (each input's range is the model's own)."""
    from features.neural_lm import STATE_NAMES

    inputs = ["gleu", *[f"{STATES}/{n}" for n in STATE_NAMES], LOGPROB]
    coef = [0.0, *head.coef.tolist(), head.logprob_coef]
    return {
        "genre": genre,
        "aggregate": "whole",
        "inputs": inputs,
        "linear": {"coef": coef, "intercept": head.intercept},
        "target": "the human score, z-normalised within each dataset",
        "regressor": (
            f"ridge (alpha {head.alpha:g} per 1,000 weighted rows) on SmolLM2's standardised "
            f"layer-{head.layer} states, {head.pooling}-pooled"
            + (", averaged in z with the summed log-probability" if head.logprob_coef else "")
        ),
        "states": {
            "layer": head.layer,
            "pooling": head.pooling,
            "alpha": head.alpha,
            "variant": head.variant,
        },
        "held_out": held,
        "selection": dict(decision),
        "files": {f.name: len(f.human) for f in files},
        "command": command,
    }


def add_states_family(folder: Path) -> dict:
    """The card in `folder`, written back with the states family as the extractors its heads
    read (`head_features`), as a learned head needs before it is written."""
    path = Path(folder) / "card.json"
    card = json.loads(path.read_text(encoding="utf-8"))
    card["head_features"] = [STATES]
    path.write_text(json.dumps(card, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return card


def write_heads(scorer, sections: Mapping[str, dict], entries: Mapping[str, dict]) -> None:
    """The heads into their bundle (`training.heads.cards.write_card`: the card without tables,
    `heads_report.json` beside it, the README), replacing those of their genres, the states
    family among the extractors its heads read (`add_states_family`); the other heads and their
    reports kept."""
    from scorer.heads_report import read_heads_report
    from training.heads.cards import write_card

    folder = Path(scorer.folder)
    card = add_states_family(folder)
    write_card(
        folder,
        {**card_heads(card), **sections},
        {**read_heads_report(folder, card), **entries},
    )
