"""A gunicorn of the project's service on a free loopback port, for the HTTP benchmarks."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent


def start_gunicorn(
    workers: int,
    *,
    model_path: str | None = None,
    models_dir: str | None = None,
    log: Path | None = None,
    worker_class: str | None = None,
) -> tuple[subprocess.Popen, str]:
    """Start `gunicorn wsgi:app` with the project's config and wait until /readyz answers 200;
    returns the process and its base URL. Exits with gunicorn's reason when it cannot start."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, FLUENCY_ACCESS_LOG="0")
    if model_path:
        env["FLUENCY_MODEL_PATH"] = model_path
    if models_dir:
        env["FLUENCY_MODELS_DIR"] = models_dir
    gunicorn = str(Path(sys.executable).parent / "gunicorn")
    cmd = [gunicorn, "--config", str(ROOT / "gunicorn.conf.py"), "--workers", str(workers)]
    cmd += ["--bind", f"127.0.0.1:{port}", "--preload", "wsgi:app"]
    if worker_class:
        cmd += ["--worker-class", worker_class]
    out = log.open("w") if log else subprocess.DEVNULL
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
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
            return proc, url
        proc.send_signal(signal.SIGTERM)
        raise SystemExit(f"server not ready: {ready.json().get('detail')}")
    proc.kill()
    raise SystemExit("gunicorn not ready after 120 s")
