"""The rule that picks a head, over held-out figures alone (`training.head_evidence` gathers
them; nothing here fits or predicts), as scikit-learn's `refit=` takes a plain function of
`cv_results_`.

- A single input above the fitted head on both means (and scoring real sentences above their
  shuffles) becomes the head.
- A fitted head ships its best single input instead when it does not beat it on both means,
  when it beats it on fewer than half of the held-out files (fragile: one file set it), or,
  where it is gated per system (the general head, what systems are compared with), when its
  system-level accuracy less the input's has a 95% interval below zero.
- The head ships only where it beats minus the length and its best single input on both means
  (or is that input).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from training.heads_select import Judgement, beats

__all__ = ["Candidate", "Verdict", "best_single", "pick", "wins"]


@dataclass(frozen=True)
class Candidate:
    """One head's held-out figures: per text (`judgement`: mean rho, mean per-input tau, and
    both per file), whether it scores real sentences above their shuffles, and the 95% interval
    of its system-level accuracy less the best single input's (None: not gated per system)."""

    reading: str
    inputs: tuple[str, ...]
    judgement: Judgement
    robust: bool = True
    system_gain: tuple[float, float] | None = None

    @property
    def label(self) -> str:
        return f"{', '.join(self.inputs)} ({self.reading})"


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
        why = _overruled(head, best, best_j, len(best_j.per_file))
        if why:
            key, head, note, is_best = best, singles[best], why, True
    ok_length = beats(head.judgement, minus)
    ok_best = is_best or beats(head.judgement, best_j)
    if ok_length and ok_best:
        return Verdict(key, True, "shipped" + (f": {note}" if note else ""), note, is_best)
    lost = [w for w, ok in (("minus length", ok_length), (best, ok_best)) if not ok]
    decision = f"not shipped: held out, it does not beat {' nor '.join(lost)} on both means"
    if not singles[best].robust and not ok_best:
        decision += " (that input scores shuffled sentences as high as real ones)"
    return Verdict(key, False, decision, note, is_best)


def _overruled(head: Candidate, best: str, best_j: Judgement, n_files: int) -> str:
    """Why `head`, matched by its best single input `best` (which passes the scramble check),
    is overfitted, fragile or (gated per system) orders systems worse: "" where it is none."""
    fitted = f"the fitted head ({', '.join(head.inputs)}, `{head.reading}`)"
    if not beats(head.judgement, best_j):
        return f"{fitted} did not beat {best} on both means"
    n_wins = wins(head.judgement, best_j)
    if 2 * n_wins < n_files:
        return (
            f"{fitted} beat {best} on the means but on only {n_wins} of {n_files} held-out "
            "files (fragile)"
        )
    if head.system_gain is not None and head.system_gain[1] < 0:
        low, high = head.system_gain
        return (
            f"{fitted} orders systems worse than {best} (system-level accuracy difference "
            f"[{low:+.3f}, {high:+.3f}])"
        )
    return ""
