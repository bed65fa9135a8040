"""The models a process serves, and how they are replaced without dropping a request.

A `ModelHolder` owns one `Loaded` value: the bundles of MODELS (else MODEL_PATH alone), loaded
together so that bundles on the same GLEU base share their resources and feature rows
(`scorer.bundles`), the first the default, and the load time. A request reads it once, at its
start, picks the model it names (`Loaded.pick`) and uses that object to the end, so a swap
halfway through a request never mixes two models. `reload` builds the new set completely
(bundle checks, spaCy pipeline and resources, one warm-up sentence through each model) before
one attribute assignment makes it current; if anything fails the old value stays and the error
is raised. `reload(path)` makes that bundle the default: moved to the front if it is in the set,
else in the place of the old default.

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from features.placeholders import DEFAULT_PLACEHOLDERS, parse_placeholders
from scorer.bundle import bundle_folder
from scorer.bundles import configured_models, describe, load_scorers
from scorer.errors import InputError, ModelLoadError, ScorerError
from scorer.scoring import FluencyScorer

__all__ = [
    "Loaded",
    "ModelHolder",
    "NotReadyError",
    "UnavailableModelError",
    "UnknownModelError",
    "consume_reload_target",
    "request_reload",
]

logger = logging.getLogger(__name__)
WARM_UP = "The committee will meet again next week to discuss the budget."


class NotReadyError(ScorerError):
    """No model is being served (missing or broken bundle at start-up)."""


class UnavailableModelError(ScorerError):
    """A request named a configured model that failed to load here (503, with the reason)."""

    def __init__(self, name: str, reason: str):
        self.name, self.reason = name, reason
        super().__init__(f"model {name!r} is configured but could not be loaded: {reason}")


class UnknownModelError(InputError):
    """A request named a model that is not loaded (422, listing those that are)."""

    def __init__(self, name: str, names: Sequence[str]):
        self.names = list(names)
        super().__init__(
            f"no model {name!r} is loaded here; the loaded models are {', '.join(self.names)} "
            "(GET /v1/models)"
        )


@dataclass(frozen=True)
class Loaded:
    scorer: FluencyScorer  # the default model
    path: str  # its bundle
    loaded_at: float  # Unix time
    # Every model served, by name, the default first, and their bundles (same order).
    models: dict[str, FluencyScorer] = field(default_factory=dict)
    paths: tuple[str, ...] = ()
    # Configured bundles other than the default that failed to load: name -> why.
    failed: dict[str, str] = field(default_factory=dict)

    def __post_init__(self):
        if not self.models:
            object.__setattr__(self, "models", {self.scorer.name: self.scorer})
            object.__setattr__(self, "paths", (self.path,))

    def pick(self, name: str | None) -> FluencyScorer:
        """The model a request names, the default when it names none."""
        if name is None:
            return self.scorer
        found = self.models.get(name)
        if found is None and name in self.failed:
            raise UnavailableModelError(name, self.failed[name])
        if found is None:
            raise UnknownModelError(name, list(self.models))
        return found

    def summary(self) -> dict[str, Any]:
        card = self.scorer.card
        return {
            "name": self.scorer.name,
            "path": self.path,
            "model_sha256": card.get("model_sha256"),
            "features": card.get("features", []),
            "placeholders": list(self.scorer.placeholders),
            "loaded_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.loaded_at)),
            "models": list(self.models),
            "failed": dict(self.failed),
        }

    def listing(self) -> list[dict[str, Any]]:
        """`scorer.bundles.describe` of each model served, with its bundle and the default
        flagged."""
        return [
            {**describe(s), "default": s is self.scorer, "path": p}
            for s, p in zip(self.models.values(), self.paths, strict=True)
        ]


class ModelHolder:
    """The served model of one process; `current` is replaced whole, never mutated."""

    def __init__(self, config: Mapping[str, Any], scorer: FluencyScorer | None = None):
        self.models_dir = str(config["MODELS_DIR"])
        self.spacy_model = config.get("SPACY_MODEL")
        self.cache_size = int(config.get("FEATURE_CACHE", 0))  # per model: a reload empties it
        self.placeholders = parse_placeholders(config.get("PLACEHOLDERS", DEFAULT_PLACEHOLDERS))
        self.paths = configured_models(config)
        self.path = self.paths[0]
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

    def names(self) -> list[str]:
        """The models served (the configured bundles' folder names before any is loaded)."""
        current = self.current
        return list(current.models) if current else [Path(p).name for p in self.paths]

    def genres(self) -> list[str] | None:
        """Every genre a request may name with some model served: "general" (a bundle's own
        head, which `FluencyScorer.for_genre` gives every bundle), then each one's genre heads
        (`FluencyScorer.genres`) in order of first appearance; None before any is loaded."""
        current = self.current
        if current is None:
            return None
        named = (g for s in current.models.values() for g in s.genres)
        return list(dict.fromkeys(["general", *named]))

    def load_initial(self) -> None:
        """Load at start-up; a failure leaves the process up but not ready (/readyz 503)."""
        try:
            self.reload()
        except ScorerError as exc:
            self.error = f"model {', '.join(self.paths)} not loaded: {exc}"
            logger.error("%s", self.error)

    def _set_for(self, path: str | None) -> list[str]:
        """The bundles to load: those served now, with `path` made the default (module doc)."""
        paths = list(self.current.paths if self.current else self.paths)
        if path is None:
            return paths

        def where(p: str) -> Path:
            return bundle_folder(p, self.models_dir).resolve()

        target = where(path)
        rest = paths if any(where(p) == target for p in paths) else paths[1:]
        return [path, *(p for p in rest if where(p) != target)]

    def reload(self, path: str | None = None) -> Loaded:
        """Load the set (`path`: the new default, see the module doc) fully, then swap it in."""
        paths = [str(p) for p in self._set_for(str(path) if path else None)]
        with self._lock:
            started = time.perf_counter()
            models, kept, failed = self._load_set(paths)
            default = next(iter(models.values()))
            loaded = Loaded(default, kept[0], time.time(), models, tuple(kept), failed)
            self.current, self.path, self.paths, self.error = loaded, paths[0], paths, None
        logger.info(
            "serving model%s %s (default %s) from %s (loaded in %.2f s)",
            "s" if len(models) > 1 else "",
            ", ".join(models),
            default.name,
            ", ".join(paths),
            time.perf_counter() - started,
        )
        return loaded

    def _load_set(self, paths: list[str]) -> tuple[dict[str, FluencyScorer], list[str], dict]:
        """Load and warm up the bundles of `paths`. The default (the first) must load; another
        that cannot (a missing runtime, corrupt weights) is left out, logged and kept in
        `failed`, so the rest keep serving and a request naming it is told why."""
        failed: dict[str, str] = {}
        kept = list(paths)
        while True:
            try:
                models = self._load(kept)
                break
            except ScorerError as exc:
                culprit = self._culprit(kept, exc)
                if culprit is None or culprit == kept[0]:
                    raise
                name = Path(culprit).name
                failed[name] = str(exc)
                logger.error("model %s left out: %s", name, exc)
                kept.remove(culprit)
        return models, kept, failed

    def _load(self, paths: list[str]) -> dict[str, FluencyScorer]:
        models = load_scorers(
            paths,
            models_dir=self.models_dir,
            spacy_model=self.spacy_model,
            cache_size=self.cache_size,
            placeholders=self.placeholders,
        )
        for (name, scorer), path in zip(models.items(), paths, strict=True):
            try:
                # Loads spaCy and every resource the features use, before any request.
                scorer.score([WARM_UP])
            except Exception as exc:  # a bundle that cannot score must not be swapped in
                raise _BundleError(
                    path, f"model {name} loaded but cannot score ({type(exc).__name__}: {exc})"
                ) from exc
        return models

    def _culprit(self, paths: list[str], exc: ScorerError) -> str | None:
        """The bundle of `paths` that raised `exc`: named by a failed warm-up, else the first
        that fails to load alone."""
        if isinstance(exc, _BundleError):
            return exc.path
        for path in paths:
            try:
                load_scorers(
                    [path],
                    models_dir=self.models_dir,
                    spacy_model=self.spacy_model,
                    placeholders=self.placeholders,
                )
            except ScorerError:
                return path
        return None


class _BundleError(ModelLoadError):
    def __init__(self, path: str, message: str):
        self.path = path
        super().__init__(message)


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
