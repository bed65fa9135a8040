"""Reading request bodies: bytes, JSON and field types (400). What the texts may hold, and what a
request may cost, is the library's to say (`scorer.limits`, 422).

Bytes. At most MAX_CONTENT_LENGTH (413), whether the client sends a Content-Length or a chunked
body: werkzeug stops reading a chunked body at the limit and hands over the prefix, so it is
read here and one byte more refused. `Content-Encoding: gzip` is decoded, the decoded size held
to the same limit; any other encoding is 415.

JSON. An object with only the documented fields (a misspelt field is an error, not a silently
ignored option), strict (NaN and Infinity are refused), nested at most JSON_DEPTH deep. Python's
parser recurses once per level: a thousand `[` end in RecursionError, caught here and answered
like any body nested too deep.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterable
from typing import Any

from flask import current_app, request
from werkzeug.exceptions import RequestEntityTooLarge, UnsupportedMediaType

from scorer.web.errors import BodyError

__all__ = ["optional", "read_object", "text_list", "typename"]

_READ = 64 * 1024


def typename(value: Any) -> str:
    """The JSON name of a decoded value's type."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return {str: "string", list: "array", dict: "object"}.get(type(value), type(value).__name__)


def _no_constants(name: str):
    raise ValueError(f"{name} is not JSON")


def _too_large() -> RequestEntityTooLarge:
    return RequestEntityTooLarge()  # errors.py says which limit


def _raw(limit: int) -> bytes:
    """The body's bytes, at most `limit` of them, however they were sent."""
    if request.content_length is not None:  # werkzeug refuses a larger declared length (413)
        return request.get_data(cache=True)
    stream = request.environ.get("wsgi.input")
    if stream is None or not request.environ.get("wsgi.input_terminated"):
        return request.get_data(cache=True)  # no length and no framing: werkzeug reads nothing
    chunks, size = [], 0
    while True:
        chunk = stream.read(min(_READ, limit + 1 - size))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            raise _too_large()


def _decoded(raw: bytes, limit: int) -> bytes:
    encoding = request.headers.get("Content-Encoding", "identity").strip().lower()
    if encoding in ("", "identity"):
        return raw
    if encoding not in ("gzip", "x-gzip"):
        raise UnsupportedMediaType(
            f"Content-Encoding {encoding!r} is not accepted; send the body plain or gzip"
        )
    inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = inflate.decompress(raw, limit + 1)
    except zlib.error as exc:
        raise BodyError(f"the body is not valid gzip ({exc})") from None
    if len(out) > limit:
        raise _too_large()
    if not inflate.eof:
        raise BodyError("the gzip body is truncated")
    return out


def _depth(value: Any, limit: int) -> int:
    """How deep arrays and objects nest in `value` (decoded JSON), counted up to `limit` + 1."""
    depth, level = 0, [value]
    while depth <= limit:
        containers = [node for node in level if isinstance(node, list | dict)]
        if not containers:
            break
        depth += 1
        level = [
            child
            for node in containers
            for child in (node.values() if isinstance(node, dict) else node)
        ]
    return depth


def read_object(fields: Iterable[str], *, allow_empty: bool = False) -> dict[str, Any]:
    """The body as a dict holding only `fields`; an empty body is `{}` when `allow_empty`."""
    limit = current_app.config["MAX_CONTENT_LENGTH"]
    raw = _decoded(_raw(limit), limit)
    if not raw.strip():
        if allow_empty:
            return {}
        raise BodyError("the request body is empty; send a JSON object")
    max_depth = current_app.config["JSON_DEPTH"]
    too_deep = BodyError(
        f"the body nests arrays and objects more than {max_depth} deep (JSON_DEPTH); "
        "the documented bodies nest 3 deep"
    )
    try:
        data = json.loads(raw, parse_constant=_no_constants)
    except RecursionError:
        raise too_deep from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise BodyError(f"the body is not valid JSON ({exc})") from None
    if _depth(data, max_depth) > max_depth:
        raise too_deep
    if not isinstance(data, dict):
        raise BodyError(f"the body must be a JSON object, got {typename(data)}")
    fields = tuple(fields)
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise BodyError(
            f"unknown field(s) {', '.join(map(repr, unknown))}; accepted: {', '.join(fields)}"
        )
    return data


def text_list(data: dict[str, Any], key: str) -> list[str]:
    """`data[key]` as a list of strings, or 400 saying what came instead."""
    if key not in data:
        raise BodyError(f"field {key!r} is required: a list of strings")
    value = data[key]
    if not isinstance(value, list):
        raise BodyError(f"field {key!r} must be a list of strings, got {typename(value)}")
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise BodyError(f"{key}[{i}] must be a string, got {typename(item)}")
    return value


_KINDS = {
    "boolean": lambda v: isinstance(v, bool),
    "integer": lambda v: (
        not isinstance(v, bool)
        and (isinstance(v, int) or (isinstance(v, float) and v.is_integer()))
    ),
    "number": lambda v: not isinstance(v, bool) and isinstance(v, int | float),
    "string": lambda v: isinstance(v, str),
    "object": lambda v: isinstance(v, dict),
    "array of strings": lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
}


def optional(data: dict[str, Any], key: str, kind: str, default: Any = None) -> Any:
    """`data[key]` if it is of JSON Schema type `kind`, `default` when absent, else 400.

    A field sent as null is refused like any other wrong type: the schema types each field and
    leaving it out is how to ask for the default. An integer may come as 4807.0 (JSON Schema
    counts a number with a zero fraction as an integer)."""
    if key not in data:
        return default
    value = data[key]
    if not _KINDS[kind](value):
        raise BodyError(
            f"field {key!r} must be {'an' if kind[0] in 'aeiou' else 'a'} {kind}, got "
            f"{typename(value)}; leave it out for the default"
        )
    return int(value) if kind == "integer" else value
