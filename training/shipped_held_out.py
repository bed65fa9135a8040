"""A bundle's heads as they would be had a judgement file not been among those they were fitted
on: the comparison a head calibrated on that file's ratings deserves.

Each shipped head was chosen (which reading, which inputs) and fitted on every development file.
Choosing it again without the file is the whole of `python -m training.heads` once a file; here
its own inputs (those it weighs) under its own reading are refitted without the file
(`training.heads_select.fit_head`: the same non-negative ridge, datasets and genres weighing as
they did), and capped as `training.heads.section` caps them. The choice of inputs has still
seen the file; the weights have not. A head whose files did not include the file is kept as
shipped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from scorer.calibration import GENERAL, card_heads
from training.heads import section
from training.heads_select import HeadFile, fit_head
from training.linear_head import Linear

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
