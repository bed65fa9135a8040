"""What one call may ask for: text checks and a cost budget, enforced before any work starts.

Everything a request is checked against lives here, once: `rerank`, the service's views and
anything else that takes texts from outside call a `Limits` method and get the texts back, or
an `InputError` saying what was wrong and what to do. The web layer only parses JSON shapes.

Costs. Parsing and fluency grow with the number of tokens; the Bangalore alignment behind the
string and tree accuracies grows faster than the square of the tokens of a pair (1,000 one-letter
words against 1,000 take 0.4 s, 400 against 400 0.04 s), once per candidate and reference.
So a request is refused (`CostError`, 422) when

- a text that goes through alignment has more than `max_align_tokens` tokens;
- candidates x references (rerank), or references over all hypotheses (accuracy), exceed
  `max_pairs`;
- the alignments' work, the sum over aligned pairs of hypothesis tokens x reference tokens,
  exceeds `max_align_work` (5,000,000 is about a second here);
- all its texts together have more than `max_request_tokens` tokens.

Tokens are counted before parsing, cheaply: runs of word characters and single other
non-space characters (`count_tokens`), a little above spaCy's count ("don't": 3, spaCy 2), so
a text under the limit here is under it after parsing too.

Texts. On top of `check_texts` (not a list, empty or only whitespace and invisible format
characters, too many, too long): control characters other than tab, newline and carriage return
(C0, DEL and C1) and lone surrogates are refused. They are debris from generators, not English, and
spaCy would turn them into tokens the model never saw in training.
"""

from __future__ import annotations

import functools
import re
import sys
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scorer.errors import InputError

__all__ = [
    "REFUSED_CHARS",
    "CostError",
    "Limits",
    "blank_chars",
    "check_texts",
    "count_tokens",
    "is_blank",
]

_TOKEN = re.compile(r"\w+|[^\w\s]")


# Characters refused anywhere in a text: the controls (Cc: C0, DEL, C1) but tab, LF and CR, and
# lone surrogates (Cs), which JSON can carry as escapes.
REFUSED_CHARS = "".join(
    chr(c)
    for c in [*range(0x20), *range(0x7F, 0xA0), *range(0xD800, 0xE000)]
    if chr(c) not in "\t\n\r"
)
_REFUSED = re.compile("[" + re.escape(REFUSED_CHARS) + "]")


@functools.cache
def blank_chars() -> str:
    """Characters that count as nothing: whitespace (`str.isspace`) and format characters (Cf).
    Computed once, on first use (a scan of every code point, 0.4 s)."""
    return "".join(
        chr(c)
        for c in range(sys.maxunicode + 1)
        if chr(c).isspace() or unicodedata.category(chr(c)) == "Cf"
    )


def is_blank(text: str) -> bool:
    """Nothing to read: only whitespace and invisible format characters (Unicode Cf: zero-width
    space, BOM, joiners, direction marks), which spaCy would otherwise make tokens of."""
    return all(ch.isspace() or unicodedata.category(ch) == "Cf" for ch in text)


def check_texts(
    texts: Sequence[Any],
    *,
    max_batch: int | None = None,
    max_chars: int | None = None,
    what: str = "sentences",
) -> list[str]:
    """Refuse what cannot be scored, with a reason: not a list, not strings, empty, too many,
    too long. Control characters and odd Unicode are scored as they are."""
    if isinstance(texts, str) or not isinstance(texts, Sequence):
        raise InputError(f"{what} must be a list of strings, got {type(texts).__name__}")
    if not texts:
        raise InputError(f"{what} is empty: give at least one text")
    if max_batch is not None and len(texts) > max_batch:
        raise InputError(f"{len(texts)} {what}, at most {max_batch} per call")
    out = []
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise InputError(f"{what}[{i}] is {type(t).__name__}, expected a string")
        if is_blank(t):
            raise InputError(
                f"{what}[{i}] is empty, or only whitespace and invisible characters: "
                "nothing to score"
            )
        if max_chars is not None and len(t) > max_chars:
            raise InputError(f"{what}[{i}] has {len(t)} characters, at most {max_chars}")
        out.append(t)
    return out


class CostError(InputError):
    """A request over one of the cost limits; `limit` names the setting, `value` its value."""

    def __init__(self, message: str, *, limit: str, value: int):
        super().__init__(message)
        self.limit, self.value = limit, value


def count_tokens(text: str) -> int:
    """Word-character runs plus other single non-space characters: the pre-parse token count."""
    return len(_TOKEN.findall(text))


@dataclass(frozen=True)
class Limits:
    """Per-call limits; None: unlimited. `from_config` reads the service's settings."""

    max_batch: int | None = None  # texts per list (candidates, sentences, hypotheses)
    max_chars: int | None = None  # characters per text
    max_references: int | None = None  # references per list
    max_align_tokens: int | None = None  # tokens per text that is aligned (accuracies)
    max_pairs: int | None = None  # hypothesis-reference pairs aligned per call
    max_align_work: int | None = None  # sum over pairs of tokens x tokens
    max_request_tokens: int | None = None  # tokens over every text of the call

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> Limits:
        return cls(
            max_batch=config.get("MAX_BATCH"),
            max_chars=config.get("MAX_CHARS"),
            max_references=config.get("MAX_REFERENCES"),
            max_align_tokens=config.get("MAX_ALIGN_TOKENS"),
            max_pairs=config.get("MAX_PAIRS"),
            max_align_work=config.get("MAX_ALIGN_WORK"),
            max_request_tokens=config.get("MAX_REQUEST_TOKENS"),
        )

    def texts(self, texts: Sequence[Any], what: str, *, references: bool = False) -> list[str]:
        """`texts` as a list of accepted strings: the count, each text's length and characters."""
        out = self._shape(texts, what, references)
        self._characters([(what, out)])
        return out

    def sentences(self, sentences: Sequence[Any], what: str = "sentences") -> list[str]:
        """Texts to score for fluency alone: the text checks and the request's token total."""
        out = self._shape(sentences, what)
        self._total([(what, out)])
        self._characters([(what, out)])
        return out

    def rerank(
        self, candidates: Sequence[Any], references: Sequence[Any] | None
    ) -> tuple[list[str], list[str] | None]:
        """Candidates and the references they share, checked, with the cost of aligning them."""
        cands = self._shape(candidates, "candidates")
        if references is None:
            self._total([("candidates", cands)])
            self._characters([("candidates", cands)])
            return cands, None
        refs = self._shape(references, "references", references=True)
        groups = [("candidates", cands), ("references", refs)]
        self._pairs(len(cands) * len(refs), f"{len(cands)} candidates x {len(refs)} references")
        self._aligned(groups)
        self._work([(cands, refs)])
        self._total(groups)
        self._characters(groups)
        return cands, refs

    def accuracy(
        self, hypotheses: Sequence[Any], references: Sequence[Any]
    ) -> tuple[list[str], list[list[str]]]:
        """Hypotheses, one list of references each, checked, with the cost of aligning them."""
        hyps = self._shape(hypotheses, "hypotheses")
        if isinstance(references, str) or not isinstance(references, Sequence):
            raise InputError("references must be a list with one list of strings per hypothesis")
        if len(references) != len(hyps):
            raise InputError(
                f"{len(hyps)} hypotheses but {len(references)} reference lists; "
                "give one list of references per hypothesis"
            )
        refs = [
            self._shape(r, f"references[{i}]", references=True) for i, r in enumerate(references)
        ]
        n_pairs = sum(len(r) for r in refs)
        self._pairs(n_pairs, f"{n_pairs} hypothesis-reference pairs")
        groups = [("hypotheses", hyps)] + [(f"references[{i}]", r) for i, r in enumerate(refs)]
        self._aligned(groups)
        self._work([([h], r) for h, r in zip(hyps, refs, strict=True)])
        self._total(groups)
        self._characters(groups)
        return hyps, refs

    # The checks, cheapest first: a costly request is refused before its characters are read.

    def _shape(self, texts: Sequence[Any], what: str, references: bool = False) -> list[str]:
        max_items = self.max_references if references else self.max_batch
        return check_texts(texts, max_batch=max_items, max_chars=self.max_chars, what=what)

    def _characters(self, groups: Sequence[tuple[str, Sequence[str]]]) -> None:
        for what, texts in groups:
            for i, text in enumerate(texts):
                bad = _REFUSED.search(text)
                if bad:
                    code = ord(bad.group())
                    kind = (
                        "a lone surrogate" if 0xD800 <= code <= 0xDFFF else "the control character"
                    )
                    raise InputError(
                        f"{what}[{i}] holds {kind} U+{code:04X}; remove it (tab, newline and "
                        "carriage return are accepted)"
                    )

    def _pairs(self, n_pairs: int, what: str) -> None:
        if self.max_pairs is not None and n_pairs > self.max_pairs:
            raise CostError(
                f"{what} to align; at most {self.max_pairs} pairs per request "
                f"(MAX_PAIRS={self.max_pairs}): send fewer candidates or references per call",
                limit="MAX_PAIRS",
                value=self.max_pairs,
            )

    def _work(self, blocks: Sequence[tuple[Sequence[str], Sequence[str]]]) -> None:
        """Each hypothesis of a block is aligned with each reference of the same block."""
        if self.max_align_work is None:
            return
        work = sum(
            sum(count_tokens(h) for h in hyps) * sum(count_tokens(r) for r in refs)
            for hyps, refs in blocks
        )
        if work > self.max_align_work:
            raise CostError(
                f"aligning these texts is {work:,} token pairs of work; at most "
                f"{self.max_align_work:,} per request (MAX_ALIGN_WORK={self.max_align_work}): "
                "send shorter texts, or fewer candidates or references per call",
                limit="MAX_ALIGN_WORK",
                value=self.max_align_work,
            )

    def _total(self, groups: Sequence[tuple[str, Sequence[str]]]) -> None:
        if self.max_request_tokens is None:
            return
        total = 0
        for _, texts in groups:
            for text in texts:
                total += count_tokens(text)
                if total > self.max_request_tokens:
                    raise CostError(
                        f"the request's texts have more than {self.max_request_tokens} tokens "
                        f"(MAX_REQUEST_TOKENS={self.max_request_tokens}): split it into "
                        "smaller requests",
                        limit="MAX_REQUEST_TOKENS",
                        value=self.max_request_tokens,
                    )

    def _aligned(self, groups: Sequence[tuple[str, Sequence[str]]]) -> None:
        if self.max_align_tokens is None:
            return
        for what, texts in groups:
            for i, text in enumerate(texts):
                if len(text) <= self.max_align_tokens:
                    continue  # a token has at least one character: cannot be over
                n = count_tokens(text)
                if n > self.max_align_tokens:
                    raise CostError(
                        f"{what}[{i}] has {n} tokens; the accuracies align at most "
                        f"{self.max_align_tokens} tokens per text "
                        f"(MAX_ALIGN_TOKENS={self.max_align_tokens}): split it into sentences",
                        limit="MAX_ALIGN_TOKENS",
                        value=self.max_align_tokens,
                    )
