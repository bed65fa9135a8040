"""Human judgement files (JSONL): one generated text a line, with its human scores.

Each line has at least `text`, `score` (the default human score), `scores` (every dimension
judged), `refs` and `group` (the input all competing outputs share), and usually `system`
(absent: "", and the file has no system-level view). A line may also
carry `judges`: {judge id: raw rating}, the per-judge ratings that `agreement.z_normalise`
turns into one normalised score (Bangalore et al. 2000, section 4.1). Fields are addressed by
dotted paths: "score", "scores.fluency", "auto.bleu".
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scorer.errors import InputError

__all__ = ["Judgement", "align_by_group", "field_values", "read_judgements"]

REQUIRED = ("text", "score", "scores", "refs", "group")  # `system` may be absent: ""


@dataclass(frozen=True)
class Judgement:
    """One judged output. `raw` keeps the whole line, for fields we do not name."""

    text: str
    score: float
    scores: dict[str, float]
    refs: list[str]
    group: str
    system: str
    is_reference: bool = False
    judges: dict[str, float] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def get(self, path: str) -> Any:
        """The value at a dotted path of the line ("scores.fluency"); InputError when absent."""
        value: Any = self.raw
        for part in path.split("."):
            if not isinstance(value, Mapping) or part not in value:
                raise InputError(
                    f"no field {path!r} in the judgement of system {self.system!r}, group "
                    f"{self.group!r}; fields there: {', '.join(sorted(self.raw))}"
                )
            value = value[part]
        return value


def _judgement(obj: Any, where: str) -> Judgement:
    if not isinstance(obj, dict):
        raise InputError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    missing = [k for k in REQUIRED if k not in obj]
    if missing:
        raise InputError(f"{where}: missing field(s) {', '.join(missing)}; need {REQUIRED}")
    refs = obj["refs"]
    if isinstance(refs, str) or not isinstance(refs, list):
        raise InputError(f"{where}: refs must be a list of strings, got {type(refs).__name__}")
    if not isinstance(obj["text"], str):
        raise InputError(f"{where}: text must be a string")
    try:
        score = float(obj["score"])
        scores = {str(k): float(v) for k, v in obj["scores"].items()}
        judges = {str(k): float(v) for k, v in (obj.get("judges") or {}).items()}
    except (TypeError, ValueError, AttributeError) as exc:
        raise InputError(f"{where}: score, scores and judges must hold numbers ({exc})") from None
    return Judgement(
        text=obj["text"],
        score=score,
        scores=scores,
        refs=[str(r) for r in refs],
        group=str(obj["group"]),
        system=str(obj.get("system") or ""),
        is_reference=bool(obj.get("is_reference", False)),
        judges=judges,
        raw=obj,
    )


def read_jsonl(path: str | Path) -> list[tuple[int, Any]]:
    """(line number, value) of every non-blank line of a JSON-lines file; a file that cannot be
    read, or a line that is not JSON, is an InputError naming the file and line."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None
    out = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            out.append((number, json.loads(line)))
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{number}: not JSON ({exc.msg})") from None
    return out


def read_judgements(path: str | Path) -> list[Judgement]:
    """Every line of a JSONL judgement file; blank lines are skipped."""
    out = [_judgement(obj, f"{path}:{number}") for number, obj in read_jsonl(path)]
    if not out:
        raise InputError(f"{path} holds no judgements; expected one JSON object a line")
    return out


def field_values(judgements: Sequence[Judgement], path: str) -> list[float]:
    """`path` of every judgement as a finite float ("score", "scores.fluency", "auto.bleu")."""
    out = []
    for j in judgements:
        value = j.get(path)
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise InputError(f"field {path!r} holds {value!r}, expected a number") from None
        if not math.isfinite(number):
            raise InputError(f"field {path!r} holds {value!r}, expected a finite number")
        out.append(number)
    return out


def align_by_group(
    judgements: Sequence[Judgement], systems: Sequence[str] | None = None
) -> tuple[list[tuple[str, int]], dict[str, list[Judgement]]]:
    """Pair the systems' outputs row by row for paired tests.

    A row is (group, k): the k-th output of a system for that group, in file order. Only rows
    every system has are kept, in first-seen order, so row i of each system answers the same
    input. Returns the row keys and, per system, its judgements in that order.
    """
    names = (
        list(systems) if systems is not None else list(dict.fromkeys(j.system for j in judgements))
    )
    if len(names) < 2:
        raise InputError(f"paired comparisons need at least two systems; got {names}")
    rows: dict[str, dict[tuple[str, int], Judgement]] = {s: {} for s in names}
    seen: dict[tuple[str, str], int] = defaultdict(int)
    order: dict[tuple[str, int], None] = {}
    for j in judgements:
        if j.system not in rows:
            continue
        key = (j.group, seen[(j.system, j.group)])
        seen[(j.system, j.group)] += 1
        rows[j.system][key] = j
        order.setdefault(key)
    unknown = [s for s in names if not rows[s]]
    if unknown:
        raise InputError(f"no judgements for system(s) {unknown}")
    keys = [k for k in order if all(k in rows[s] for s in names)]
    if not keys:
        raise InputError(f"systems {names} share no group: nothing to compare pairwise")
    return keys, {s: [rows[s][k] for k in keys] for s in names}
