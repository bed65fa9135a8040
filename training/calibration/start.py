"""Calibration that starts from the shipped head: `fluency calibrate`'s choice.

A user's head starts as the bundle's head for the genre named (its general head for a genre it
lacks, or the head `--from` names) and stays that head unless the user's ratings show better
(`training.calibration.switch`: a paired bootstrap over the user's inputs, bounds that hold for
every candidate tried at once). Rounds of candidates, each judged against the head in hand:

1. Named readings, each judged whole as one input, with no fit: every other head of the bundle,
   minus the length (raters who reward brevity), each summed log-probability (the n-gram LM's,
   spaCy's parse, SmolLM2's on the neural tier) and the GLEU score under each reading. Each
   keeps its own direction (larger is more fluent), so nothing about it is learnt from the
   ratings it is judged on: a switch on them is not an artefact of fitting.
2. Fitted: every single feature column (its sign taken on the training folds) and every column
   added to the head in hand (a non-negative ridge over the head's score and the column,
   `training.heads.estimators.select.fit_head`), judged on the user's data in folds of whole inputs,
   each output scored by a fit that did not see it. An addition that wins is kept and the round
   repeats, up to `max_inputs` columns added.
3. The head in hand plus a ridge on the feature columns it does not read, fitted to what it
   leaves of the ratings (shrunk toward it, its alpha chosen on the user's folds,
   `training.heads.estimators.residual_ridge`); then, on the neural tier (the ratings hold SmolLM2's
   states), the same on the states. Each is one candidate, judged in folds as the fitted round is.

A named reading that wins is written on the user's scale: an affine map (a slope kept
positive, `sklearn.linear_model.LinearRegression(positive=True)`) from the reading to the
ratings, z-normalised within each dataset; a rank-only judgement does not depend on it. A head
kept is written as the bundle has it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from features.errors import InputError
from scorer.contributions import GROUPS
from scorer.heads import GENERAL, GLEU_INPUT, Head, card_heads
from scorer.readings import TEXT_READINGS
from training.calibration.switch import LEVEL, Evidence, evidence
from training.heads import (
    FEATURES,
    FOLDS,
    STATES,
    HeadFile,
    Plan,
    ResidualRidge,
    ScrambleCheck,
    cross_validated,
    on_their_scale,
    state_columns,
    with_base,
)

__all__ = [
    "LOGPROB_SUMS",
    "MIN_INPUTS",
    "Head",
    "Outcome",
    "calibrate_from",
    "named_readings",
    "start_head",
]

MINUS_THE_LENGTH = "minus the length"
# The summed log-probabilities a bundle may read: the n-gram LM's (derived), spaCy's parse's
# and SmolLM2's (the neural tier).
LOGPROB_SUMS = ("lm.v1/logprob_sum", "spacy.v1/logprob_sum", "neural.v2/logprob_sum")
# Fewer inputs than this and the bootstrap has too few distinct draws to bound a gain (two
# inputs give three), and the inputs too few to stand for the ones to come: nothing is tried.
MIN_INPUTS = 10
GROUPED = tuple(GROUPS)  # columns only a learned head reads (`scorer.contributions.GROUPS`)


def start_head(card: Mapping, genre: str, start: str | None = None) -> tuple[str, Head]:
    """(what the head started from, the head): the bundle's head named `start`, else its head
    for `genre`, else its general head, else the GLEU score read whole."""
    heads = card_heads(card)
    name = card.get("name", "the bundle")
    if start is not None and start not in heads:
        raise InputError(
            f"--from {start!r}: {name} has no head of that name; its heads: "
            f"{', '.join(heads) or 'none'}"
        )
    pick = start or (genre if genre in heads else GENERAL if GENERAL in heads else None)
    if pick is None:
        why = f"{name} has no head for {genre} and no general head: the GLEU score read whole"
        return why, Head(
            (GLEU_INPUT,), [1.0], 0.0, "whole", label="the GLEU score (whole)", kind="reading"
        )
    head = Head.from_section(heads[pick], label=f"head {pick}")
    why = {
        start: f"the head --from names, {pick}",
        genre: f"{name}'s head for {genre}",
    }.get(pick, f"{name}'s general head ({name} has no head for {genre})")
    return why, head


def named_readings(
    card: Mapping,
    readings: Sequence[str],
    columns: Mapping[str, Mapping[str, np.ndarray]],
    *,
    heads: Mapping[str, Head] | None = None,
) -> list[Head]:
    """The named readings (module docstring) a file read as `columns` can be scored by: every
    head of the bundle (or `heads`), minus the length, each summed log-probability and the GLEU
    score under each of `readings`."""
    if heads is None:
        heads = {}
        for name, section in card_heads(card).items():
            heads[name] = Head.from_section(section, label=f"head {name}")
    out = [h for h in heads.values() if all(c in columns.get(h.reading, {}) for c in h.inputs)]
    first = readings[0]
    length = next((c for c in columns[first] if c.endswith("/n_tokens")), None)
    if length:
        read = "whole" if "whole" in readings else first
        out.append(Head((length,), [-1.0], 0.0, read, label=MINUS_THE_LENGTH, kind="reading"))
    summed = "sum" if "sum" in readings else first
    for c in LOGPROB_SUMS:
        if c in columns[summed]:
            out.append(Head((c,), [1.0], 0.0, summed, label=f"{c} ({summed})", kind="reading"))
    for r in readings:
        out.append(
            Head((GLEU_INPUT,), [1.0], 0.0, r, label=f"the GLEU score ({r})", kind="reading")
        )
    return out


# -- the choice ----------------------------------------------------------------------------------


@dataclass
class Outcome:
    """What `calibrate_from` found: the head it started from, the head to write, and per round
    the evidence and what the rule made of it."""

    started_from: str
    start: Head
    head: Head
    rounds: list[tuple[str, Evidence]]
    notes: list[str]

    @property
    def kept(self) -> bool:
        return self.head is self.start

    def decision(self) -> str:
        if self.kept:
            return f"shipped: kept the starting head, {self.start.label}: " + "; ".join(self.notes)
        return f"shipped: {self.head.label}, over the starting head {self.start.label}: " + (
            "; ".join(self.notes)
        )


def _passes(head: Head, check: ScrambleCheck | None) -> float:
    """The lowest share of `check` `head` keeps: real sentences above their shuffles (a tie one
    half) and, with the said-again check, each kind of version at or below its text, the head
    scoring as it would ship (with whatever weight on what is said again it carries)."""
    if check is None:
        return math.nan
    a, b = head.predict(check.real), head.predict(check.shuffled)
    shares = [float(np.mean(a > b) + 0.5 * np.mean(a == b))]
    if check.said_again is not None:
        shares += check.said_again.shares(head.predict, head.reading, 0.0).values()
    return min(shares)


def _round(
    name: str,
    current: Mapping[str, np.ndarray],
    candidates: Mapping[str, Mapping[str, np.ndarray]],
    files: Sequence[HeadFile],
    make,
    check: ScrambleCheck | None,
    notes: list[str],
    *,
    n_samples: int,
    seed: int,
    level: float,
) -> tuple[Evidence, Head | None]:
    """One round: the evidence, and the head the rule takes (None: the head in hand stays).
    With `check`, a qualified candidate that scores shuffled sentences as high as real ones
    gives way to the next qualified one."""
    ev = evidence(current, candidates, files, n_samples=n_samples, seed=seed, level=level)
    qualified = [k for k in ev.ranked() if ev.low[k] > 0]
    for k in qualified:
        head = make(ev.labels[k])
        acc = _passes(head, check)
        if check is not None and acc < check.floor:
            notes.append(f"{ev.labels[k]} qualified but scores {acc:.0%} of real sentences "
                         "above their shuffles")  # fmt: skip
            continue
        notes.append(
            f"{name}: {ev.labels[k]} gained {ev.gain[k]:+.3f} in rho + tau, above zero at "
            f"{level:.0%} for all {len(ev.labels)} tried (bound {ev.low[k]:+.3f})"
        )
        return ev, head
    if len(ev.labels):
        best = ev.ranked()[0]
        notes.append(
            f"{name}: none of {len(ev.labels)} gained above zero at {level:.0%} (largest: "
            f"{ev.labels[best]}, {ev.gain[best]:+.3f}, bound {ev.low[best]:+.3f})"
        )
    return ev, None


def calibrate_from(
    files: Sequence[HeadFile],
    start: Head,
    named: Sequence[Head],
    readings: Sequence[str],
    *,
    started_from: str = "",
    folds: int = FOLDS,
    max_inputs: int = 2,
    check: ScrambleCheck | None = None,
    n_samples: int = 1000,
    seed: int = 12345,
    level: float = LEVEL,
) -> Outcome:
    """The head to write for `files` (the user's ratings), starting from `start` (module
    docstring)."""
    if not files:
        raise InputError("give at least one judgement file")
    if not start.reads(files[0].columns):
        raise InputError(f"the starting head {start.label} reads columns the ratings lack")
    n_inputs = sum(len(set(f.groups)) for f in files)
    if n_inputs < MIN_INPUTS:
        why = (
            f"{n_inputs} inputs, fewer than {MIN_INPUTS}: too few to judge a switch on, nothing "
            "tried (rate more inputs, or leave --group-column out where outputs are not grouped)"
        )
        return Outcome(started_from, start, start, [], [why])
    opts = {"n_samples": n_samples, "seed": seed, "level": level}
    notes: list[str] = []
    rounds = []
    scored = {f.name: start.predict(f.columns) for f in files}
    spread = float(np.std(np.concatenate(list(scored.values()))))
    same = {start.label}
    pool = {h.label: h for h in named if h.label not in same and h.reads(files[0].columns)}
    values = {k: {f.name: h.predict(f.columns) for f in files} for k, h in pool.items()}
    ev, head = _round(
        "named readings",
        scored,
        values,
        files,
        lambda k: on_their_scale(pool[k], files, spread),
        check,
        notes,
        **opts,
    )
    rounds.append(("named readings, each whole, no fit", ev))
    head = head or start
    current = scored if head is start else values[head.label]

    # Fitted: single columns (first round only) and columns added to the head in hand.
    base_files = with_base(files, head)

    def addable(reading: str, taken: set[str]) -> list[str]:
        # A learned head's hundreds of state columns are read by it, never one by one.
        return [
            c
            for c in files[0].columns[reading]
            if c not in taken
            and not c.startswith(GROUPED)
            and c not in TEXT_READINGS  # what is said again: a fixed weight, never fitted
            and np.ptp(np.concatenate([f.columns[reading][c] for f in files]))
        ]

    state: Plan | None = None
    while max_inputs > (0 if state is None else len(state.extra)):
        if state is None:
            plans = [
                Plan(head.reading, head, (c,)) for c in addable(head.reading, set(head.inputs))
            ]
            plans += [Plan(r, None, (c,)) for r in readings for c in addable(r, set())]
        else:
            taken = {*state.extra, *(state.base.inputs if state.base else ())}
            plans = [
                Plan(state.reading, state.base, (*state.extra, c))
                for c in addable(state.reading, taken)
            ]
        by_label = {p.label: p for p in plans}
        preds = cross_validated(plans, base_files, folds, seed)
        if not preds:
            notes.append("fitted: not tried, a file has fewer than two inputs to fold")
            break
        ev, new = _round(
            f"fitted in {folds} folds of the inputs",
            current,
            preds,
            files,
            lambda k, plans=by_label: plans[k].fit(base_files),
            check,
            notes,
            **opts,
        )
        rounds.append((f"fitted, {folds} folds of the inputs (round {len(rounds)})", ev))
        if new is None:
            break
        state, current, head = by_label[new.label], preds[new.label], new
    if max_inputs > 0:
        features = tuple(addable(head.reading, set(head.inputs)))
        for what, columns, clip in (
            (FEATURES, features, True),
            (STATES, state_columns(files[0], head.reading), False),
        ):
            if columns:
                ridge = ResidualRidge(head.reading, head, columns, what, clip)
                head, current = _ridge_round(
                    files, ridge, current, folds, check, notes, rounds, opts
                )
    return Outcome(started_from, start, head, rounds, notes)


def _ridge_round(files, ridge: ResidualRidge, current, folds, check, notes, rounds, opts):
    """(the head, its values on the user's outputs) after one of the last rounds
    (`training.heads.estimators.residual_ridge`): the head in hand plus a ridge on many columns
    fitted to what it leaves, judged in folds as the fitted round is."""
    hand = with_base(files, ridge.base)
    preds = ridge.cross_validated(hand, folds, opts["seed"])
    if preds is None:
        notes.append(f"{ridge.what}: not tried, a file has fewer than two inputs to fold")
        return ridge.base, current
    name = f"{len(ridge.columns)} of {ridge.what} on what the head in hand leaves"
    ev, new = _round(
        f"{name}, in {folds} folds of the inputs",
        current,
        {ridge.label: preds},
        files,
        lambda k: ridge.fit(hand, folds, opts["seed"]),
        check,
        notes,
        **opts,
    )
    rounds.append((f"{name}, a ridge, {folds} folds of the inputs", ev))
    return (new, preds) if new is not None else (ridge.base, current)
