"""A bundle's heads as they would be had a judgement file not been among those they were fitted
on: the comparison a head calibrated on that file's ratings deserves.

Each shipped head was chosen (which reading, which inputs) and fitted on every development file.
Choosing it again without the file is the whole of `python -m training.heads` once a file; here
its own inputs (those it weighs) under its own reading are refitted without the file
(`training.heads.estimators.select.fit_head`: the same non-negative ridge, datasets and genres
weighing as they did), and capped as `training.heads.tier.section` caps them. The choice of inputs
has still seen the file; the weights have not. A head whose files did not include the file is kept
as shipped. A head learned on SmolLM2's states (`training.heads.learned.ridge`) is refitted as it
was fitted: its ridge, at its alpha, on the states of its other files; one that adds a ridge on the
states to the head it started from (`training.heads.learned.residual`), that head plus the ridge at
its alpha, fitted to what it leaves of the other files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from scorer.calibration import GENERAL, card_heads
from scorer.contributions import group_of
from training.heads.data.judged import HeadFile
from training.heads.estimators.linear import Linear
from training.heads.estimators.select import fit_head
from training.heads.tier import section

__all__ = ["held_out_heads", "starting_head"]


def held_out_heads(card: Mapping, files: Sequence[HeadFile], left_out: str) -> dict[str, Linear]:
    """{head name: the head refitted without the file `left_out`} for every linear head of the
    card, its own inputs under its own reading, on its files (those of `files`) but that one."""
    by_name = {f.name: f for f in files}
    out = {}
    for name, sec in card_heads(card).items():
        head = Linear.from_section(f"head {name}", sec)
        if head is None:
            continue
        fitted_on = list(sec.get("files") or ())
        if left_out not in fitted_on:
            out[name] = head
            continue
        train = [by_name[f] for f in fitted_on if f in by_name and f != left_out]
        own = [c for c, w in zip(head.inputs, head.coef, strict=True) if w]
        if not train or not own:
            continue
        if sec.get("states"):
            out[name] = _learned(head, sec["states"], train, f"{head.label}, without {left_out}")
            continue
        fitted = fit_head(train, head.reading, own)
        sec = section(fitted, train, {}, genre=name, held="", command="")
        out[name] = Linear.from_section(f"head {name}, without {left_out}", sec)
    return out


def starting_head(heads: Mapping[str, Linear], genre: str) -> tuple[str, Linear] | None:
    """(its name, the head) a calibration of `genre` starts from: the genre's head, else the
    general head, else None."""
    for name in (genre, GENERAL):
        if name in heads:
            return name, heads[name]
    return None


def _learned(head: Linear, states: Mapping, files: Sequence[HeadFile], label: str) -> Linear:
    """A learned head (`states`: its layer, pooling, variant and alpha) refitted on `files`:
    the ridge `training.heads.learned.ridge.fit_all` fits, on the state columns it reads (and,
    averaged with it, SmolLM2's summed log-probability)."""
    from training.heads.learned.report import LOGPROB
    from training.heads.learned.residual import RESIDUAL, current_from, fit_residual
    from training.heads.learned.ridge import fit_all
    from training.heads.learned.rows import StateFile

    if states.get("variant") == RESIDUAL:
        refitted = fit_residual(files, current_from({"states": states}), float(states["alpha"]))
        return Linear(label, "head", refitted.reading, refitted.inputs, refitted.coef,
                      refitted.intercept, refitted.low, refitted.high)  # fmt: skip
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
        return Linear(label, "head", head.reading, (*inputs, LOGPROB), coef, ridge.intercept)
    return Linear(label, "head", head.reading, inputs, ridge.coef, ridge.intercept)
