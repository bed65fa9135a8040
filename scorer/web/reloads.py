"""Admin reloads one at a time, and not too often.

Each accepted reload loads a model in the worker, then (under gunicorn) in the master, which
forks a fresh set of workers: seconds of CPU, and gunicorn queues every SIGHUP it receives. So:

- at most one reload is pending or running per gunicorn master: the worker that accepts one
  creates a lock file (O_EXCL, so exactly one worker wins) that lives until the master's
  `on_reload` hook has finished (gunicorn.conf.py calls `release_signalled`); a reload asked
  for meanwhile is answered 409 with `Retry-After`. One SIGHUP at most is ever in flight;
- between two accepted reloads at least RELOAD_INTERVAL seconds pass, across all workers (the
  time of the last one is a stamp file's mtime, which survives the worker replacement); sooner
  is 429 with `Retry-After`.

Outside gunicorn (one process, `"scope": "process"`) a lock and a timestamp in memory do the
same. A lock left by a worker that died mid-load is taken over after `STALE_AFTER` seconds.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from scorer.web.state import request_reload

__all__ = [
    "STALE_AFTER",
    "RateLimitedError",
    "ReloadGate",
    "ReloadPendingError",
    "forget",
    "release_signalled",
]

STALE_AFTER = 300.0  # seconds: no load takes that long


class ReloadPendingError(Exception):
    """Another reload is pending or running (409)."""


class RateLimitedError(Exception):
    """A reload sooner than RELOAD_INTERVAL after the last one (429)."""

    def __init__(self, message: str, retry_after: int):
        super().__init__(message)
        self.retry_after = retry_after


def _lock_file(master_pid: int) -> Path:
    return Path(tempfile.gettempdir()) / f"fluency-reload-{master_pid}.lock"


def _stamp_file(master_pid: int) -> Path:
    return Path(tempfile.gettempdir()) / f"fluency-reload-{master_pid}.last"


def release_signalled(master_pid: int) -> None:
    """Called by the master when its reload is done: free the lock of the worker that asked.

    A lock whose worker has not signalled yet (it is still loading) stays: a SIGHUP sent by
    hand must not let a second admin reload start beside it."""
    lock = _lock_file(master_pid)
    try:
        data = json.loads(lock.read_text())
    except FileNotFoundError:
        return
    except (OSError, ValueError):
        data = {"signalled": True}  # unreadable: nobody can be waiting on it
    if isinstance(data, dict) and data.get("signalled"):
        lock.unlink(missing_ok=True)


def forget(master_pid: int) -> None:
    """Remove the lock and stamp files of a master that is exiting (gunicorn's on_exit)."""
    _lock_file(master_pid).unlink(missing_ok=True)
    _stamp_file(master_pid).unlink(missing_ok=True)


class Claim:
    """The right to run one reload; `signal` hands it to the gunicorn master."""

    def __init__(self, master_pid: int | None):
        self.master_pid = master_pid
        self.signalled = False

    def signal(self, path: str) -> None:
        if self.master_pid is None:
            return
        lock = _lock_file(self.master_pid)
        lock.write_text(json.dumps({"pid": os.getpid(), "since": time.time(), "signalled": True}))
        self.signalled = True  # from here the master frees the lock
        request_reload(self.master_pid, path)


class ReloadGate:
    """One reload at a time, at least `interval` seconds apart (see the module docstring)."""

    def __init__(self, interval: float):
        self.interval = interval
        self._lock = threading.Lock()
        self._last = -math.inf  # time.time() of the last accepted reload, in this process

    def _check_rate(self, last: float) -> None:
        wait = self.interval - (time.time() - last)
        if wait > 0:
            raise RateLimitedError(
                f"the last reload was accepted less than {self.interval:g} s ago "
                "(RELOAD_INTERVAL); try again later",
                retry_after=max(1, math.ceil(wait)),
            )

    @contextmanager
    def claim(self, master_pid: int | None) -> Iterator[Claim]:
        if master_pid is None:
            if not self._lock.acquire(blocking=False):
                raise ReloadPendingError("a reload is running; try again when it has finished")
            try:
                self._check_rate(self._last)
                self._last = time.time()
                yield Claim(None)
            finally:
                self._lock.release()
            return
        stamp = _stamp_file(master_pid)
        with suppress(FileNotFoundError):  # no stamp: no reload yet
            self._check_rate(stamp.stat().st_mtime)
        self._take(master_pid)
        stamp.touch()
        claim = Claim(master_pid)
        try:
            yield claim
        finally:
            if not claim.signalled:
                _lock_file(master_pid).unlink(missing_ok=True)

    def _take(self, master_pid: int) -> None:
        lock = _lock_file(master_pid)
        for _ in range(2):
            try:
                fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
            except FileExistsError:
                try:
                    age = time.time() - lock.stat().st_mtime
                except FileNotFoundError:
                    continue  # freed meanwhile: try again
                if age < STALE_AFTER:
                    raise ReloadPendingError(
                        f"a reload is pending or running (for {age:.0f} s); "
                        "try again when it has finished"
                    ) from None
                lock.unlink(missing_ok=True)  # its worker died mid-load
                continue
            with os.fdopen(fd, "w") as fh:
                json.dump({"pid": os.getpid(), "since": time.time(), "signalled": False}, fh)
            return
        raise ReloadPendingError("a reload is pending or running; try again when it has finished")
