"""The evidence behind a bundle's heads, kept beside its card rather than in it.

The card says what each head is (`heads`: inputs, weights, clip, reading) and, for every head
tried, its decision and its own held-out figures (`heads_report`: per genre the decision, reading,
inputs, the scramble check and `head`, the head's row: mean rho and tau per text and pair
accuracy per system with their 95% intervals, and its per-file figures). The full held-out
tables behind each decision (the head beside minus the length, chrF and every candidate input,
on every held-out file) are in `heads_report.json` in the bundle folder: {genre: the card's
entry with its `table`}, named by the card's `heads_report_file` ({"file", "sha256"}, as the
card names its GLEU stage). A card written by 0.12.1 or earlier holds the tables itself, in
`heads_report` and in each head's `selection`; it loads and serves as before.

Scoring never reads the file: a bundle without it, or with a corrupt one, scores as usual, and
only a reader of the evidence (`read_heads_report`: `GET /v1/model?report=1`, the cards'
README tables, `python -m training.heads --table`) is refused, with the reason.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from scorer.bundle import sha256_file
from scorer.errors import ReportUnavailableError
from scorer.heads import Head, without_tables

__all__ = [
    "REPORT_FILE",
    "REPORT_POINTER",
    "head_row",
    "lean_card",
    "lean_report",
    "read_heads_report",
    "write_heads_report",
]

REPORT_FILE = "heads_report.json"
REPORT_POINTER = "heads_report_file"  # the card's {"file", "sha256"} of REPORT_FILE


def _entries(report: Any) -> dict[str, Mapping[str, Any]]:
    """{genre: entry} of a report, entries that are not objects left out."""
    if not isinstance(report, Mapping):
        return {}
    return {str(k): v for k, v in report.items() if isinstance(v, Mapping)}


def head_row(entry: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The held-out row of the head an entry of `heads_report` judged: its `head` (a lean
    card), else the first row of its `table` when that is the head's (a card with tables)."""
    row = entry.get("head")
    if isinstance(row, Mapping):
        return row
    table = entry.get("table")
    if isinstance(table, list) and table and isinstance(table[0], Mapping):
        return table[0] if table[0].get("label") == "head" else None
    return None


def lean_report(report: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The card's `heads_report` from a full report: each entry without its `table`, with the
    head's own row as `head` where the table has one."""
    out = {}
    for genre, entry in _entries(report).items():
        lean = without_tables(entry)
        row = head_row(entry)
        if row is not None:
            lean["head"] = dict(row)
        out[genre] = lean
    return out


def lean_card(card: Mapping[str, Any]) -> dict[str, Any]:
    """`card` without the held-out tables: its `heads_report` made lean (`lean_report`) and
    each head's `selection` without its `table`. A lean card comes back as it is; one with the
    tables inside (0.12.1 or earlier) as a lean card would say it."""
    out = dict(card)
    if isinstance(card.get("heads_report"), Mapping):
        out["heads_report"] = lean_report(card["heads_report"])
    if isinstance(card.get("heads"), Mapping):
        out["heads"] = {g: Head.without_table(s) for g, s in card["heads"].items()}
    return out


def read_heads_report(folder: str | Path | None, card: Mapping[str, Any]) -> dict[str, Any]:
    """{genre: entry with its `table`} of every head the card reports: `heads_report.json`
    when the card names it (its SHA-256 checked), else the card's own `heads_report` (a card
    with the tables inside, or one with no heads: {}). `ReportUnavailableError` when the file
    the card names is missing, corrupt or not an object."""
    pointer = card.get(REPORT_POINTER)
    if pointer is None:
        return {k: dict(v) for k, v in _entries(card.get("heads_report")).items()}
    name = card.get("name", "unnamed")
    if not isinstance(pointer, Mapping) or not pointer.get("file") or not pointer.get("sha256"):
        raise ReportUnavailableError(
            f"model {name}: the card's {REPORT_POINTER} must be {{'file', 'sha256'}}, "
            f"not {pointer!r}"
        )
    if folder is None:
        raise ReportUnavailableError(
            f"model {name}: its folder is not known, so its {pointer['file']} cannot be read"
        )
    if Path(str(pointer["file"])).name != str(pointer["file"]):
        raise ReportUnavailableError(
            f"model {name}: the card names {pointer['file']!r}; the report must be a file in "
            "the bundle's own folder"
        )
    path = Path(folder) / str(pointer["file"])
    if not path.is_file():
        raise ReportUnavailableError(
            f"model {name}: {path} is missing (the card names it); the model scores as usual, "
            "its held-out tables cannot be shown: restore the file from the bundle"
        )
    digest = sha256_file(path)
    if digest != pointer["sha256"]:
        raise ReportUnavailableError(
            f"model {name}: {path} has SHA-256 {digest[:12]}..., its card says "
            f"{str(pointer['sha256'])[:12]}...: the file is corrupt or was replaced; the model "
            "scores as usual, restore the file from the bundle"
        )
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ReportUnavailableError(f"model {name}: {path} is not readable JSON: {exc}") from exc
    if not isinstance(report, dict):
        raise ReportUnavailableError(f"model {name}: {path} holds no {{genre: entry}} object")
    return report


def write_heads_report(folder: str | Path, card: dict[str, Any], report: Mapping[str, Any]) -> None:
    """Write `report` ({genre: entry with its `table`}) to `heads_report.json` in `folder` and
    make `card` lean beside it: its `heads_report` from `lean_report`, its `heads_report_file`
    naming the file and its SHA-256, each head's `selection` without its `table`. The card
    itself is the caller's to write."""
    path = Path(folder) / REPORT_FILE
    path.write_text(json.dumps(report, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    card["heads_report"] = lean_report(report)
    card[REPORT_POINTER] = {"file": REPORT_FILE, "sha256": sha256_file(path)}
    if isinstance(card.get("heads"), Mapping):
        card["heads"] = {g: Head.without_table(s) for g, s in card["heads"].items()}
