"""Helpers shared by the service tests: texts, the problem-details check, a gunicorn runner."""

from __future__ import annotations

import math
import os
import random
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[2]
ADMIN_TOKEN = "test-admin-token"
REAL = "The council plans to build new homes on the site of the old factory."
OTHER = "My grandfather grew tomatoes and beans in a small garden behind the house."


def shuffles(text: str, n: int, seed: int) -> list[str]:
    """`n` distinct word orders of `text` (its full stop kept at the end), none the original."""
    words, rng, out = text.rstrip(".").split(), random.Random(seed), []
    while len(out) < n:
        rng.shuffle(words)
        candidate = " ".join(words) + "."
        if candidate != text and candidate not in out:
            out.append(candidate)
    return out


def sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x))


def assert_problem(resp, status: int, slug: str) -> dict:
    """`resp` (Flask test response or requests.Response) is problem details with `status`."""
    assert resp.status_code == status, resp.text if hasattr(resp, "text") else resp.data
    content_type = resp.headers["Content-Type"]
    assert content_type.startswith("application/problem+json"), content_type
    body = resp.json() if callable(getattr(resp, "json", None)) else resp.get_json(force=True)
    assert body["type"] == f"/problems/{slug}" and body["status"] == status
    assert body["title"] and body["detail"] and body["instance"]
    assert body["request_id"] == resp.headers["X-Request-ID"]
    text = resp.text if hasattr(resp, "text") else resp.get_data(as_text=True)
    assert "Traceback" not in text
    return body


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    url: str
    proc: subprocess.Popen
    log: Path

    def log_lines(self) -> list[str]:
        return self.log.read_text(errors="replace").splitlines()


def start_server(models_dir: Path, log: Path, *, workers: int = 2, env: dict | None = None):
    port = free_port()
    environ = {
        **os.environ,
        "FLUENCY_MODELS_DIR": str(models_dir),
        "FLUENCY_MODEL_PATH": str(models_dir / "tiny"),
        "FLUENCY_MAX_BATCH": "12",
        "FLUENCY_MAX_CHARS": "300",
        "FLUENCY_MAX_REFERENCES": "3",
        "FLUENCY_MAX_CONTENT_LENGTH": "20000",
        "FLUENCY_ADMIN_TOKEN": ADMIN_TOKEN,
        "FLUENCY_RELOAD_INTERVAL": "0",
        "FLUENCY_MAX_ALIGN_TOKENS": "300",  # = MAX_CHARS: only the schema's limits bind
        **(env or {}),
    }
    environ.pop("FLUENCY_GUNICORN_MASTER_PID", None)
    cmd = [
        str(Path(sys.executable).parent / "gunicorn"),
        "--config",
        str(ROOT / "gunicorn.conf.py"),
        "--workers",
        str(workers),
        "--bind",
        f"127.0.0.1:{port}",
        "--preload",
        "wsgi:app",
    ]
    fh = log.open("w")
    proc = subprocess.Popen(cmd, cwd=ROOT, env=environ, stdout=fh, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"gunicorn exited with {proc.returncode}:\n{log.read_text()}")
        try:
            if requests.get(url + "/readyz", timeout=1).status_code == 200:
                return Server(url, proc, log)
        except requests.ConnectionError:
            pass
        time.sleep(0.2)
    stop_server(proc)
    raise RuntimeError(f"gunicorn not ready after 90 s:\n{log.read_text()}")


def stop_server(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
