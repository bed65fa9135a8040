"""Human judgements of one's own system, as a table: JSONL, CSV, TSV or Parquet, one output a row.

A row needs a text and a score; it may name its input (the group of outputs that answer the
same input) and its dataset. Read under `fluency benchmark`'s protocol
(`scorer.evidence.benchmark_data.read_judged`): empty outputs and the literal "null" or "none"
are left out and counted, and so are human references (`is_reference`, where the column
exists). Columns are addressed by name; in JSONL and Parquet a dotted name reaches into nested
fields ("scores.fluency").
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from features.errors import InputError
from scorer.evidence.benchmark_data import JudgedFile, is_empty_output

__all__ = ["FORMATS", "read_table", "read_tables"]

FORMATS = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".csv": "csv",
    ".tsv": "tsv",
    ".parquet": "parquet",
    ".pq": "parquet",
}
_MISSING = object()
_TRUE = {"true", "t", "yes", "y", "1"}


def _records(path: Path) -> tuple[list[tuple[str, Mapping[str, Any]]], list[str]]:
    """(row label, row) for every row of the file, and the columns the file has."""
    kind = FORMATS.get(path.suffix.lower())
    if kind is None:
        raise InputError(
            f"{path}: unknown kind of file {path.suffix or '(no extension)'!r}; "
            f"give one of {', '.join(FORMATS)}"
        )
    if not path.is_file():
        raise InputError(f"cannot read {path}: no such file")
    if kind == "jsonl":
        return _jsonl(path)
    import pandas as pd

    try:
        if kind == "parquet":
            try:
                import pyarrow  # noqa: F401  (pandas' Parquet engine)
            except ImportError:
                raise InputError(
                    f"{path}: reading Parquet needs pyarrow (pip install pyarrow)"
                ) from None
            frame = pd.read_parquet(path)
        else:
            # Every cell as written: a text "NA" or "null" is not a missing value here.
            frame = pd.read_csv(
                path, sep="\t" if kind == "tsv" else ",", dtype=str, keep_default_na=False
            )
    except InputError:
        raise
    except Exception as exc:  # pandas and pyarrow raise many kinds for a file they cannot parse
        raise InputError(f"cannot read {path} as {kind.upper()}: {exc}") from None
    first = 2 if kind in ("csv", "tsv") else 1  # the header is line 1
    rows = frame.to_dict("records")
    where = "line" if kind in ("csv", "tsv") else "row"
    return [(f"{where} {i + first}", r) for i, r in enumerate(rows)], [str(c) for c in frame]


def _jsonl(path: Path) -> tuple[list[tuple[str, Mapping[str, Any]]], list[str]]:
    from scorer.evidence.judgements import read_jsonl

    out, columns = [], {}
    for number, obj in read_jsonl(path):
        if not isinstance(obj, dict):
            raise InputError(f"{path}:{number}: expected a JSON object, got {type(obj).__name__}")
        out.append((f"line {number}", obj))
        columns.update(dict.fromkeys(obj))
    return out, list(columns)


def _get(row: Mapping[str, Any], column: str) -> Any:
    """The value of `column` in `row`: the key itself, else a dotted path into nested fields."""
    if column in row:
        return row[column]
    value: Any = row
    for part in column.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return _MISSING
        value = value[part]
    return value


def _blank(value: Any) -> bool:
    if value is None or value is _MISSING:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return isinstance(value, str) and not value.strip()


def _truthy(value: Any) -> bool:
    if _blank(value):
        return False
    if isinstance(value, str):
        return value.strip().lower() in _TRUE
    return bool(value)


def _number(value: Any, path: Path, where: str, column: str) -> float:
    try:
        if isinstance(value, bool):
            raise TypeError
        number = float(value)
    except (TypeError, ValueError):
        shown = "nothing" if value is _MISSING else repr(value)
        raise InputError(
            f"{path}, {where}: the score column {column!r} holds {shown}, not a number"
        ) from None
    if not math.isfinite(number):
        raise InputError(
            f"{path}, {where}: the score column {column!r} holds {value!r}, not a finite number"
        )
    return number


def read_table(
    path: str | Path,
    *,
    text_column: str = "text",
    score_column: str = "score",
    group_column: str | None = None,
    dataset_column: str | None = None,
) -> list[JudgedFile]:
    """The judged outputs of one file, as `fluency benchmark` and `fluency calibrate` read them:
    one `JudgedFile` per value of `dataset_column` (named by it, in order of first sight), else
    one named after the file's stem.

    Without `group_column`, a column named "group" is the input when the file has one, else every
    output is its own input; a blank cell of the group column is an input of its own too. A
    column named "system" names each output's system (blank: ""). Empty
    and "null" outputs, and rows whose `is_reference` holds true, are left out and counted
    (`counts`). InputError when a column named is absent, a score is not a number, or a dataset
    keeps fewer than two judgements or only one distinct score.
    """
    path = Path(path)
    rows, columns = _records(path)
    if not rows:
        raise InputError(f"{path} holds no rows")
    named = {"text": text_column, "score": score_column}
    named.update({"group": group_column, "dataset": dataset_column})
    for role, column in named.items():
        if column is not None and not any(_get(r, column) is not _MISSING for _, r in rows):
            raise InputError(
                f"{path}: no {role} column {column!r}; the file has: {', '.join(columns)}"
            )
    if group_column is None and "group" in columns:
        group_column = "group"
    raw = path.read_bytes()

    kept: dict[str, list[tuple[str, float, str, list[str], str]]] = {}
    counts: dict[str, dict[str, int]] = {}
    for where, row in rows:
        name = path.stem
        if dataset_column is not None:
            value = _get(row, dataset_column)
            if _blank(value):
                raise InputError(f"{path}, {where}: no dataset in column {dataset_column!r}")
            name = str(value)
        count = counts.setdefault(name, dict.fromkeys(("n_lines", "n_empty", "n_references"), 0))
        kept.setdefault(name, [])
        count["n_lines"] += 1
        text = _get(row, text_column)
        if _blank(text):
            text = ""
        elif not isinstance(text, str):
            raise InputError(f"{path}, {where}: the text column {text_column!r} holds {text!r}")
        if is_empty_output(text):
            count["n_empty"] += 1
            continue
        if _truthy(_get(row, "is_reference")):
            count["n_references"] += 1
            continue
        score = _number(_get(row, score_column), path, where, score_column)
        group = _get(row, group_column) if group_column else _MISSING
        group = f"\x00{where}" if _blank(group) else str(group)
        refs = _get(row, "refs")
        refs = [str(r) for r in refs] if isinstance(refs, list | tuple | np.ndarray) else []
        system = _get(row, "system")  # where the table names systems: system-level figures
        kept[name].append((text, score, group, refs, "" if _blank(system) else str(system)))

    out = []
    for name, items in kept.items():
        where = f"{path}" if dataset_column is None else f"{path}, dataset {name!r}"
        if len(items) < 2:
            raise InputError(
                f"{where}: {len(items)} judgement(s) kept "
                f"({counts[name]['n_empty']} empty, {counts[name]['n_references']} references "
                "left out); a calibration needs at least 2"
            )
        human = np.array([s for _, s, _, _, _ in items])
        if np.ptp(human) == 0:
            raise InputError(
                f"{where}: every score is {human[0]:g}; people must have scored some outputs "
                "apart to learn anything from them"
            )
        digest = hashlib.sha256(raw)
        if dataset_column is not None:
            digest.update(b"\x00" + name.encode())
        out.append(
            JudgedFile(
                name,
                digest.hexdigest(),
                [t for t, _, _, _, _ in items],
                human,
                [g for _, _, g, _, _ in items],
                [r for _, _, _, r, _ in items],
                {**counts[name], "n_kept": len(items)},
                [m for *_, m in items],
            )
        )
    return out


def _field_for(stem: str, score) -> str:
    if isinstance(score, str):
        return score
    return score.get(stem, score.get("", "score"))


def read_tables(paths, **columns) -> list[JudgedFile]:
    """`read_table` over several files, in order; InputError when two datasets share a name
    (they are held out by name). `score_column` may map a file's stem to its own column ("" for
    the others)."""
    score = columns.pop("score_column", "score")
    out = [
        f
        for p in paths
        for f in read_table(p, score_column=_field_for(Path(p).stem, score), **columns)
    ]
    seen: dict[str, int] = {}
    for f in out:
        seen[f.name] = seen.get(f.name, 0) + 1
    twice = [name for name, n in seen.items() if n > 1]
    if twice:
        raise InputError(
            f"two datasets are named {', '.join(map(repr, twice))}: rename a file, or give "
            "the rows a dataset column (--dataset-column)"
        )
    return out
