"""The model a process serves, and how it is replaced without dropping a request.

A `ModelHolder` owns one `Loaded` value (scorer, bundle path, load time). A request reads it
once, at its start, and uses that object to the end, so a swap halfway through a request never
mixes two models. `reload` builds the new scorer completely (bundle checks, spaCy pipeline and
resources, one warm-up sentence through the whole path) before one attribute assignment makes
it current; if anything fails the old value stays and the error is raised.

Under gunicorn each worker is its own process with its own holder. `request_reload` makes all
of them agree: it records the bundle to serve in a file named after the gunicorn master and
sends the master SIGHUP; the master's `on_reload` hook (gunicorn.conf.py) loads that bundle
(into the preloaded app) and forks fresh workers from it, while the old workers finish their
requests and exit. Gunicorn's graceful worker replacement is what makes this downtime-free.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import tempfile
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from features.placeholders import DEFAULT_PLACEHOLDERS, parse_placeholders
from scorer.errors import ModelLoadError, ScorerError
from scorer.scoring import FluencyScorer, load_scorer

__all__ = ["Loaded", "ModelHolder", "NotReadyError", "consume_reload_target", "request_reload"]

logger = logging.getLogger(__name__)
WARM_UP = "The committee will meet again next week to discuss the budget."


class NotReadyError(ScorerError):
    """No model is being served (missing or broken bundle at start-up)."""


@dataclass(frozen=True)
class Loaded:
    scorer: FluencyScorer
    path: str
    loaded_at: float  # Unix time

    def summary(self) -> dict[str, Any]:
        card = self.scorer.card
        return {
            "name": self.scorer.name,
            "path": self.path,
            "model_sha256": card.get("model_sha256"),
            "features": card.get("features", []),
            "placeholders": list(self.scorer.placeholders),
            "loaded_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.loaded_at)),
        }


class ModelHolder:
    """The served model of one process; `current` is replaced whole, never mutated."""

    def __init__(self, config: Mapping[str, Any], scorer: FluencyScorer | None = None):
        self.models_dir = str(config["MODELS_DIR"])
        self.spacy_model = config.get("SPACY_MODEL")
        self.cache_size = int(config.get("FEATURE_CACHE", 0))  # per model: a reload empties it
        self.placeholders = parse_placeholders(config.get("PLACEHOLDERS", DEFAULT_PLACEHOLDERS))
        self.path = str(config["MODEL_PATH"])
        self.current: Loaded | None = None
        self.error: str | None = None
        self._lock = threading.Lock()  # one reload at a time; readers never wait
        if scorer is not None:
            self.current = Loaded(scorer, "<injected>", time.time())

    def get(self) -> Loaded:
        current = self.current  # one read: the request keeps this value to its end
        if current is None:
            raise NotReadyError(self.error or "no model loaded")
        return current

    def load_initial(self) -> None:
        """Load at start-up; a failure leaves the process up but not ready (/readyz 503)."""
        try:
            self.reload(self.path)
        except ScorerError as exc:
            self.error = f"model {self.path} not loaded: {exc}"
            logger.error("%s", self.error)

    def reload(self, path: str | None = None) -> Loaded:
        """Load `path` (default: the bundle served now) fully, then swap it in."""
        path = str(path or (self.current.path if self.current else self.path))
        with self._lock:
            started = time.perf_counter()
            scorer = load_scorer(
                path,
                models_dir=self.models_dir,
                spacy_model=self.spacy_model,
                cache_size=self.cache_size,
                placeholders=self.placeholders,
            )
            try:
                # Loads spaCy and every resource the features use, before any request needs them.
                scorer.score([WARM_UP])
            except Exception as exc:  # a bundle that cannot score must not be swapped in
                raise ModelLoadError(
                    f"model {path} loaded but cannot score ({type(exc).__name__}: {exc})"
                ) from exc
            loaded = Loaded(scorer, path, time.time())
            self.current, self.path, self.error = loaded, path, None
        logger.info(
            "serving model %s from %s (loaded in %.2f s)",
            scorer.name,
            path,
            time.perf_counter() - started,
        )
        return loaded


def _target_file(master_pid: int) -> Path:
    return Path(tempfile.gettempdir()) / f"fluency-reload-{master_pid}.json"


def request_reload(master_pid: int, path: str) -> None:
    """Ask the gunicorn master to serve `path` in every worker (see the module docstring)."""
    target = _target_file(master_pid)
    tmp = target.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"model_path": path}))
    os.replace(tmp, target)  # atomic: the master never reads half a file
    os.kill(master_pid, signal.SIGHUP)


def consume_reload_target(master_pid: int) -> str | None:
    """The bundle a worker asked the master to serve, if any; the request file is removed.

    Only a file owned by this user counts. The path still goes through `load_model`'s checks
    (inside the models directory, hash matching its card) before anything is loaded.
    """
    target = _target_file(master_pid)
    try:
        if target.stat().st_uid != os.getuid():
            logger.warning("ignoring %s: not owned by this user", target)
            return None
        data = json.loads(target.read_text())
        target.unlink()
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        logger.warning("ignoring unreadable reload request %s: %s", target, exc)
        return None
    path = data.get("model_path") if isinstance(data, dict) else None
    return path if isinstance(path, str) else None
