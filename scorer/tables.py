"""Rows in and out of files: plain text (one text a line), JSON Lines and Parquet, in chunks.

A row is a dict of its columns, as read; commands add their result columns to it and the row is
written with every input column kept, in input order. Text input gives one column (the text).
Parquet is read a row group slice at a time and written one chunk at a time (pyarrow), so a file
larger than memory streams; its input schema is kept and the new columns appended.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

from features.errors import InputError
from scorer.textio import cell, iter_lines

__all__ = [
    "FORMATS",
    "TableWriter",
    "format_of",
    "open_writer",
    "parquet_schema",
    "read_chunks",
]

FORMATS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl", ".parquet": "parquet"}


def format_of(path: str) -> str:
    """ "jsonl", "parquet", or "text" (anything else, and standard input)."""
    return FORMATS.get(Path(path).suffix.lower(), "text") if path != "-" else "text"


def _pyarrow():
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:  # pragma: no cover - pyarrow comes with the dev and dask extras
        raise InputError("Parquet needs pyarrow: pip install 'fluency-scorer[dask]'") from exc
    return pa, pq


def _chunks(rows: Iterator[dict], size: int) -> Iterator[list[dict]]:
    chunk: list[dict] = []
    for row in rows:
        chunk.append(row)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _jsonl(path: str) -> Iterator[dict]:
    for n, line in enumerate(iter_lines(path), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise InputError(
                f"{path} line {n} is not JSON ({exc}); give one object a line"
            ) from exc
        if not isinstance(row, dict):
            raise InputError(f"{path} line {n} is a JSON {type(row).__name__}, not an object")
        yield row


def _parquet_file(path: str):
    _, pq = _pyarrow()
    try:
        return pq.ParquetFile(path)
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read {path} as Parquet: {exc}") from exc


def _parquet(path: str, size: int, columns: Sequence[str]) -> Iterator[list[dict]]:
    """Checked now (columns present), read later: a bad file fails before any model loads."""
    handle = _parquet_file(path)
    missing = [c for c in columns if c not in handle.schema_arrow.names]
    if missing:
        raise InputError(
            f"{path} has no column {missing[0]!r}; its columns: "
            f"{', '.join(handle.schema_arrow.names)} (name the text with --text-column)"
        )
    return (batch.to_pylist() for batch in handle.iter_batches(batch_size=size))


def read_chunks(
    path: str, size: int, *, text_column: str = "text", columns: Sequence[str] = ()
) -> Iterator[list[dict]]:
    """Chunks of at most `size` rows. Plain text: one row `{text_column: line}` a line, empty
    lines kept. `columns` must exist in a Parquet file (checked before anything is read)."""
    fmt = format_of(path)
    if fmt == "parquet":
        return _parquet(path, size, [text_column, *columns])
    rows = _jsonl(path) if fmt == "jsonl" else ({text_column: t} for t in iter_lines(path))
    return _chunks(rows, size)


def parquet_schema(path: str):
    """The Arrow schema of a Parquet file (the writer keeps it for the input columns)."""
    return _parquet_file(path).schema_arrow


def _plain(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


class TableWriter:
    """Writes chunks of rows to `path` ("-": standard output) as `fmt`:

    - "jsonl": one JSON object a row, every column;
    - "parquet": one row group a chunk; `schema` (the input's) types the input columns, the
      added ones are typed from the first chunk that has a value (floats when all null);
    - "text": `column`'s value a line ("%.6f", "nan" when null) when `column` is given, else a
      tab-separated table with a header.
    """

    def __init__(self, path: str, fmt: str, *, column: str | None = None, schema=None):
        self.path, self.fmt, self.column, self.schema = path, fmt, column, schema
        self._writer = None
        self._header = False
        self._out: TextIO | None = None
        if fmt != "parquet":
            self._out = sys.stdout if path == "-" else open(path, "w", encoding="utf-8")  # noqa: SIM115

    def write(self, rows: Sequence[dict]) -> None:
        if self.fmt == "parquet":
            self._write_parquet(rows)
        elif self.fmt == "jsonl":
            text = "".join(
                json.dumps({k: _plain(v) for k, v in r.items()}, ensure_ascii=False, default=str)
                + "\n"
                for r in rows
            )
            self._out.write(text)
        elif self.column is not None:
            values = (r.get(self.column) for r in rows)
            self._out.write("".join("nan\n" if v is None else f"{v:.6f}\n" for v in values))
        else:
            self._write_tsv(rows)
        if self._out is not None:
            self._out.flush()

    def _write_tsv(self, rows: Sequence[dict]) -> None:
        if not rows:
            return
        if not self._header:
            self._keys = list(rows[0])
            self._out.write("\t".join(self._keys) + "\n")
            self._header = True
        for row in rows:
            self._out.write("\t".join(cell(row.get(k)) for k in self._keys) + "\n")

    def _write_parquet(self, rows: Sequence[dict]) -> None:
        pa, pq = _pyarrow()
        if not rows:
            return
        if self._writer is None:
            self.schema = self._schema(pa, rows)
            self._writer = pq.ParquetWriter(self.path, self.schema)
        try:
            table = pa.Table.from_pylist(list(rows), schema=self.schema)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise InputError(f"cannot write these rows to {self.path}: {exc}") from exc
        self._writer.write_table(table)

    def _schema(self, pa, rows: Sequence[dict]):
        names = list(dict.fromkeys(k for r in rows for k in r))
        known = {f.name: f for f in self.schema} if self.schema is not None else {}
        fields = []
        for name in names:
            if name in known:
                fields.append(known[name])
                continue
            kind = pa.array([r.get(name) for r in rows]).type
            if pa.types.is_null(kind):
                kind = pa.string() if name == "reason" else pa.float64()
            fields.append(pa.field(name, kind))
        return pa.schema(fields)

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
        elif self.fmt == "parquet":  # no rows at all: still a valid (empty) file
            pa, pq = _pyarrow()
            schema = self.schema if self.schema is not None else pa.schema([])
            pq.write_table(schema.empty_table(), self.path)
        if self._out is not None and self._out is not sys.stdout:
            self._out.close()


def open_writer(path: str, *, column: str | None = None, schema=None) -> TableWriter:
    return TableWriter(path, format_of(path), column=column, schema=schema)
