"""One scoring request at a time per worker process, a short queue, and a deadline for each.

Gunicorn runs threaded workers (gthread, gunicorn.conf.py) so that `/healthz`, `/readyz`, the
model card and every refusal (400, 413, 422) are answered by a free thread while a long request
runs. The work itself (spaCy, Link Grammar, torch, the alignments) still runs one request at a
time per process: those libraries are not made to be entered from two threads at once, and two
CPU-bound requests in one process would only share one core's worth of the GIL.

A request that needs the parser takes the worker's `WorkSlot`. At most `max_queue` more may wait
for it; one more is answered 503 at once (`BusyError`, `Retry-After`), so a burst of expensive
requests cannot occupy every thread. Waiting counts against the request's deadline
(REQUEST_TIMEOUT): a request still waiting then, or still working (`scorer.deadline`), is
answered 503 and the worker goes on with the next one.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from flask import current_app

from scorer.deadline import Deadline, DeadlineExceededError

__all__ = ["BusyError", "WorkSlot", "deadline", "slot"]


class BusyError(Exception):
    """Every place in this worker's queue is taken (503, try again shortly)."""


class WorkSlot:
    """A lock for the parser and models of one process, with at most `max_queue` waiting."""

    def __init__(self, max_queue: int):
        self.max_queue = max_queue
        self._slot = threading.Lock()
        self._count = threading.Lock()
        self.pending = 0  # running + waiting

    @contextmanager
    def hold(self, deadline: Deadline) -> Iterator[None]:
        with self._count:
            if self.pending > self.max_queue:
                raise BusyError(
                    f"this worker is running one request and {self.max_queue} more are waiting "
                    "(MAX_QUEUE); try again shortly"
                )
            self.pending += 1
        try:
            remaining = deadline.remaining()
            if not self._slot.acquire(timeout=-1 if remaining is None else remaining):
                raise DeadlineExceededError(
                    f"no worker was free within {deadline.seconds:g} s; try again later",
                    seconds=float(deadline.seconds or 0),
                )
            try:
                yield
            finally:
                self._slot.release()
        finally:
            with self._count:
                self.pending -= 1


def slot() -> WorkSlot:
    """This process's work slot, made on first use (in the worker, after gunicorn's fork)."""
    found = current_app.extensions.get("fluency_work")
    if found is None:
        found = current_app.extensions.setdefault(
            "fluency_work", WorkSlot(current_app.config["MAX_QUEUE"])
        )
    return found


def deadline() -> Deadline:
    """A deadline REQUEST_TIMEOUT seconds from now (0: none)."""
    return Deadline(current_app.config["REQUEST_TIMEOUT"] or None)
