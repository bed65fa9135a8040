"""Defaults, in one place. Environment (FLUENCY_*) and explicit arguments override them.

Only `scorer/cli.py` and `scorer/web/__init__.py` read the environment (see `from_env`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from features.parsing import DEFAULT_MODELS
from features.resources import MODELS_DIR
from scorer.errors import ScorerError

__all__ = ["DEFAULTS", "from_env"]

DEFAULTS: dict[str, Any] = {
    # spaCy pipelines tried in order; the first one installed wins.
    "SPACY_MODEL": ",".join(DEFAULT_MODELS),
    "MODELS_DIR": str(MODELS_DIR),
    "MODEL_PATH": str(MODELS_DIR / "default"),
    # Several bundles served at once, comma-separated names under MODELS_DIR (or folders); the
    # first is the default, a request names another with "model". Unset: MODEL_PATH alone.
    # Bundles on the same GLEU base share the LM, the parsers and the rows (scorer/bundles.py).
    "MODELS": "",
    "MAX_BATCH": 64,  # sentences / candidates per request
    "MAX_CHARS": 2000,  # characters per sentence
    "MAX_CONTENT_LENGTH": 1_000_000,  # bytes per request body
    "SEED": 12345,
    # Feature rows (~2.5 kB each) kept per process, keyed by exact text and feature-set version
    # (LRU; 0: off).
    # A repeated candidate then costs no parsing at all (scorer/scoring.py, FeatureCache).
    "FEATURE_CACHE": 4096,
    # Delexicalised slot placeholders ("X is a restaurant near X ."), comma-separated, read as
    # a name before parsing (features/placeholders.py); empty: off.
    "PLACEHOLDERS": "X",
    # Service (scorer/web): references per segment / rerank call, access logs, admin API.
    "MAX_REFERENCES": 16,
    "LOG_TEXT": False,  # FLUENCY_LOG_TEXT=1 puts request bodies into the access log
    "ACCESS_LOG": True,  # one JSON line per request on stderr
    "ADMIN_TOKEN": None,  # bearer token for POST /v1/admin/reload; unset: the endpoint is off
    # GET /metrics, Prometheus text (scorer/web/metrics.py): counts, latencies, memory, the model;
    # never request text. FLUENCY_METRICS=0 turns it off (404).
    "METRICS": True,
    # Cost of one request, refused (422) before any work (scorer/limits.py). Tokens are counted
    # before parsing: word-character runs and single punctuation characters.
    "MAX_ALIGN_TOKENS": 250,  # tokens per text aligned for the string and tree accuracies
    "MAX_PAIRS": 1024,  # candidates x references (rerank), references summed (accuracy)
    "MAX_ALIGN_WORK": 5_000_000,  # sum over aligned pairs of tokens x tokens (~1 s of work)
    "MAX_REQUEST_TOKENS": 20_000,  # tokens of all the texts of one request
    "JSON_DEPTH": 16,  # nesting of arrays and objects in a body (400 deeper)
    # Time and queueing (scorer/web/work.py): work past its deadline stops with 503; each worker
    # runs one scoring request at a time and lets at most MAX_QUEUE more wait for it (503 beyond).
    "REQUEST_TIMEOUT": 20,  # seconds per request, below gunicorn's worker timeout
    "MAX_QUEUE": 32,  # scoring requests waiting per worker (gunicorn.conf.py: threads = 40)
    "RELOAD_INTERVAL": 10,  # seconds between two admin reloads a worker accepts (429 sooner)
    # Memory over weeks (docs/service.md, "Memory and recycling"). spaCy keeps every new word it
    # parses; inside its memory zones what a request added is freed at its end
    # (features/parsing.py, `use_memory_zones`).
    "SPACY_MEMORY_ZONES": True,
    # gunicorn's max_requests and max_requests_jitter (gunicorn.conf.py): a worker is replaced
    # after MAX_REQUESTS requests plus up to JITTER more (so workers do not all go at once),
    # finishing what it holds first; forked from the preloaded master, the new one is at once
    # ready. 0: never.
    "MAX_REQUESTS": 1000,
    "MAX_REQUESTS_JITTER": 100,
}

_INTS = {
    "MAX_BATCH",
    "MAX_CHARS",
    "MAX_CONTENT_LENGTH",
    "SEED",
    "MAX_REFERENCES",
    "FEATURE_CACHE",
    "MAX_ALIGN_TOKENS",
    "MAX_PAIRS",
    "MAX_ALIGN_WORK",
    "MAX_REQUEST_TOKENS",
    "JSON_DEPTH",
    "REQUEST_TIMEOUT",
    "MAX_QUEUE",
    "RELOAD_INTERVAL",
    "MAX_REQUESTS",
    "MAX_REQUESTS_JITTER",
}
_NON_NEGATIVE = {
    "SEED",
    "FEATURE_CACHE",
    "MAX_QUEUE",
    "RELOAD_INTERVAL",
    "MAX_REQUESTS",
    "MAX_REQUESTS_JITTER",
}
_BOOLS = {"LOG_TEXT", "ACCESS_LOG", "METRICS", "SPACY_MEMORY_ZONES"}
_TRUE, _FALSE = {"1", "true", "yes", "on"}, {"0", "false", "no", "off", ""}


def from_env(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """DEFAULTS overridden by FLUENCY_<KEY> variables; bad values fail here, at start-up."""
    environ = os.environ if environ is None else environ
    config = dict(DEFAULTS)
    for key in DEFAULTS:
        raw = environ.get(f"FLUENCY_{key}")
        if raw is None:
            continue
        if key in _INTS:
            try:
                config[key] = int(raw)
            except ValueError:
                raise ScorerError(f"FLUENCY_{key}={raw!r} is not an integer") from None
            if config[key] < 0 or (config[key] == 0 and key not in _NON_NEGATIVE):
                raise ScorerError(f"FLUENCY_{key}={raw!r} must be positive")
        elif key in _BOOLS:
            if raw.strip().lower() not in _TRUE | _FALSE:
                raise ScorerError(f"FLUENCY_{key}={raw!r} is not a boolean; use 1 or 0")
            config[key] = raw.strip().lower() in _TRUE
        else:
            config[key] = raw
    return config
