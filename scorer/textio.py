"""Reading text files a line a segment, and printing result rows: shared by every CLI command."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TextIO

from features.errors import InputError

__all__ = ["cell", "iter_lines", "print_rows", "read_lines"]


def read_lines(path: str) -> list[str]:
    """One segment per line; '-' is standard input. Empty lines are kept (they are segments)."""
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise InputError(f"{path} is not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    return text.splitlines()


def iter_lines(path: str) -> Iterator[str]:
    """`read_lines`, streamed: for inputs too large to hold."""
    try:
        handle = sys.stdin if path == "-" else open(path, encoding="utf-8")  # noqa: SIM115
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from exc
    try:
        for line in handle:
            yield line.rstrip("\n").rstrip("\r")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path} is not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    finally:
        if handle is not sys.stdin:
            handle.close()


def cell(value) -> str:
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def print_rows(rows: Sequence[dict], fmt: str, out: TextIO) -> None:
    """JSON Lines (`fmt="json"`) or a tab-separated table with a header line."""
    if fmt == "json":
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
        return
    if not rows:
        return
    keys = list(rows[0])
    out.write("\t".join(keys) + "\n")
    for row in rows:
        out.write("\t".join(cell(row[k]) for k in keys) + "\n")
