"""The OpenAPI 3.1 description served at /openapi.json: its paths and responses here, the
schemas of the bodies in scorer/web/schemas.py.

Written by hand, next to the views, and held to them by tests/web/test_openapi.py: every
documented path, method and status is requested there and each answer is validated against
its schema (OpenAPI 3.1 schemas are JSON Schema 2020-12).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from scorer.web.schemas import ref, schemas

__all__ = ["build_spec"]


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _problem(description: str) -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/problem+json": {"schema": ref("Problem")}},
    }


_ERRORS_POST = {
    "400": _problem(
        "Body is not a JSON object, has an unknown field, a field's type is wrong (null "
        "included: leave a field out for its default), or nests deeper than JSON_DEPTH"
    ),
    "413": _problem("Body (decoded, if gzip) larger than MAX_CONTENT_LENGTH bytes"),
    "415": _problem("Content-Encoding other than identity or gzip"),
    "422": _problem(
        "Well-formed but not accepted: empty list, too many items, a text empty, whitespace, "
        "too long or holding control characters, unknown or unusable weight, top_k < 1; "
        "a `model` that is not loaded (type /problems/unknown-model, with `models`: those "
        "loaded); a `genre` the model has no head for (type /problems/unknown-genre, with "
        "`genres`: those it has, and why in `detail`); or over a cost limit (type "
        "/problems/too-costly, with `limit` and `limit_value`: MAX_ALIGN_TOKENS, MAX_PAIRS, "
        "MAX_ALIGN_WORK, MAX_REQUEST_TOKENS). Token limits are "
        "counted on the texts and cannot be said in JSON Schema"
    ),
}
_METRICS = {
    "get": {
        "summary": "Prometheus metrics of every worker (off, 404, with FLUENCY_METRICS=0); "
        "no request text",
        "responses": {
            "200": {
                "description": "Prometheus text format (OpenMetrics when the Accept header "
                "asks for it)",
                "content": {"text/plain": {"schema": {"type": "string"}}},
            }
        },
    }
}
_BUSY = (
    "Stopped at REQUEST_TIMEOUT (/problems/deadline-exceeded) or this worker's queue is full "
    "(/problems/busy); Retry-After says when to try again"
)


def _post(summary: str, request: str, response: str, extra: dict | None = None) -> dict:
    return {
        "post": {
            "summary": summary,
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": ref(request)}},
            },
            "responses": {
                "200": _json(ref(response), "OK"),
                **_ERRORS_POST,
                **(extra or {}),
            },
        }
    }


def build_spec(
    cfg: Mapping[str, Any], models: Sequence[str] = (), genres: Sequence[str] | None = None
) -> dict[str, Any]:
    """The document for the settings `cfg`, the names of the `models` served and the `genres`
    their heads are for (None: not loaded yet)."""
    not_ready = {"503": _problem("No model loaded (see /readyz)")}
    busy = {
        "503": _problem(
            f"No model loaded (see /readyz); or: {_BUSY}; or: the `model` named is configured "
            "but failed to load (type /problems/model-unavailable, with the reason)"
        )
    }
    reload_ = _post(
        "Load a model bundle fully, then swap it in (every gunicorn worker)",
        "ReloadRequest",
        "ReloadResponse",
        {
            "401": _problem("Missing or wrong bearer token"),
            "403": _problem("Admin API disabled: FLUENCY_ADMIN_TOKEN unset"),
            "409": _problem("A reload is pending or running; Retry-After"),
            "422": _problem("Bundle missing, corrupt or unusable; the old model stays"),
            "429": _problem("Sooner than RELOAD_INTERVAL after the last reload; Retry-After"),
        },
    )
    reload_["post"]["requestBody"]["required"] = False
    reload_["post"]["security"] = [{"bearer": []}]
    spec = {
        "openapi": "3.1.0",
        "info": {
            "title": "Fluency scorer",
            "version": "1.0.0",
            "description": "GLEU fluency (Mutton et al. 2007) and reference-based accuracy "
            "(Bangalore et al. 2000). Errors are RFC 9457 problem details.",
        },
        "paths": {
            "/v1/score": _post("Fluency of each sentence", "ScoreRequest", "ScoreResponse", busy),
            "/v1/rerank": _post(
                "Candidates best first by fluency and, with references, accuracy",
                "RerankRequest",
                "RerankResponse",
                busy,
            ),
            "/v1/explain": _post(
                "Why each text scores as it does: marked spans and feature contributions",
                "ExplainRequest",
                "ExplainResponse",
                busy,
            ),
            "/v1/accuracy": _post(
                "Every accuracy metric per pair and for the corpus",
                "AccuracyRequest",
                "AccuracyResponse",
                {"503": _problem(f"No parser loaded; or: {_BUSY}")},
            ),
            "/v1/models": {
                "get": {
                    "summary": "The models served (FLUENCY_MODELS), the default first; a "
                    "request names one with `model`",
                    "responses": {"200": _json(ref("ModelsResponse"), "OK"), **not_ready},
                }
            },
            "/v1/model": {
                "get": {
                    "summary": "The default model's card (lean: each head's decision and its "
                    "own held-out figures); with report=1 also every head's full held-out table",
                    "parameters": [
                        {
                            "name": "report",
                            "in": "query",
                            "required": False,
                            "description": "1: add `heads_report`, read from the bundle's "
                            "heads_report.json (about 0.2 MB for a shipped tier; the card "
                            "alone, 17 KB)",
                            "schema": {"enum": ["0", "1", "false", "true"], "default": "0"},
                        }
                    ],
                    "responses": {
                        "200": _json(ref("ModelResponse"), "OK"),
                        "400": _problem(
                            "`report` other than 0, 1, false or true (type /problems/invalid-query)"
                        ),
                        "500": _problem(
                            "report=1 and the bundle's heads_report.json is missing or not the "
                            "file its card names (type /problems/report-unavailable); the model "
                            "scores as usual"
                        ),
                        **not_ready,
                    },
                }
            },
            "/v1/admin/reload": reload_,
            "/": {
                "get": {
                    "summary": "A page to rank candidates and see why (HTML)",
                    "responses": {
                        "200": {
                            "description": "The page",
                            "content": {"text/html": {"schema": {"type": "string"}}},
                        }
                    },
                }
            },
            "/healthz": {
                "get": {
                    "summary": "The process is alive",
                    "responses": {"200": _json(ref("Health"), "OK")},
                }
            },
            "/readyz": {
                "get": {
                    "summary": "A model and the parser are loaded",
                    "responses": {"200": _json(ref("Ready"), "Ready"), **not_ready},
                }
            },
            "/openapi.json": {
                "get": {
                    "summary": "This document",
                    "responses": {"200": _json({"type": "object"}, "OpenAPI 3.1")},
                }
            },
        },
        "components": {
            "schemas": schemas(cfg, models, genres),
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "responses": {"NotFound": _problem("No such path (404); wrong method is 405")},
        },
    }
    if cfg.get("METRICS", True):
        spec["paths"]["/metrics"] = _METRICS
    return spec
