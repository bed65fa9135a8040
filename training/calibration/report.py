"""What `fluency calibrate` says of its choice: the card's report (`card_report`: what the head
started from, each round's leading candidates with their gain over the head in hand and its
bound, why it switched or did not) and the same as text (`report`), both read from each round's
evidence (`training.calibration.switch.Evidence`: a record per candidate, as every head is
chosen on).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence

from training.calibration.start import Outcome
from training.calibration.switch import LEVEL
from training.heads import RESIDUAL_RIDGE, HeadFile, ScrambleCheck

__all__ = ["card_report", "regressor", "report"]


def regressor(outcome: Outcome) -> str:
    """How the head maps its inputs to the ratings, for the card."""
    kind = outcome.head.kind
    if outcome.kept:
        return f"the starting head, {outcome.start.label}, as the bundle has it"
    if kind in ("head", "reading"):
        return f"{outcome.head.label} on the ratings' scale (a positive slope and an intercept)"
    if kind == RESIDUAL_RIDGE:
        return (
            "the head in hand on the ratings' scale (a positive slope) plus a ridge on "
            "standardised columns fitted to what it leaves, alpha chosen on the folds"
        )
    return "non-negative ridge on standardised inputs turned by their own signs"


def _fmt(v: float | None) -> str:
    return "–" if v is None or not math.isfinite(v) else f"{v:+.3f}"


def card_report(outcome: Outcome, files: Sequence[HeadFile], check: ScrambleCheck | None) -> dict:
    """The card's report of the choice: what it started from, each round's leading candidates
    (criterion, gain over the head in hand, the gain's bound), and why it switched or not."""
    table = []
    for name, ev in outcome.rounds:
        for k in ev.ranked()[:8]:
            row = ev.row(k)
            table.append({**row, "round": name})
    held = "named readings judged whole on every rating (no fit)"
    if len(outcome.rounds) > 1:
        held += "; fitted candidates on folds of the inputs"
    return {
        "ship": True,
        "decision": outcome.decision(),
        "reading": outcome.head.reading,
        "inputs": list(outcome.head.inputs),
        "held_out": held,
        "started_from": outcome.started_from,
        "tried": {name: len(ev.candidates) for name, ev in outcome.rounds},
        "scrambles": None,
        "table": table,
    }


def report(outcome: Outcome, files: Sequence[HeadFile], out=None) -> None:
    """What the head started from, what was tried (the leading candidates of each round with
    their gain over the head in hand and its bound), and why it switched or did not; to `out`
    (default: standard output)."""
    out = sys.stdout if out is None else out
    n = sum(len(f.human) for f in files)
    n_inputs = sum(len(set(f.groups)) for f in files)
    grouped = n_inputs < n
    unit = "inputs" if grouped else "outputs (no inputs named: rho alone, over outputs)"
    criterion = "mean rho + per-input tau" if grouped else "rho"
    print(f"started from {outcome.started_from}: {outcome.start.label}", file=out)
    print(f"  {outcome.start.weights_text()}", file=out)
    print(f"on {n} ratings of {n_inputs} {unit}", file=out)
    for name, ev in outcome.rounds:
        print(f"\n### {name}: {len(ev.candidates)} tried", file=out)
        print(f"criterion ({criterion}) of the head in hand: {ev.start:.3f}", file=out)
        print(f"| candidate | criterion | gain | {LEVEL:.0%} bound, all tried at once |", file=out)
        print("|---|---:|---:|---:|", file=out)
        for k in ev.ranked()[:6]:
            c = ev.candidates[k]
            mark = " (taken)" if k == ev.chosen else ""
            print(
                f"| {c.label}{mark} | {c.judgement.criterion:.3f} | {_fmt(ev.gain[k])} | "
                f"{_fmt(ev.low[k])} |",
                file=out,
            )
    print(file=out)
    for note in outcome.notes:
        print(f"- {note}", file=out)
