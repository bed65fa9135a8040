"""Calibration that starts from the shipped head: `fluency calibrate`'s choice.

A user's head starts as the bundle's head for the genre named (its general head for a genre it
lacks, or the head `--from` names) and stays that head unless the user's ratings show better
(`training.switch`: a paired bootstrap over the user's inputs, bounds that hold for every
candidate tried at once). Two rounds of candidates, each judged against the head in hand:

1. Named readings, each judged whole as one input, with no fit: every other head of the bundle,
   minus the length (raters who reward brevity), each summed log-probability (the n-gram LM's,
   spaCy's parse, SmolLM2's on the neural tier) and the GLEU score under each reading. Each
   keeps its own direction (larger is more fluent), so nothing about it is learnt from the
   ratings it is judged on: a switch on them is not an artefact of fitting.
2. Fitted: every single feature column (its sign taken on the training folds) and every column
   added to the head in hand (a non-negative ridge over the head's score and the column,
   `training.heads_select.fit_head`), judged on the user's data in folds of whole inputs, each
   output scored by a fit that did not see it. An addition that wins is kept and the round
   repeats, up to `max_inputs` columns added.

A named reading that wins is written on the user's scale: an affine map (a slope kept
positive, `sklearn.linear_model.LinearRegression(positive=True)`) from the reading to the
ratings, z-normalised within each dataset; a rank-only judgement does not depend on it. A head
kept is written as the bundle has it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from features.errors import InputError
from scorer.calibration import GENERAL, GLEU_INPUT, card_heads
from scorer.calibration import READINGS as READING_COLUMNS
from training.choose import FOLDS, fold_rows, subset
from training.heads_select import HeadFile, ScrambleCheck, fit_head, spearman, unit_weights
from training.switch import LEVEL, Evidence, evidence

__all__ = [
    "LOGPROB_SUMS",
    "MIN_INPUTS",
    "Linear",
    "Outcome",
    "calibrate_from",
    "named_readings",
    "start_head",
]

MINUS_THE_LENGTH = "minus the length"
# The summed log-probabilities a bundle may read: the n-gram LM's (derived), spaCy's parse's
# and SmolLM2's (the neural tier).
LOGPROB_SUMS = ("lm.v1/logprob_sum", "spacy.v1/logprob_sum", "neural.v2/logprob_sum")
BASE = "head in hand"  # the column a fitted addition reads the head it adds to from
# Fewer inputs than this and the bootstrap has too few distinct draws to bound a gain (two
# inputs give three), and the inputs too few to stand for the ones to come: nothing is tried.
MIN_INPUTS = 10


@dataclass(frozen=True)
class Linear:
    """A head as a card holds one: under `reading`, each input clipped to [low, high], then
    weighted and summed with the intercept."""

    label: str
    kind: str  # "head", "reading", "column" or "addition"
    reading: str
    inputs: tuple[str, ...]
    coef: np.ndarray
    intercept: float
    low: np.ndarray = field(default=None)  # -inf: open
    high: np.ndarray = field(default=None)

    def __post_init__(self):
        n = len(self.inputs)
        object.__setattr__(self, "coef", np.asarray(self.coef, dtype=float))
        for side, fill in (("low", -np.inf), ("high", np.inf)):
            v = getattr(self, side)
            object.__setattr__(self, side, np.full(n, fill) if v is None else np.asarray(v, float))

    @classmethod
    def from_section(cls, label: str, section: Mapping) -> Linear | None:
        """The head a card section describes (None for a pickled head: not linear)."""
        linear = section.get("linear")
        if not linear:
            return None
        clip = section.get("clip") or {}
        n = len(section["inputs"])

        def side(values, fill):
            values = values or [None] * n
            return [fill if v is None else float(v) for v in values]

        return cls(
            label,
            "head",
            str(section.get("aggregate") or "whole"),
            tuple(section["inputs"]),
            linear["coef"],
            float(linear["intercept"]),
            side(clip.get("low"), -np.inf),
            side(clip.get("high"), np.inf),
        )

    def predict(self, columns: Mapping[str, Mapping[str, np.ndarray]]) -> np.ndarray:
        X = np.column_stack([columns[self.reading][c] for c in self.inputs])
        return np.clip(X, self.low, self.high) @ self.coef + self.intercept

    def reads(self, file: HeadFile) -> bool:
        cols = file.columns.get(self.reading, {})
        return all(c in cols for c in self.inputs)

    def scaled(self, a: float, b: float) -> Linear:
        return replace(self, coef=a * self.coef, intercept=a * self.intercept + b)

    def weights(self) -> str:
        terms = [f"{w:+.4g} {c}" for c, w in zip(self.inputs, self.coef, strict=True) if w]
        return f"{' '.join(terms) or '0'} {self.intercept:+.4g}, read {self.reading}"

    def section(self, genre: str, **extra) -> dict:
        """A card section (`scorer.calibration.load_head_section` reads it): the GLEU score
        first, the readings' columns last."""
        first = [GLEU_INPUT]
        rest = [c for c in self.inputs if c != GLEU_INPUT and c not in READING_COLUMNS]
        last = [c for c in self.inputs if c in READING_COLUMNS]
        order = first + rest + last
        at = {c: k for k, c in enumerate(self.inputs)}

        def pick(values, open_):
            return [
                None if c not in at or values[at[c]] == open_ else float(values[at[c]])
                for c in order
            ]

        coef = [float(self.coef[at[c]]) if c in at else 0.0 for c in order]
        return {
            "genre": genre,
            "aggregate": self.reading,
            "inputs": order,
            "linear": {"coef": coef, "intercept": float(self.intercept)},
            "clip": {"low": pick(self.low, -np.inf), "high": pick(self.high, np.inf)},
            **extra,
        }


def start_head(card: Mapping, genre: str, start: str | None = None) -> tuple[str, Linear]:
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
        return why, Linear("the GLEU score (whole)", "reading", "whole", (GLEU_INPUT,), [1.0], 0.0)
    head = Linear.from_section(f"head {pick}", heads[pick])
    if head is None:
        raise InputError(f"{name}'s head {pick!r} is not linear: it cannot start a calibration")
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
    heads: Mapping[str, Linear] | None = None,
) -> list[Linear]:
    """The named readings (module docstring) a file read as `columns` can be scored by: every
    head of the bundle (or `heads`), minus the length, each summed log-probability and the GLEU
    score under each of `readings`."""
    if heads is None:
        heads = {}
        for name, section in card_heads(card).items():
            head = Linear.from_section(f"head {name}", section)
            if head is not None:
                heads[name] = head
    out = [h for h in heads.values() if all(c in columns.get(h.reading, {}) for c in h.inputs)]
    first = readings[0]
    length = next((c for c in columns[first] if c.endswith("/n_tokens")), None)
    if length:
        read = "whole" if "whole" in readings else first
        out.append(Linear(MINUS_THE_LENGTH, "reading", read, (length,), [-1.0], 0.0))
    summed = "sum" if "sum" in readings else first
    for c in LOGPROB_SUMS:
        if c in columns[summed]:
            out.append(Linear(f"{c} ({summed})", "reading", summed, (c,), [1.0], 0.0))
    for r in readings:
        out.append(Linear(f"the GLEU score ({r})", "reading", r, (GLEU_INPUT,), [1.0], 0.0))
    return out


# -- fitting on the user's ratings ---------------------------------------------------------------


def _pooled(files: Sequence[HeadFile], values: Mapping[str, np.ndarray]):
    x = np.concatenate([values[f.name] for f in files])
    y = np.concatenate([f.target for f in files])
    return x, y, unit_weights(files)


def on_their_scale(head: Linear, files: Sequence[HeadFile], spread: float) -> Linear:
    """`head` mapped to the user's ratings (z-normalised within each dataset) by a positive
    slope and an intercept; where no positive slope fits, scaled to `spread` (the starting
    head's standard deviation over the user's outputs) around 0."""
    from sklearn.linear_model import LinearRegression

    x, y, w = _pooled(files, {f.name: head.predict(f.columns) for f in files})
    fit = LinearRegression(positive=True).fit(x[:, None], y, sample_weight=w)
    a = float(fit.coef_[0])
    if a <= 0:
        sd = float(np.sqrt(np.average((x - np.average(x, weights=w)) ** 2, weights=w)))
        a = spread / sd if sd > 0 else 1.0
        return head.scaled(a, -a * float(np.average(x, weights=w)))
    return head.scaled(a, float(fit.intercept_))


def _with_base(files: Sequence[HeadFile], base: Linear) -> list[HeadFile]:
    """Copies of `files` whose columns under `base`'s reading hold its values as `BASE`."""
    out = []
    for f in files:
        cols = {r: dict(c) for r, c in f.columns.items()}
        cols[base.reading][BASE] = base.predict(f.columns)
        out.append(HeadFile(f.name, f.genre, f.human, f.groups, cols, f.baselines, f.systems))
    return out


@dataclass(frozen=True)
class Plan:
    """A fitted candidate: `extra` columns under `reading`, on top of `base` (or alone)."""

    reading: str
    base: Linear | None
    extra: tuple[str, ...]

    @property
    def label(self) -> str:
        if self.base is None:
            return f"{' + '.join(self.extra)} ({self.reading})"
        return f"{self.base.label} + {' + '.join(self.extra)}"

    @property
    def inputs(self) -> tuple[str, ...]:
        return self.extra if self.base is None else (BASE, *self.extra)

    def fit(self, files: Sequence[HeadFile]) -> Linear:
        """Fitted on every file: a `Linear` over the base's inputs and the added columns."""
        fitted = fit_head(files, self.reading, self.inputs)
        coef = dict(zip(self.inputs, fitted.coef, strict=True))
        ranges = {
            c: np.concatenate([f.columns[self.reading][c] for f in files]) for c in self.extra
        }
        # Each added column capped on the side where it raises the score, at the edge of the
        # range it took in the fit (as `training.heads.section` caps a shipped head's inputs).
        low = [ranges[c].min() if coef[c] < 0 else -np.inf for c in self.extra]
        high = [ranges[c].max() if coef[c] > 0 else np.inf for c in self.extra]
        w = [coef[c] for c in self.extra]
        if self.base is None:
            kind = "column" if len(self.extra) == 1 else "addition"
            return Linear(
                self.label, kind, self.reading, self.extra, w, fitted.intercept, low, high
            )
        a = coef[BASE]
        b = self.base
        return Linear(
            self.label,
            "addition",
            self.reading,
            (*b.inputs, *self.extra),
            [*(a * b.coef), *w],
            a * b.intercept + fitted.intercept,
            [*b.low, *low],
            [*b.high, *high],
        )


def _fold_of(files: Sequence[HeadFile], k: int, seed: int) -> dict[str, np.ndarray] | None:
    """{file: each output's fold}: folds of whole inputs within each file (fold i of every file
    held out together), or None where a file has fewer than two inputs."""
    out = {}
    for f in files:
        n_inputs = len(set(f.groups))
        if n_inputs < 2:
            return None
        fold = np.empty(len(f.human), dtype=int)
        for i, rows in enumerate(fold_rows(f.groups, min(k, n_inputs), seed=seed)):
            fold[rows] = i
        out[f.name] = fold
    return out


def cross_validated(
    plans: Sequence[Plan], files: Sequence[HeadFile], folds: int, seed: int
) -> dict[str, dict[str, np.ndarray]]:
    """{plan label: {file: each output scored by the plan fitted without its fold}}; a single
    column alone needs no fit beyond its sign, taken on the training folds."""
    fold = _fold_of(files, folds, seed)
    if fold is None:
        return {}
    out = {p.label: {f.name: np.zeros(len(f.human)) for f in files} for p in plans}
    for k in range(max(v.max() for v in fold.values()) + 1):
        train = [subset(f, np.flatnonzero(fold[f.name] != k)) for f in files]
        test = {f.name: np.flatnonzero(fold[f.name] == k) for f in files}
        train = [t for t in train if len(t.human) > 1]
        for p in plans:
            if p.base is None and len(p.extra) == 1:
                c = p.extra[0]
                rhos = [spearman(t.columns[p.reading][c], t.human) for t in train]
                sign = -1.0 if np.nanmean(np.nan_to_num(rhos)) < 0 else 1.0
                for f in files:
                    out[p.label][f.name][test[f.name]] = (
                        sign * f.columns[p.reading][c][test[f.name]]
                    )
                continue
            fitted = fit_head(train, p.reading, p.inputs)
            for f in files:
                rows = test[f.name]
                X = np.column_stack([f.columns[p.reading][c][rows] for c in p.inputs])
                out[p.label][f.name][rows] = X @ fitted.coef + fitted.intercept
    return out


# -- the choice ----------------------------------------------------------------------------------


@dataclass
class Outcome:
    """What `calibrate_from` found: the head it started from, the head to write, and per round
    the evidence and what the rule made of it."""

    started_from: str
    start: Linear
    head: Linear
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


def _passes(head: Linear, check: ScrambleCheck | None) -> float:
    if check is None:
        return math.nan
    a, b = head.predict(check.real), head.predict(check.shuffled)
    return float(np.mean(a > b) + 0.5 * np.mean(a == b))


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
) -> tuple[Evidence, Linear | None]:
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
    start: Linear,
    named: Sequence[Linear],
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
    if not start.reads(files[0]):
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
    pool = {h.label: h for h in named if h.label not in same and h.reads(files[0])}
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
    base_files = _with_base(files, head)

    def addable(reading: str, taken: set[str]) -> list[str]:
        return [
            c
            for c in files[0].columns[reading]
            if c not in taken and np.ptp(np.concatenate([f.columns[reading][c] for f in files]))
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
    return Outcome(started_from, start, head, rounds, notes)
