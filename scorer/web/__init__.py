"""The Flask app factory. The service issue fills in /v1; for now it answers health checks."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flask import Flask, jsonify

from scorer.config import from_env

__all__ = ["create_app"]


def create_app(config: Mapping[str, Any] | None = None) -> Flask:
    app = Flask(__name__)
    app.config.from_mapping(from_env())
    app.config.from_mapping(config or {})

    @app.get("/healthz")
    def healthz():
        return jsonify(status="ok")

    return app
