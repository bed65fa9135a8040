"""A gunicorn of the project's service on a free loopback port, for the HTTP benchmarks.

A script that talks to the service takes the same options (`add_server_args`) and either uses a
running server (`--url`) or starts one here for the length of a `with serve(...)` block:

    ap = parser(__doc__)
    add_server_args(ap)
    args = ap.parse_args()
    with serve(**server_options(args)) as server:
        ...  # requests to server.url; server.proc is None for a server given by --url
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on at the time of the call."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_gunicorn(
    workers: int,
    *,
    model_path: str | None = None,
    models_dir: str | None = None,
    log: Path | None = None,
    worker_class: str | None = None,
    models: str | None = None,
) -> tuple[subprocess.Popen, str]:
    """Start `gunicorn wsgi:app` with the project's config (gunicorn.conf.py, `--preload`, access
    log off) on a free loopback port and wait until /readyz answers 200; returns the process and
    its base URL (no trailing slash).

    `model_path`, `models_dir` and `models` set FLUENCY_MODEL_PATH, FLUENCY_MODELS_DIR and
    FLUENCY_MODELS (several bundles served, comma-separated, the first the default); `log` is a
    file for gunicorn's output (default: discarded); `worker_class` overrides the config's.
    Exits with gunicorn's reason when it cannot start, or after 120 s without being ready."""
    port = free_port()
    env = dict(os.environ, FLUENCY_ACCESS_LOG="0")
    if model_path:
        env["FLUENCY_MODEL_PATH"] = model_path
    if models_dir:
        env["FLUENCY_MODELS_DIR"] = models_dir
    if models:
        env["FLUENCY_MODELS"] = models
    gunicorn = str(Path(sys.executable).parent / "gunicorn")
    cmd = [gunicorn, "--config", str(ROOT / "gunicorn.conf.py"), "--workers", str(workers)]
    cmd += ["--bind", f"127.0.0.1:{port}", "--preload", "wsgi:app"]
    if worker_class:
        cmd += ["--worker-class", worker_class]
    out = log.open("w") if log else subprocess.DEVNULL
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    wait_ready(proc, url, log)
    return proc, url


def wait_ready(proc: subprocess.Popen, url: str, log: Path | None = None) -> None:
    """Wait until the gunicorn `proc` answers 200 at `url`/readyz; exits with its reason (`log`:
    its output file) when it dies or refuses, or after 120 s."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            detail = f":\n{log.read_text()}" if log else ""
            raise SystemExit(f"gunicorn exited with {proc.returncode}{detail}")
        try:
            ready = requests.get(url + "/readyz", timeout=1)
        except requests.ConnectionError:
            time.sleep(0.3)
            continue
        if ready.status_code == 200:
            return
        stop_gunicorn(proc)
        raise SystemExit(f"server not ready: {ready.json().get('detail')}")
    proc.kill()
    raise SystemExit("gunicorn not ready after 120 s")


def stop_gunicorn(proc: subprocess.Popen, timeout: float = 30.0) -> None:
    """SIGTERM (gunicorn's graceful shutdown: workers finish their requests) and wait for the
    master to exit; raises subprocess.TimeoutExpired after `timeout` seconds."""
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=timeout)


@dataclass(frozen=True)
class Server:
    """The service a benchmark talks to: its base URL (no trailing slash) and, when started
    here, the gunicorn master's process (None for a server given by URL)."""

    url: str
    proc: subprocess.Popen | None = None

    @property
    def pid(self) -> int | None:
        """The gunicorn master's process id, None for a server given by URL."""
        return None if self.proc is None else self.proc.pid


@contextmanager
def serve(
    url: str | None = None,
    *,
    workers: int = 2,
    model_path: str | None = None,
    models_dir: str | None = None,
    log: Path | None = None,
    worker_class: str | None = None,
    stop_timeout: float = 30.0,
    models: str | None = None,
) -> Iterator[Server]:
    """The server at `url`, or with no `url` a gunicorn started here (`start_gunicorn`'s
    arguments) and stopped on leaving the block (`stop_gunicorn`, `stop_timeout`)."""
    if url:
        yield Server(url.rstrip("/"))
        return
    proc, base = start_gunicorn(
        workers,
        model_path=model_path,
        models_dir=models_dir,
        log=log,
        worker_class=worker_class,
        models=models,
    )
    try:
        yield Server(base, proc)
    finally:
        stop_gunicorn(proc, stop_timeout)


def add_server_args(ap: argparse.ArgumentParser, *, workers: int = 2) -> None:
    """The options of a script that talks to the service: `--url` (a running server) or
    `--model-path`, `--models`, `--models-dir` and `--workers` for a gunicorn started here."""
    ap.add_argument("--url", help="a running server; default: start gunicorn here")
    ap.add_argument("--model-path", help="FLUENCY_MODEL_PATH for the server started here")
    ap.add_argument(
        "--models",
        help="FLUENCY_MODELS for the server started here: several bundles, comma-separated, the "
        "first the default",
    )
    ap.add_argument("--models-dir", help="FLUENCY_MODELS_DIR for the server started here")
    ap.add_argument(
        "--workers", type=int, default=workers, help="gunicorn workers for the server started here"
    )


def server_options(args: argparse.Namespace) -> dict:
    """`serve`'s keyword arguments from the options `add_server_args` added."""
    return {
        "url": args.url,
        "workers": args.workers,
        "model_path": args.model_path,
        "models_dir": args.models_dir,
        "models": args.models,
    }
