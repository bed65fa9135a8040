"""Gunicorn's threaded worker, made to leave new connections to a less loaded worker.

Every gunicorn worker polls the one listening socket and accepts whatever reaches it. A sync
worker accepts only when it is idle, so connections go to free workers; a threaded (gthread)
worker accepts while its scoring thread is busy too, and keeps each connection alive for the
client's next request. Four clients on two workers then end up three on one and one on the
other about half the time: the three wait for each other (three requests' time) while the other
worker serves its one client, and the median latency goes from two requests' time to up to three
(`bench/load.py`, docs/benchmarks.md, "Balancing"). Nothing in gunicorn balances by load
(`reuse_port` spreads connections by a hash), and no proxy sits in front here, so this module
adds a small "join the shortest queue" rule to gunicorn's own worker:

- Each worker publishes its load, the requests it holds (new connections from their accept,
  requests on kept-alive ones while the application has them), in a table shared by all
  workers (anonymous shared memory created in the master, one slot per worker, claimed in the
  master before the fork).
- A worker accepts a connection only if no other live, accepting worker has a lower load; else
  it stops watching the listener and looks again every `RECHECK_S`. The least loaded worker
  always accepts, so a single worker, or all of them busy, behave as gunicorn does: health
  checks and refusals are still answered at once by a free thread.
- A worker holding at least `SPREAD` more requests than the least loaded one answers with
  `Connection: close`, so that client's next connection is accepted where there is room.

A stopping worker (max_requests reached, SIGTERM, a reload) takes no new connection and closes
its copies of the listening sockets at once (`set_accept_enabled`), so that after the master has
closed its own on shutdown a new connection is refused rather than queued and reset.

Only public-looking methods of gunicorn 27's `ThreadWorker` are overridden (`accept`,
`enqueue_req`, `handle`, `load_wsgi`, `wait_for_and_dispatch_events`, `set_accept_enabled`, `run`
and the `max_keepalived` attribute); pyproject pins gunicorn 27.x, and
`tests/web/test_balance.py` checks the rule on a real server.
"""

from __future__ import annotations

import ctypes
import os
import threading
from multiprocessing.sharedctypes import RawArray

from gunicorn.workers.gthread import ThreadWorker

__all__ = ["RECHECK_S", "SLOTS", "SPREAD", "BalancedThreadWorker", "LoadTable"]

SLOTS = 256  # workers alive at once, old and new during a reload included
RECHECK_S = 0.005  # how often a worker that left the listener looks whether it should take it
SPREAD = 2  # requests above the least loaded worker at which a kept-alive connection is closed

_FREE, _RESERVED = 0, -1  # pid column: no worker / claimed in the master, not yet forked
_CLOSED = -1  # load column: the worker is stopping and accepts nothing


class LoadTable:
    """Per worker slot: its pid and its load (requests held), in memory shared across forks.

    Each worker writes only its own slot (under its own lock); the others only read, so no lock
    is shared: a read that races a write sees the old or the new count, both true a moment
    ago."""

    def __init__(self, slots: int = SLOTS):
        # RawArray lives in an anonymous shared mapping: children forked later share it.
        self.pids = RawArray(ctypes.c_long, slots)
        self.loads = RawArray(ctypes.c_long, slots)
        self.top = RawArray(ctypes.c_long, 1)  # slots above this were never claimed

    def claim(self) -> int:
        """A free slot for a worker about to be forked (called in the master, one at a time).
        A slot whose worker has died is free again."""
        for k in range(len(self.pids)):
            pid = self.pids[k]
            if pid == _FREE or (pid > 0 and not _alive(pid)):
                self.pids[k], self.loads[k] = _RESERVED, 0
                self.top[0] = max(self.top[0], k + 1)
                return k
        raise RuntimeError(f"more than {len(self.pids)} gunicorn workers at once")

    def enter(self, slot: int, pid: int) -> None:
        self.pids[slot], self.loads[slot] = pid, 0

    def leave(self, slot: int) -> None:
        self.loads[slot], self.pids[slot] = _CLOSED, _FREE

    def least_other(self, slot: int) -> int | None:
        """The lowest load among the other live workers that accept connections; None if none."""
        best = None
        for k in range(self.top[0]):
            pid = self.pids[k]
            if pid == _FREE:
                continue
            load = self.loads[k]
            if k == slot or pid == _RESERVED or load == _CLOSED or not _alive(pid):
                continue
            best = load if best is None else min(best, load)
        return best


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# One table per master: created when gunicorn imports this worker class, before any fork.
TABLE = LoadTable()


class BalancedThreadWorker(ThreadWorker):
    """gunicorn's gthread worker with the load rule of this module's docstring."""

    def __init__(self, *args, **kwargs):
        self._load_lock = threading.Lock()
        self._held: set[int] = set()  # the connections this worker counts as its load
        self._from_accept = False
        self.slot = TABLE.claim()  # runs in the master, before the fork
        self._configured_keepalived = 0
        self._left_listener = False
        super().__init__(*args, **kwargs)

    # gunicorn sets this in __init__ and compares the kept-alive connections with it before each
    # response; 0 makes the response close the connection.
    @property
    def max_keepalived(self) -> int:
        least = TABLE.least_other(self.slot)
        if least is not None and self.load - least >= SPREAD:
            return 0
        return self._configured_keepalived

    @max_keepalived.setter
    def max_keepalived(self, value: int) -> None:
        self._configured_keepalived = value

    def run(self):
        TABLE.enter(self.slot, os.getpid())
        try:
            super().run()
        finally:
            TABLE.leave(self.slot)

    def _should_accept(self) -> bool:
        least = TABLE.least_other(self.slot)
        return least is None or self.load <= least

    def set_accept_enabled(self, enabled):
        super().set_accept_enabled(enabled)
        if not self.alive:  # stopping: let the others stop counting on this one
            TABLE.loads[self.slot] = _CLOSED
            self._close_listeners()

    def _close_listeners(self):
        # gunicorn closes a stopping worker's copies of the listening sockets only once it has
        # answered everything it holds. On shutdown the master has closed its own already, so
        # until then the kernel would still queue new connections that nobody will accept,
        # and reset them seconds later; closed now, a new connection is refused at once. When
        # one worker is replaced (max_requests, a reload) the master's copy keeps the socket
        # listening for the others.
        for listener in self.sockets:
            listener.close()

    def accept(self, listener):
        if not self.alive:  # stopping: leave it in the backlog for the others
            return
        if self._should_accept():
            self._from_accept = True
            try:
                super().accept(listener)
            finally:
                self._from_accept = False
            return
        # Leave the connection to a less loaded worker (it sees the same listener).
        self._left_listener = True
        self.set_accept_enabled(False)

    def wait_for_and_dispatch_events(self, timeout):
        # gunicorn's loop registers the listener again before every wait; keep it away while
        # another worker has less to do, and look again soon.
        if self._left_listener and self.alive:
            if self._should_accept():
                self._left_listener = False
            else:
                self.set_accept_enabled(False)
                timeout = min(timeout, RECHECK_S)
        super().wait_for_and_dispatch_events(timeout)

    @property
    def load(self) -> int:
        """The requests this worker holds."""
        return len(self._held)

    def _count(self, sock, held: bool) -> None:
        with self._load_lock:  # the main thread and the request threads count
            if held:
                self._held.add(id(sock))
            else:
                self._held.discard(id(sock))
            if self.alive:
                TABLE.loads[self.slot] = len(self._held)

    def enqueue_req(self, conn):
        # A new connection counts from its accept, so that a burst of connections spreads
        # before any of them has sent a request. A kept-alive one counts only from the moment a
        # request reaches the application (`load_wsgi`): most often it wakes to be closed.
        if self._from_accept:
            self._count(conn.sock, True)
        super().enqueue_req(conn)

    def handle(self, conn):
        try:
            return super().handle(conn)
        finally:  # no response (a bad request line, a client gone): counted out here
            self._count(conn.sock, False)

    def load_wsgi(self):
        super().load_wsgi()
        app = self.wsgi

        # A request is counted out when the application returns its response, before gunicorn
        # writes it: a client must never find this worker still counting the request it has
        # already been answered for, or a worker that is really busy could look no busier.
        def counted(environ, start_response):
            self._count(environ.get("gunicorn.socket"), True)
            try:
                return app(environ, start_response)
            finally:
                self._count(environ.get("gunicorn.socket"), False)

        self.wsgi = counted
