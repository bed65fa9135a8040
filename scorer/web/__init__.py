"""The Flask app factory: configuration, the served model, the /v1 API, errors, logs, metrics.

Configuration: `scorer.config.DEFAULTS`, then `FLUENCY_*` environment variables, then the
`config` mapping. The model bundles (MODELS, else MODEL_PATH) and the spaCy pipeline load
here, once per process, before the first request. Under `gunicorn --preload` that is once in
the master, and the workers share them copy-on-write (gunicorn.conf.py keeps torch and BLAS
single-threaded so that is safe after fork). A missing or broken bundle does not stop the
process: /healthz answers, /readyz and the scoring endpoints answer 503 with the reason, and an
admin reload can fix it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from flask import Flask

from features.parsing import use_memory_zones
from scorer.config import from_env
from scorer.scoring import FluencyScorer
from scorer.web import api, errors, logs, metrics, page
from scorer.web import explain as explain_api
from scorer.web.openapi import build_spec
from scorer.web.state import ModelHolder

__all__ = ["create_app"]


def create_app(
    config: Mapping[str, Any] | None = None, *, scorer: FluencyScorer | None = None
) -> Flask:
    """`scorer`: serve this already-built scorer instead of loading MODELS / MODEL_PATH."""
    app = Flask(__name__)
    app.config.from_mapping(from_env())
    master = os.environ.get("FLUENCY_GUNICORN_MASTER_PID")  # set by gunicorn.conf.py post_fork
    app.config["GUNICORN_MASTER_PID"] = int(master) if master and master.isdigit() else None
    app.config.from_mapping(config or {})
    app.json.sort_keys = False  # keep the documented field order
    use_memory_zones(app.config["SPACY_MEMORY_ZONES"])  # for the whole process (features.parsing)

    holder = ModelHolder(app.config, scorer=scorer)
    if scorer is None:
        holder.load_initial()
    app.extensions["fluency"] = holder

    @app.get("/healthz")
    def healthz():
        return {"status": "ok"}

    @app.get("/readyz")
    def readyz():
        loaded = holder.get()
        return {"status": "ready", "model": loaded.scorer.name, "models": list(loaded.models)}

    @app.get("/openapi.json")
    def openapi():
        return build_spec(app.config, holder.names(), holder.genres())

    app.register_blueprint(api.bp, url_prefix="/v1")
    app.register_blueprint(explain_api.bp, url_prefix="/v1")
    app.register_blueprint(page.bp)
    errors.register(app)
    logs.register(app)
    metrics.register(app)
    return app
