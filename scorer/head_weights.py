"""A learned head's weights beside the card, not in it.

A head that reads SmolLM2's states carries a weight (and a clip) for each of its hundreds of
columns: four such heads made `models/neural/card.json` 270 KB, all of it moved by every `GET
/v1/model`. Those lists live in `head_weights.json` beside the card, keyed by genre, and the
card names the file and its SHA-256 (`head_weights_file`), as it names its heads' report
(`scorer.heads_report`). `read_card` (`scorer.bundle`) puts them back, so every reader of a
loaded card sees whole heads; `lean_heads` takes them out again for writing and serving.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from features.errors import ModelLoadError
from scorer.heads import Head

__all__ = [
    "MAX_INLINE",
    "POINTER",
    "WEIGHTS_FILE",
    "is_lean",
    "join_weights",
    "lean_heads",
    "write_weights",
]

WEIGHTS_FILE = "head_weights.json"
POINTER = "head_weights_file"  # the card's {"file", "sha256"} of WEIGHTS_FILE
MAX_INLINE = 64  # a head of more inputs keeps them beside the card
_MARK = "weights_file"  # in a lean head: its inputs, weights and clip are in that file


def lean_heads(card: Mapping[str, Any]) -> tuple[dict, dict]:
    """(the card with each head of more than `MAX_INLINE` inputs lean, {genre: its inputs,
    weights and clip}); a card without such a head comes back as it was, with no weights."""
    out = copy.deepcopy(dict(card))
    moved: dict[str, dict] = {}
    heads = out.get("heads") or {}
    for genre, section in heads.items():
        if Head.size(section) > MAX_INLINE:
            heads[genre], moved[genre] = Head.lean(section, _MARK, WEIGHTS_FILE)
    return out, moved


def write_weights(folder: Path, card: Mapping[str, Any]) -> dict:
    """`card` written lean (`lean_heads`) beside `head_weights.json`, which a card with no large
    head does without (an old one is removed); returns the card as written."""
    lean, moved = lean_heads(card)
    path = Path(folder) / WEIGHTS_FILE
    if moved:
        text = json.dumps(moved, sort_keys=True, separators=(",", ":")) + "\n"
        path.write_text(text, encoding="utf-8")
        lean[POINTER] = {"file": WEIGHTS_FILE, "sha256": hashlib.sha256(text.encode()).hexdigest()}
    else:
        lean.pop(POINTER, None)
        path.unlink(missing_ok=True)
    return lean


def join_weights(folder: Path, card: dict) -> dict:
    """`card` with its lean heads whole again from the file it names; a missing, corrupt or
    altered file is a `ModelLoadError` naming it."""
    pointer = card.get(POINTER)
    if not pointer:
        return card
    path = Path(folder) / str(pointer.get("file", WEIGHTS_FILE))
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ModelLoadError(
            f"{path}, which holds the heads' weights, cannot be read: {exc}"
        ) from exc
    if hashlib.sha256(raw).hexdigest() != pointer.get("sha256"):
        raise ModelLoadError(
            f"{path} is not the file its card names (SHA-256 differs): reinstall it"
        )
    try:
        moved = json.loads(raw)
    except ValueError as exc:
        raise ModelLoadError(f"{path} is not readable JSON: {exc}") from exc
    heads = card.get("heads") or {}
    for genre, section in heads.items():
        if not is_lean(section):
            continue
        if genre not in moved:
            raise ModelLoadError(f"{path} holds no weights for the {genre} head its card names")
        heads[genre] = Head.joined(section, moved[genre], _MARK)
    return card


def is_lean(section: Mapping[str, Any]) -> bool:
    """Whether a card's head keeps its weights in `WEIGHTS_FILE`."""
    return _MARK in section
