"""Delexicalised slot placeholders, read as the names they stand for.

Data-to-text corpora and the systems trained on them often write slot values as a placeholder
("X is a restaurant near X ." in BAGEL, Novikova et al. 2017). Every signal here then reads
"X" as a word of its own, not as a name: Link Grammar's dictionary has X only as a noun that
cannot modify another ("X is a restaurant in the X area ." needs a null word, "... in the
Riverside area ." parses whole), and the language model sees a rare token. The scorer replaces
each whole-token placeholder by one stand-in name before feature extraction; the text a caller
gets back is the one they sent.

The stand-in is "Smith": capitalised, so spaCy and Link Grammar take it for a proper noun that
can also modify ("the Smith area"), and the most frequent of the names tried in the default
language model's unigrams (log10 p -4.05), so the LM does not read it as rare. Other stand-ins
agree with people about as well (docs/model.md, "Slot placeholders").

Off with an empty list of placeholders (`FLUENCY_PLACEHOLDERS=` or `fluency --placeholders ""`),
for text where a lone "X" is a word ("Malcolm X"); filling it with a name changes its fluency
little either way. Training reads its corpus as it is: the default training sample holds no
lone "X".
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence

__all__ = [
    "DEFAULT_PLACEHOLDERS",
    "STAND_IN",
    "fill_placeholders",
    "parse_placeholders",
    "placeholder_spans",
]

DEFAULT_PLACEHOLDERS: tuple[str, ...] = ("X",)
STAND_IN = "Smith"


def parse_placeholders(value: str | Iterable[str] | None) -> tuple[str, ...]:
    """A comma-separated setting ("X,<name>") or a list, as a tuple without blanks."""
    if value is None:
        return ()
    items = value.split(",") if isinstance(value, str) else list(value)
    return tuple(dict.fromkeys(p.strip() for p in items if p and p.strip()))


@functools.lru_cache(maxsize=16)
def _pattern(placeholders: tuple[str, ...]) -> re.Pattern | None:
    if not placeholders:
        return None
    # A whole token only: not inside a word ("XBox", "taX"), nor a hyphenated one ("X-ray");
    # punctuation may touch it ("X.", "X's", "(X)").
    alternatives = "|".join(re.escape(p) for p in sorted(placeholders, key=len, reverse=True))
    return re.compile(rf"(?<![\w-])(?:{alternatives})(?![\w-])")


def fill_placeholders(texts: Sequence[str], placeholders: Sequence[str]) -> list[str]:
    """`texts` with every whole-token placeholder replaced by `STAND_IN`."""
    pattern = _pattern(tuple(placeholders))
    if pattern is None:
        return list(texts)
    return [pattern.sub(STAND_IN, t) for t in texts]


def placeholder_spans(text: str, placeholders: Sequence[str]) -> list[tuple[int, int]]:
    """Where `fill_placeholders` replaces a placeholder in `text`: (start, end) character
    offsets, in order, each replaced by `STAND_IN`; so offsets into the filled text can be
    mapped back to the text as sent."""
    pattern = _pattern(tuple(placeholders))
    return [] if pattern is None else [m.span() for m in pattern.finditer(text)]
