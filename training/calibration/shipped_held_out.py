"""A bundle's heads as they would be had a judgement file not been among those they were fitted
on: the comparison a head calibrated on that file's ratings deserves.

Each shipped head was chosen (which reading, which inputs) and fitted on every development file.
Choosing it again without the file is the whole of `python -m training.heads` once a file; here
it is fitted again without the file as it was fitted (`training.heads.refit`, whatever its kind).
A head whose files did not include the file is kept as shipped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from scorer.heads import GENERAL, Head, card_heads
from training.heads import HeadFile, refit

__all__ = ["held_out_heads", "starting_head"]


def held_out_heads(card: Mapping, files: Sequence[HeadFile], left_out: str) -> dict[str, Head]:
    """{head name: the head refitted without the file `left_out`} for every linear head of the
    card, its own inputs under its own reading, on its files (those of `files`) but that one."""
    by_name = {f.name: f for f in files}
    out = {}
    for name, sec in card_heads(card).items():
        head = Head.from_section(sec, label=f"head {name}")
        fitted_on = list(head.about.get("files") or ())
        if left_out not in fitted_on:
            out[name] = head
            continue
        train = [by_name[f] for f in fitted_on if f in by_name and f != left_out]
        if not train or not head.read():
            continue
        out[name] = refit(head, train, label=f"head {name}, without {left_out}")
    return out


def starting_head(heads: Mapping[str, Head], genre: str) -> tuple[str, Head] | None:
    """(its name, the head) a calibration of `genre` starts from: the genre's head, else the
    general head, else None."""
    for name in (genre, GENERAL):
        if name in heads:
            return name, heads[name]
    return None
