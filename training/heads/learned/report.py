"""The learned head's card (`training.heads.learned.ridge`): the head as a card section written
through the lean card's writer (`training.heads.report.cards.write_card`); its table is every head's
(`training.heads.report.tables`)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from scorer.heads import Head, card_heads

__all__ = ["add_states_family", "section", "write_heads"]

LOGPROB = "neural.v2/logprob_sum"
STATES = "neural_states.v1"


def section(
    head,
    files: Sequence,
    decision: Mapping,
    command: str,
    *,
    genre: str = "general",
    held: str = "one genre out, over every genre",
) -> dict:
    """A head's card section (`scorer.heads.Head.to_section`): a linear head read whole, over
    the GLEU score (weight 0), the state columns and the summed log-probability; no clip (each
    input's range is the model's own)."""
    from features.neural_states import STATE_NAMES

    # The state columns the ridge weighs, in the extractor's order (all of them but in a test).
    inputs = ["gleu", *[f"{STATES}/{n}" for n in STATE_NAMES[: len(head.coef)]], LOGPROB]
    coef = [0.0, *head.coef.tolist(), head.logprob_coef]
    about = {
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
    return Head(inputs, coef, head.intercept, "whole", None, about).to_section(genre)


def add_states_family(folder: Path) -> dict:
    """The card in `folder`, written back with the states family as the extractors its heads
    read (`head_features`), as a learned head needs before it is written."""
    path = Path(folder) / "card.json"
    card = json.loads(path.read_text(encoding="utf-8"))
    card["head_features"] = [STATES]
    path.write_text(json.dumps(card, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return card


def write_heads(scorer, sections: Mapping[str, dict], entries: Mapping[str, dict]) -> None:
    """The heads into their bundle (`training.heads.report.cards.write_card`: the card without
    tables, `heads_report.json` beside it, the README), replacing those of their genres, the states
    family among the extractors its heads read (`add_states_family`); the other heads and their
    reports kept."""
    from scorer.heads_report import read_heads_report
    from training.heads.report.cards import write_card

    folder = Path(scorer.folder)
    card = add_states_family(folder)
    write_card(
        folder,
        {**card_heads(card), **sections},
        {**read_heads_report(folder, card), **entries},
    )
