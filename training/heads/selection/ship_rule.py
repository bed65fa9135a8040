"""The rule that picks a head, over held-out figures alone (`training.heads.selection.evidence`
gathers them; nothing here fits or predicts), as scikit-learn's `refit=` takes a plain function of
`cv_results_`.

- A single input above the fitted head on both means (and scoring real sentences above their
  shuffles) becomes the head.
- A fitted head ships its best single input instead when it does not beat it on both means,
  or, where it is gated per system (the general head, what systems are compared with), when its
  system-level accuracy less the input's has a 95% interval below zero.
- The head ships only where it passes `ships`, the one rule every chooser applies (linear
  heads here, the learned heads of `training.heads.learned.ridge` too): held out, its criterion
  (mean rho + mean per-input tau) above the current head's where there is one; above minus the
  length and its best single input on both means (or it is that input); per system not worse
  than the current head (a paired 95% interval below zero); real sentences scored above their
  shuffles (and, for a learned head, above the same sentence run or looped to any length the
  service takes); what it says again scored at or below the text said once (`training.heads.
  said_again`: a sentence repeated, the text twice and four times, a sentence said 2 to 8 times),
  with a fixed weight on the share said again where it needs one. Per-file wins are evidence
  beside the means, written in every table, never a veto: a head better on both means that
  wins on fewer files is not overfitted for it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from training.heads.estimators.kinds import Kind
from training.heads.estimators.select import beats
from training.heads.metrics.figures import Judgement

__all__ = ["Candidate", "Ruling", "Verdict", "best_single", "pick", "ships", "wins"]


@dataclass(frozen=True)
class Candidate:
    """One head's held-out figures: per text (`judgement`: mean rho, mean per-input tau, and
    both per file), whether it scores real sentences above their shuffles, and the 95% interval
    of its system-level accuracy less the best single input's (None: not gated per system).
    `kind` is what fits it (`training.heads.estimators.kinds`), for the evidence to hold it out
    again; the rule never reads it. `name` labels a candidate known by name rather than by its
    inputs (a head in hand, a fitted round of `fluency calibrate`)."""

    reading: str
    inputs: tuple[str, ...]
    judgement: Judgement
    robust: bool = True
    system_gain: tuple[float, float] | None = None
    kind: Kind | None = field(default=None, compare=False, repr=False)
    name: str = ""

    @classmethod
    def named(cls, name: str, judgement: Judgement) -> Candidate:
        """A candidate known by `name`, its reading and inputs its own (a head in hand)."""
        return cls("", (), judgement, name=name)

    @property
    def label(self) -> str:
        return self.name or f"{', '.join(self.inputs)} ({self.reading})"


@dataclass(frozen=True)
class Verdict:
    """What `pick` decided: the head (a key of the singles, "fitted", or None: no head), whether
    it ships, the card's sentence saying so, and why it is not the fitted head (`note`)."""

    head: str | None
    ship: bool
    decision: str
    note: str = ""
    is_best: bool = False


FITTED = "fitted"


def wins(a: Judgement, b: Judgement) -> int:
    """On how many files `a`'s held-out criterion (rho + per-input tau) is above `b`'s."""

    def crit(rt):
        r, t = rt
        return (r if math.isfinite(r) else -9.0) + (t if math.isfinite(t) else 0.0)

    return sum(crit(a.per_file[k]) > crit(b.per_file[k]) for k in a.per_file if k in b.per_file)


def best_single(singles: Mapping[str, Candidate]) -> str:
    """The single input of the highest held-out criterion (the first, on a tie)."""
    return max(singles, key=lambda k: np.nan_to_num(singles[k].judgement.criterion, nan=-9))


@dataclass(frozen=True)
class Ruling:
    """What `ships` found: whether the head ships, the checks it failed (short names, in the
    rule's order), and the sentence saying why, with the figures."""

    ok: bool
    failed: tuple[str, ...]
    why: str


def ships(
    head: Judgement,
    *,
    minus: Judgement,
    best_input: tuple[str, Judgement] | None = None,
    current: Judgement | None = None,
    system_gap: tuple[float, float] | None = None,
    scrambles: float | None = None,
    floor: float | None = None,
    evidence: Mapping[str, Judgement] | None = None,
    degenerate: Mapping[str, float] | None = None,
    said_again: Mapping[str, float] | None = None,
) -> Ruling:
    """The ship rule (module doc) on held-out figures: `head` against minus the length, its
    best single input ((label, judgement); None: the head is that input), the `current` head
    (None: nothing ships now), `system_gap` (95% interval of its system pair accuracy less the
    current head's; None: not gated per system) and `scrambles` (its share of real sentences
    above their shuffles, against `floor`) and `degenerate` ({kind: its share of real sentences
    above their runs or loops}, against `floor` too) and `said_again` ({kind: its share of
    real paragraphs whose said-again version it scores at or below them, its fixed weight on
    what is said again applied; `training.heads.data.said_again`}, against `floor` too).
    `evidence`: {name: judgement} whose per-file wins the sentence gives, beside the means."""
    failed, lost = [], []
    if current is not None and not (
        np.nan_to_num(head.criterion, nan=-9) > np.nan_to_num(current.criterion, nan=-9)
    ):
        failed.append("current head")
        lost.append(
            f"its criterion {head.criterion:.3f} (mean rho + tau) is not above the current "
            f"head's {current.criterion:.3f}"
        )
    if not beats(head, minus):
        failed.append("minus length")
        lost.append("it does not beat minus the length on both means")
    if best_input is not None and not beats(head, best_input[1]):
        failed.append("best input")
        lost.append(f"it does not beat its best single input, {best_input[0]}, on both means")
    if system_gap is not None and system_gap[1] < 0:
        failed.append("systems")
        lost.append(
            "it orders systems worse than the current head, pair accuracy "
            f"[{system_gap[0]:+.3f}, {system_gap[1]:+.3f}] (95%)"
        )
    if scrambles is not None and floor is not None and scrambles < floor:
        failed.append("scrambles")
        lost.append(f"it scores real sentences above their shuffles for only {scrambles:.1%}")
    looped = {k: v for k, v in (degenerate or {}).items() if floor is not None and v < floor}
    if looped:
        failed.append("runs and loops")
        lost.append(
            "it scores real sentences above their "
            + ", ".join(f"{k}s for only {v:.1%}" for k, v in looped.items())
        )
    again = {k: v for k, v in (said_again or {}).items() if floor is not None and v < floor}
    if again:
        failed.append("said again")
        lost.append(
            "it scores said-again versions at or below the text for only "
            + ", ".join(f"{v:.1%} ({k})" for k, v in again.items())
        )
    figures = f"rho {head.rho:.3f}, tau {head.tau:.3f}"
    if current is not None:
        figures += f" against the current head's {current.rho:.3f}, {current.tau:.3f}"
    if system_gap is not None:
        figures += f"; pair accuracy against it [{system_gap[0]:+.3f}, {system_gap[1]:+.3f}]"
    if scrambles is not None:
        figures += f"; {scrambles:.1%} of shuffles below their sentences"
    if degenerate:
        figures += "; " + ", ".join(f"{v:.1%} of {k}s" for k, v in degenerate.items())
    if said_again:
        figures += f"; said again at or below the text for at least {min(said_again.values()):.1%}"
    n = len(head.per_file)
    won = "; ".join(f"{wins(head, j)} of {n} vs {k}" for k, j in (evidence or {}).items())
    tail = f" (held out: {figures}" + (f"; per-file wins, as evidence: {won}" if won else "") + ")"
    if failed:
        return Ruling(False, tuple(failed), "; ".join(lost) + tail)
    passed = "above the current head's criterion, " if current is not None else ""
    passed += "above minus the length" + (f" and {best_input[0]}" if best_input is not None else "")
    passed += " on both means"
    if system_gap is not None:
        passed += ", not worse per system"
    if scrambles is not None and floor is not None:
        passed += f", real sentences above their shuffles (at least {floor:.0%})"
    if degenerate and floor is not None:
        passed += f", and above their runs and loops (at least {floor:.0%})"
    if said_again and floor is not None:
        passed += f", said-again versions at or below the text (at least {floor:.0%})"
    return Ruling(True, (), passed + tail)


def pick(
    fitted: Candidate | None,
    singles: Mapping[str, Candidate],
    minus: Judgement,
    *,
    floor: float | None = None,
) -> Verdict:
    """The head to ship (or none) among the `fitted` head forward selection ended on and the
    `singles` (keyed "input (reading)"), beside `minus` the length (module doc); every
    judgement holds the same held-out files. `floor` is the scramble check's share, for the
    sentence saying why no input could be a head."""
    best = best_single(singles)
    best_j = singles[best].judgement
    if fitted is None:  # no input passes the scramble check
        return Verdict(
            None,
            False,
            f"not shipped: no input scores real sentences above their shuffles for {floor:.0%} "
            "of them",
        )
    key, head, note = FITTED, fitted, ""
    beaten_by = [k for k, c in singles.items() if c.robust and beats(c.judgement, fitted.judgement)]
    if beaten_by:
        key = max(beaten_by, key=lambda k: singles[k].judgement.criterion)
        head = singles[key]
        note = f"the fitted head lost to {key} on both means, which became the head"
    is_best = head.label == best  # the fitted head may be that input itself
    if not is_best and singles[best].robust:
        why = _overruled(head, best, best_j)
        if why:
            key, head, note, is_best = best, singles[best], why, True
    ruling = ships(head.judgement, minus=minus, best_input=None if is_best else (best, best_j))
    if ruling.ok:
        if not note and not is_best and 2 * wins(head.judgement, best_j) < len(best_j.per_file):
            note = (
                f"beat {best} on both means, on {wins(head.judgement, best_j)} of "
                f"{len(best_j.per_file)} held-out files (per-file wins: evidence, not a veto)"
            )
        return Verdict(key, True, "shipped" + (f": {note}" if note else ""), note, is_best)
    names = {"minus length": "minus length", "best input": best}
    lost = [names[k] for k in ruling.failed]
    ok_best = "best input" not in ruling.failed
    decision = f"not shipped: held out, it does not beat {' nor '.join(lost)} on both means"
    if not singles[best].robust and not ok_best:
        decision += " (that input scores shuffled sentences as high as real ones)"
    return Verdict(key, False, decision, note, is_best)


def _overruled(head: Candidate, best: str, best_j: Judgement) -> str:
    """Why `head`, matched by its best single input `best` (which passes the scramble check),
    is overfitted or (gated per system) orders systems worse: "" where it is neither."""
    fitted = f"the fitted head ({', '.join(head.inputs)}, `{head.reading}`)"
    if not beats(head.judgement, best_j):
        return f"{fitted} did not beat {best} on both means"
    if head.system_gain is not None and head.system_gain[1] < 0:
        low, high = head.system_gain
        return (
            f"{fitted} orders systems worse than {best} (system-level accuracy difference "
            f"[{low:+.3f}, {high:+.3f}])"
        )
    return ""
