"""The learned head chosen for one unit (the general head, one genre out; a genre's head, one
dataset of the genre out): every variant held out side by side (`training.heads.learned.ridge`,
`training.heads.learned.residual`), the best held-out criterion picking the layer, pooling and
variant, the alpha by the one-standard-error rule, then the one ship rule
(`training.heads.selection.ship_rule.ships`) against the current head, minus the length and the best
single input, with the table it was decided on (`evaluate`). What it is judged against is held out
once on the chooser's evidence (`training.heads.selection.evidence.Evidence`), the linear
candidates' own, with the same system draws.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from scorer.heads import Head
from training.heads.data.files import MINUS_LENGTH
from training.heads.data.judged import HeadFile
from training.heads.data.said_again import KINDS as SAID_AGAIN_KINDS
from training.heads.learned.residual import RESIDUAL, held_out_residual
from training.heads.learned.ridge import VARIANTS, StateHead, choose, held_out_predictions
from training.heads.learned.rows import StateFile
from training.heads.metrics.figures import Judgement, judge
from training.heads.report.tables import row
from training.heads.selection.ship_rule import ships, wins

__all__ = [
    "CURRENT",
    "LABELS",
    "below",
    "current_setting",
    "evaluate",
    "head_scores",
    "record_checks",
]


LOGPROB = "neural.v2/logprob_sum"
LOGPROB_LABEL = "SmolLM2 logprob sum"
GLEU_WHOLE = "GLEU, whole"
CURRENT = "current head"
LABELS = {
    "states": "ridge on the states",
    "states + logprob": "ridge on the states + logprob sum, in z",
    RESIDUAL: "current head + a ridge on the states, fitted to what it leaves",
}


def head_scores(head: StateHead | Head) -> Callable:
    """The scores of `head` from a check's columns ({reading: {input: one value a text}}): a
    ridge on the states reads the states extractor's layer and pooling, read whole."""
    from features.neural_states import STATE_NAMES

    def scores(cols):
        if isinstance(head, Head):
            return head.predict(cols)
        whole = cols["whole"]
        states = np.column_stack([whole[f"neural_states.v1/{n}"] for n in STATE_NAMES])
        return head.predict(states, whole[LOGPROB])

    return scores


def below(head: StateHead | Head, check) -> dict[str, float]:
    """{"shuffles": the share of real sentences `head` scores above their shuffles, and each kind
    of run and loop the check holds: the share above theirs, a tie one half; each kind of
    said-again version: the share at or below the text, at the head's weight on what is said
    again}. `check` holds them as columns (`training.heads.data.files.scramble_check`, with the
    columns only a learned head reads)."""
    return check.shares(head_scores(head))


def current_setting(head: Head) -> tuple[str, list]:
    """(reading, inputs) of a card head, refitted held out to judge against; a learned head
    ("states", its layer, pooling, variant and alpha): its own held-out predictions."""
    if head.states is not None:
        s = head.states
        return "states", [s["layer"], s["pooling"], s["variant"], float(s["alpha"])]
    return head.reading, head.read()


def _row(label, preds, evidence, others: Mapping[str, Judgement]):
    """`preds`' row (`training.heads.report.tables.row`), with intervals, figures per system and its
    per-file wins against each of `others`, on `evidence`'s files and draws."""
    j = evidence.judge(preds)
    ci = evidence.interval(preds)
    view = evidence.view
    system = view.figures(preds).as_dict() if view else None
    return row(label, j, ci, system=system, wins={k: wins(j, o) for k, o in others.items()})


def evaluate(
    files: Sequence[StateFile],
    judged: Sequence[HeadFile],
    by_genre: bool,
    grid_axes: tuple[Sequence[int], Sequence[str]],
    current: tuple[str, Sequence],
    *,
    evidence,
    at: tuple[int, int] | None = None,
    residual: tuple | None = None,
    scrambles: Callable[[tuple], Mapping[str, float] | None] | None = None,
    floor: float = 0.95,
    current_preds: Mapping[str, np.ndarray] | None = None,
) -> dict:
    """The learned head for `files` held out (one genre out with `by_genre`, else one dataset
    out; `grid_axes`: the layers and poolings the files' states hold), chosen
    (`training.heads.learned.ridge.choose`), judged against minus the length, the summed
    log-probability, the GLEU score and the `current` head ((reading, inputs), refitted held out
    the same way), per text and per system, all held out once on `evidence` (the chooser's,
    `training.heads.selection.evidence.Evidence`, on `judged`), and the ship rule's decision
    (`training.heads.selection.ship_rule.ships`). `residual`: (fit files, the head it starts from,
    (layer, pooling)) for the residual variant (None: not tried); `scrambles(key)`: the shares of
    real sentences the head of that setting scores above their shuffles, runs and loops (`below`;
    None: not checked). `current_preds`: the current head's held-out scores as it was fitted
    (a learned head fitted on another cut), in place of its setting refitted on `files`.
    Returns {"chosen", "how", "ok", "entry" (the report's entry, its table headed by the
    head), "grid" (every setting's criterion), "preds" (the chosen head's held-out scores,
    {file: scores}), "current" (the current head's), "refs" ({label: judgement} of what it was
    judged against), "checks" (the chosen head's shares of shuffles, runs, loops and said
    again), "judgement" and "gap" (its system accuracy less the current head's, 95%; None: not
    gated per system)}."""
    layers, poolings = grid_axes
    grid = None if at is None else [at]
    preds = held_out_predictions(files, by_genre, layers, poolings, grid=grid)
    variants = list(VARIANTS)
    if residual is not None:
        fit_files, base, where = residual
        preds |= held_out_residual(fit_files, judged, by_genre, base, where)
        variants.append(RESIDUAL)
    scores = {k: judge(p, judged, by_genre) for k, p in preds.items()}
    # A setting that scores real sentences below their shuffles, runs or loops is no candidate.
    checked = {k: dict(scrambles(k) or {}) for k in scores} if scrambles else {}
    failing = {k: c for k, c in checked.items() if c and min(c.values()) < floor}
    eligible = {k: v for k, v in scores.items() if k not in failing} or scores
    chosen, how = choose(eligible)
    if failing:
        how["failed the checks"] = [f"{k[2]}, alpha {k[3]:g}" for k in failing]
    view = evidence.view
    reading, inputs = current  # reading "states": a learned head, inputs its settings
    comparisons = {
        MINUS_LENGTH: {f.name: f.baselines[MINUS_LENGTH] for f in judged},
        LOGPROB_LABEL: evidence.held("whole", [LOGPROB]),
        CURRENT: (
            current_preds
            if current_preds is not None
            else preds[tuple(inputs)]
            if reading == "states"
            else evidence.held(reading, list(inputs))
        ),
        GLEU_WHOLE: evidence.held("whole", ["gleu"]),
    }
    if residual is not None:  # the residual variant's own inputs beside the states: its base's
        base = residual[1]
        for c in base.inputs:
            comparisons.setdefault(f"{c} ({base.reading})", evidence.held(base.reading, [c]))
    refs = {k: judge(v, judged, by_genre) for k, v in comparisons.items()}
    others = {
        MINUS_LENGTH: refs[MINUS_LENGTH],
        "logprob sum": refs[LOGPROB_LABEL],
        "current head": refs[CURRENT],
    }
    best_of = {}
    for variant in variants:  # each variant at its own best layer, pooling and alpha
        mine = {k: v for k, v in eligible.items() if k[2] == variant}
        if mine:
            best_of[variant], _ = choose(mine)
    # Its best single input: the summed log-probability for a ridge on the states (what
    # SmolLM2 gives whole, from the same pass), the residual variant's base's own inputs alone.
    own = [LOGPROB_LABEL]
    if chosen[2] == RESIDUAL:
        own = [f"{c} ({residual[1].reading})" for c in residual[1].inputs]
    best_input = max(own, key=lambda k: np.nan_to_num(refs[k].criterion, nan=-9))
    gap = view.gain(preds[chosen], comparisons[CURRENT]) if (view and by_genre) else None
    shares = dict(checked.get(chosen, {}))
    share = shares.pop("shuffles", None)
    again = {k: shares.pop(k) for k in list(shares) if k in SAID_AGAIN_KINDS}
    # A learned current head that fails the checks itself is no bar: it is not kept for them.
    bar = current_preds is not None or not (reading == "states" and tuple(inputs) in failing)
    ruling = ships(
        scores[chosen],
        minus=refs[MINUS_LENGTH],
        best_input=(best_input, refs[best_input]),
        current=refs[CURRENT] if bar else None,
        system_gap=gap if bar else None,
        scrambles=share,
        floor=floor,
        degenerate=shares or None,
        said_again=again or None,
        evidence={"minus the length" if k == MINUS_LENGTH else k: j for k, j in refs.items()},
    )
    rows = []
    for variant, key in [(chosen[2], chosen), *[(v, k) for v, k in best_of.items() if k != chosen]]:
        label = "head" if key == chosen else f"{LABELS[variant]} (layer {key[0]}, {key[1]})"
        mine = _row(label, preds[key], evidence, others)
        rows.append(mine)
        if key == chosen:  # what the README's table reads: the head against its inputs
            mine["wins"] |= {
                "best single input": wins(scores[chosen], refs[best_input]),
                "files": len(judged),
            }
            for label, p in comparisons.items():
                if label == CURRENT:
                    label = f"current head ({', '.join(map(str, inputs))}, {reading})"
                if label == best_input:
                    label = f"best single input: {label}"
                rows.append(_row(label, p, evidence, others))
    layer, pooling, variant, alpha = chosen
    held = "one genre out, over every genre" if by_genre else "one dataset of the genre out"
    entry = {
        "decision": (
            f"{'shipped' if ruling.ok else 'not shipped'}: {LABELS[variant]} (SmolLM2 layer "
            f"{layer} of 30, {pooling}-pooled, alpha {alpha:g} per 1,000 rows); {ruling.why}"
        ),
        "rule": "training.heads.selection.ship_rule.ships",
        "reading": "whole" if variant != RESIDUAL else residual[1].reading,
        "inputs": (list(residual[1].inputs) if variant == RESIDUAL else [])
        + [f"SmolLM2 states (layer {layer}, {pooling})"]
        + ([LOGPROB] if "+" in variant else []),
        "held_out": held,
        "table": rows,
        "system_level_skipped": dict(view.skipped) if view else {},
    }
    if not bar:
        checks = ", ".join(
            f"{v:.1%} of {k if k == 'shuffles' else k + 's'}"
            for k, v in failing[tuple(inputs)].items()
        )
        entry["decision"] += f"; the current head fails the checks ({checks}): no bar"
    record_checks(entry, share, shares, again)
    grid_out = {f"{k[0]}/{k[1]}/{k[2]}/{k[3]:g}": round(j.criterion, 4) for k, j in scores.items()}
    return {
        "chosen": chosen,
        "how": how,
        "ok": ruling.ok,
        "entry": entry,
        "grid": grid_out,
        "preds": preds[chosen],
        "current": comparisons[CURRENT],
        "refs": refs,
        "checks": dict(checked.get(chosen, {})),
        "judgement": scores[chosen],
        "gap": gap,
    }


def record_checks(entry: dict, share, shares: Mapping, again: Mapping) -> None:
    """Put a head's checks in its report entry: its share of shuffles scored below their
    sentences, its shares of runs and loops, and of each said-again kind (those it has)."""
    if share is not None:
        entry["scrambles"] = share
    if shares:
        entry["runs and loops"] = dict(shares)
    if again:
        entry["said again"] = dict(again)
