"""A gunicorn server's processes seen from outside, for the benchmarks that watch it: its
workers, their resident memory, and its master found from the port it listens on."""

from __future__ import annotations

import time
from urllib.parse import urlsplit

__all__ = ["find_master", "rss_mib", "wait_for_workers", "worker_pids"]


def worker_pids(master: int) -> list[int]:
    """The gunicorn master's children (its workers), [] once it has gone."""
    try:
        with open(f"/proc/{master}/task/{master}/children") as fh:
            return [int(p) for p in fh.read().split()]
    except OSError:
        return []


def rss_mib(pid: int) -> float | None:
    """Resident memory of a process in MiB (VmRSS), None once it has gone."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def wait_for_workers(master: int, n: int, timeout: float = 60.0) -> list[int]:
    """The master's workers once `n` of them are up (the first answers /readyz while the others
    may still be forking: clients that connected then would all stay with the first)."""
    deadline = time.monotonic() + timeout
    while len(worker_pids(master)) < n and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(1.0)  # each enters the balancing table when its loop starts
    return worker_pids(master)


def find_master(url: str) -> int | None:
    """The pid of the gunicorn master listening on `url`'s port on this machine. psutil names one
    of the processes sharing the listening socket, master or worker; a worker's parent is the
    master, running the same gunicorn command."""
    try:
        import psutil
    except ImportError:
        return None
    port = urlsplit(url).port
    for c in psutil.net_connections(kind="tcp"):
        if c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port == port and c.pid:
            proc = psutil.Process(c.pid)
            parent = proc.parent()
            if parent is not None and parent.cmdline() == proc.cmdline():
                return parent.pid
            return proc.pid
    return None
