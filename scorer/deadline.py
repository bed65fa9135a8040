"""A time limit for one call, checked between pieces of work.

Python cannot stop a thread from outside, so long work stops itself: the reranker and the
accuracy report call `check()` between chunks of texts and between alignments, and a call past
its deadline raises `DeadlineExceededError` there. The cost limits (`scorer.limits`) keep each piece
short, so a call ends within about one piece (a chunk of `CHUNK` texts, one alignment) of its
deadline.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TypeVar

from scorer.errors import ScorerError

__all__ = ["CHUNK", "Deadline", "DeadlineExceededError", "in_chunks"]

T = TypeVar("T")
R = TypeVar("R")
CHUNK = 16  # texts scored between two checks


class DeadlineExceededError(ScorerError):
    """The call ran past its time limit and was stopped; nothing was returned."""

    def __init__(self, message: str, *, seconds: float):
        super().__init__(message)
        self.seconds = seconds


class Deadline:
    """`seconds` from now (monotonic clock); None: never."""

    def __init__(self, seconds: float | None):
        self.seconds = seconds
        self.at = None if seconds is None else time.monotonic() + seconds

    def remaining(self) -> float | None:
        return None if self.at is None else max(0.0, self.at - time.monotonic())

    def expired(self) -> bool:
        return self.at is not None and time.monotonic() >= self.at

    def check(self) -> None:
        if self.expired():
            raise DeadlineExceededError(
                f"the work took longer than {self.seconds:g} s and was stopped; "
                "send a smaller request or try again later",
                seconds=float(self.seconds or 0),
            )


def in_chunks(
    func: Callable[[Sequence[T]], list[R]],
    items: Sequence[T],
    check: Callable[[], None] | None = None,
    size: int = CHUNK,
) -> list[R]:
    """`func(items)`, computed `size` items at a time with `check()` before each chunk."""
    out: list[R] = []
    for start in range(0, len(items), size):
        if check is not None:
            check()
        out.extend(func(items[start : start + size]))
    return out
