"""Reading request bodies: shape and types here (400), what the library accepts there (422).

A body must be a JSON object with only the documented fields (a misspelt field is an error,
not a silently ignored option). Strict JSON: NaN and Infinity are refused.

Text checks on top of `check_texts` (empty, whitespace, too many, too long): control
characters other than tab, newline and carriage return, and lone surrogates, are refused with
422. They are debris from generators (NUL, escape sequences), not English, and spaCy would turn
them into tokens the model never saw in training.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Any

from flask import request

from scorer.errors import InputError
from scorer.scoring import check_texts
from scorer.web.errors import BodyError

__all__ = ["check_clean", "read_object", "text_list", "texts", "typename"]

_ALLOWED_CONTROLS = {"\t", "\n", "\r"}


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


def read_object(fields: Iterable[str], *, allow_empty: bool = False) -> dict[str, Any]:
    """The body as a dict holding only `fields`; an empty body is `{}` when `allow_empty`."""
    raw = request.get_data(cache=True)  # werkzeug raises 413 past MAX_CONTENT_LENGTH
    if not raw.strip():
        if allow_empty:
            return {}
        raise BodyError("the request body is empty; send a JSON object")
    try:
        data = json.loads(raw, parse_constant=_no_constants)
    except (ValueError, UnicodeDecodeError) as exc:
        raise BodyError(f"the body is not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise BodyError(f"the body must be a JSON object, got {typename(data)}")
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


def check_clean(items: Sequence[str], what: str) -> None:
    for i, text in enumerate(items):
        for ch in text:
            cat = unicodedata.category(ch)
            if (cat == "Cc" and ch not in _ALLOWED_CONTROLS) or cat == "Cs":
                raise InputError(
                    f"{what}[{i}] holds the control character U+{ord(ch):04X}; remove it "
                    "(tab, newline and carriage return are accepted)"
                )


def texts(items: Sequence[str], what: str, *, max_batch: int, max_chars: int) -> list[str]:
    """Library checks (422: empty, whitespace, too many, too long), then control characters."""
    out = check_texts(items, max_batch=max_batch, max_chars=max_chars, what=what)
    check_clean(out, what)
    return out
