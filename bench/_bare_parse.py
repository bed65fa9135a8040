"""spaCy's bare parse behind the service's HTTP stack: the baseline `bench.load` times `/v1/rerank`
against, on the same lists, clients and workers, in the same run.

`POST /v1/rerank {"candidates": [...]}` parses the candidates with `nlp.pipe` and returns them
in their order with their token counts: the parse every fluency feature starts from, and nothing
else. The pipeline is `bench.score`'s "bare parse": PyTorch hidden, only tok2vec, tagger and
parser, thinc's default matrix library. As in the service (scorer/web/work.py), a process parses
one request at a time, and gunicorn runs it with the service's worker class (balanced gthread),
so the two differ only in what a request computes. `start` serves it for the length of a block.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

EXCLUDE = ["ner", "lemmatizer", "attribute_ruler"]


def _load():
    from features.parsing import DEFAULT_MODELS

    sys.modules.setdefault("torch", None)  # thinc imports PyTorch when it can; hide it
    import spacy

    for name in DEFAULT_MODELS:
        try:
            return spacy.load(name, exclude=EXCLUDE)
        except OSError:
            continue
    raise SystemExit(f"none of {DEFAULT_MODELS} is installed")


def create_app():
    from flask import Flask, request

    nlp = _load()
    lock = threading.Lock()
    app = Flask(__name__)

    @app.get("/healthz")
    @app.get("/readyz")
    def ready():
        return {"status": "ok"}

    @app.get("/v1/models")
    def models():
        return {"models": [{"name": "bare parse"}]}

    @app.post("/v1/rerank")
    def parse():
        candidates = request.get_json()["candidates"]
        with lock:
            docs = list(nlp.pipe(candidates))
        ranked = [{"index": i, "text": d.text, "n_tokens": len(d)} for i, d in enumerate(docs)]
        return {"model": "bare parse", "genre": None, "ranked": ranked}

    return app


@contextmanager
def start(workers: int) -> Iterator[str]:
    """This app under gunicorn (the service's worker class and threads, `workers` processes,
    preloaded) on a free loopback port; yields its base URL, stops it on leaving."""
    import os
    import subprocess
    import tempfile

    from bench._server import ROOT, free_port, stop_gunicorn, wait_ready

    port = free_port()
    gunicorn = str(Path(sys.executable).parent / "gunicorn")
    cmd = [gunicorn, "--workers", str(workers), "--threads", "40", "--preload"]
    cmd += ["--worker-class", "scorer.web.balance.BalancedThreadWorker"]
    cmd += ["--bind", f"127.0.0.1:{port}", "--pythonpath", str(ROOT)]
    cmd += ["bench._bare_parse:create_app()"]
    threads = {v: "1" for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    env = dict(os.environ, **threads)
    # Run from a folder without the project's gunicorn.conf.py: its hooks serve the fluency app.
    with tempfile.TemporaryDirectory() as cwd:
        proc = subprocess.Popen(
            cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        url = f"http://127.0.0.1:{port}"
        try:
            wait_ready(proc, url)
            yield url
        finally:
            stop_gunicorn(proc)
