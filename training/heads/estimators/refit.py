"""A shipped head fitted again on other files, whatever its kind (`refit`): what `fluency
calibrate` compares a head calibrated on a file's ratings with, had the file not been among
those the shipped head was fitted on.

The head's own inputs (those it weighs) under its own reading are fitted again
(`training.heads.estimators.select.fit_head`: the same non-negative ridge, datasets and genres
weighing as they did) and capped as a shipped head is (`Fitted.head`). The choice of inputs has
still seen the files left out; the weights have not. A head learned on SmolLM2's states
(`training.heads.learned.ridge`) is fitted as it was: its ridge, at its alpha, on the states of
`files`; one that adds a ridge on the states to the head it started from
(`training.heads.learned.residual`), that head plus the ridge at its alpha, fitted to what it
leaves.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from scorer.contributions import group_of
from scorer.heads import Head
from training.heads.data.judged import HeadFile
from training.heads.estimators.select import fit_head
from training.heads.learned.report import LOGPROB
from training.heads.learned.residual import RESIDUAL, current_from, fit_residual
from training.heads.learned.ridge import fit_all
from training.heads.learned.rows import StateFile

__all__ = ["refit"]


def refit(head: Head, files: Sequence[HeadFile], *, label: str = "") -> Head:
    """`head` fitted again on `files` (module docstring), named `label`."""
    if head.states:
        return _learned(head, files, label)
    return fit_head(files, head.reading, head.read()).head(files, label=label)


def _learned(head: Head, files: Sequence[HeadFile], label: str) -> Head:
    """A learned head refitted on `files`: the ridge `training.heads.learned.ridge.fit_all`
    fits, on the state columns it reads (and, averaged with it, SmolLM2's summed
    log-probability)."""
    states = head.states
    if states.get("variant") == RESIDUAL:
        refitted = fit_residual(files, current_from(head), float(states["alpha"]))
        return replace(refitted, label=label, kind="head")
    variant = states.get("variant", "states")
    if variant not in ("states", "states + logprob"):
        raise ValueError(f"{head.label}: a {variant!r} head cannot be refitted here")
    inputs = tuple(c for c in head.inputs if group_of(c) is not None)
    averaged = variant == "states + logprob"  # with SmolLM2's summed log-probability, in z
    stand_ins = []
    for f in files:
        cols = f.columns[head.reading]
        X = np.column_stack([cols[c] for c in inputs])
        n = len(f.human)
        logprob = np.asarray(cols[LOGPROB], dtype=float) if averaged else np.zeros(n)
        stand_ins.append(StateFile(f.name, f.genre, f.human, X[:, None, None, :], logprob,
                                   np.arange(n)))  # fmt: skip
    alpha = float(states["alpha"])
    layer, pooling = states["layer"], states["pooling"]
    fitted = fit_all(stand_ins, (0, 0), [alpha], [layer], [pooling], variants=(variant,))
    ridge = fitted[variant, alpha]
    if averaged:
        coef = np.append(ridge.coef, ridge.logprob_coef)
        return Head((*inputs, LOGPROB), coef, ridge.intercept, head.reading, label=label)
    return Head(inputs, ridge.coef, ridge.intercept, head.reading, label=label)
