"""Every error as problem details (RFC 9457), `application/problem+json`, never a traceback.

Body: `type` (a stable relative URI, `/problems/<slug>`, listed in docs/service.md), `title`,
`status`, `detail` (what was wrong and what to do), `instance` (the request path) and
`request_id` (the X-Request-ID of the request, also in the access log).

- `BodyError` (ours): the body is not JSON, or a field has the wrong type -> 400;
  `QueryError` (ours): a query parameter of the wrong value -> 400 `invalid-query`.
- `InputError` from the library: well-formed but not accepted (empty list, too many items,
  too long a text, a weight that needs references...) -> 422; a model not loaded
  (`UnknownModelError`) -> 422 `unknown-model`, with `models` (those loaded); a genre the model
  has no head for (`GenreError`) -> 422 `unknown-genre`, with `model` and `genres` (the heads
  it has), the reason in `detail`; `CostError`, over one of the cost limits -> 422
  `too-costly`, with `limit` (the setting) and `limit_value`.
- `NotReadyError`: no model loaded -> 503; a failed admin reload (`ModelLoadError`) -> 422.
- `ReportUnavailableError`: the model's heads_report.json, asked for, is missing or corrupt
  -> 500 `report-unavailable`, logged; the model scores as before.
- `UnavailableModelError`: a configured model that failed to load (the others serve) -> 503
  `model-unavailable`, with the reason and `model`.
- `DeadlineExceededError` (REQUEST_TIMEOUT) and `BusyError` (the worker's queue is full) -> 503
  with `Retry-After`: the work stopped, the worker goes on.
- An admin reload while one is pending (`ReloadPendingError`) -> 409; sooner than
  RELOAD_INTERVAL after the last (`RateLimitedError`) -> 429 with `Retry-After`.
- werkzeug's HTTP errors keep their status (404, 405, 413, 415...).
- Anything else -> 500, logged with its traceback and request id; the client sees neither.
"""

from __future__ import annotations

import logging
from http import HTTPStatus
from typing import Any

from flask import Flask, Response, g, json, request
from werkzeug.exceptions import HTTPException

from scorer.deadline import DeadlineExceededError
from scorer.errors import GenreError, InputError, ModelLoadError, ReportUnavailableError
from scorer.limits import CostError
from scorer.web.reloads import RateLimitedError, ReloadPendingError
from scorer.web.state import NotReadyError, UnavailableModelError, UnknownModelError
from scorer.web.work import BusyError

__all__ = ["PROBLEM_TYPES", "AuthError", "BodyError", "QueryError", "problem", "register"]

logger = logging.getLogger(__name__)

# slug -> status: the `type` values a client can branch on.
PROBLEM_TYPES: dict[str, int] = {
    "invalid-body": 400,
    "invalid-query": 400,
    "unauthorized": 401,
    "admin-disabled": 403,
    "not-found": 404,
    "method-not-allowed": 405,
    "reload-pending": 409,
    "body-too-large": 413,
    "unsupported-encoding": 415,
    "unsupported-input": 422,
    "too-costly": 422,
    "unknown-model": 422,
    "unknown-genre": 422,
    "model-load-failed": 422,
    "too-many-reloads": 429,
    "internal-error": 500,
    "report-unavailable": 500,
    "not-ready": 503,
    "deadline-exceeded": 503,
    "busy": 503,
    "http-error": 0,  # any other HTTP status werkzeug raises, with that status
}
_HTTP_SLUGS = {
    404: "not-found",
    405: "method-not-allowed",
    413: "body-too-large",
    415: "unsupported-encoding",
}
RETRY_AFTER = "5"  # seconds, for a request stopped at its deadline or refused by a full queue


class BodyError(Exception):
    """The request body is not JSON, or a field has the wrong type (400)."""


class QueryError(Exception):
    """A query parameter of the wrong value (400)."""


class AuthError(Exception):
    """Missing or wrong admin token (401)."""


class AdminDisabledError(Exception):
    """The admin API is off: FLUENCY_ADMIN_TOKEN is unset (403)."""


def problem(
    status: int, slug: str, detail: str, headers: dict | None = None, **extra: Any
) -> Response:
    g.problem_type = slug  # counted by scorer/web/metrics.py
    body = {
        "type": f"/problems/{slug}",
        "title": HTTPStatus(status).phrase,
        "status": status,
        "detail": detail,
        "instance": request.path,
        "request_id": g.get("request_id", ""),
        **extra,
    }
    return Response(
        json.dumps(body), status=status, mimetype="application/problem+json", headers=headers
    )


def register(app: Flask) -> None:
    @app.errorhandler(BodyError)
    def bad_request(exc: BodyError):
        return problem(400, "invalid-body", str(exc))

    @app.errorhandler(QueryError)
    def bad_query(exc: QueryError):
        return problem(400, "invalid-query", str(exc))

    @app.errorhandler(InputError)
    def unsupported(exc: InputError):
        if isinstance(exc, CostError):
            return problem(422, "too-costly", str(exc), limit=exc.limit, limit_value=exc.value)
        return problem(422, "unsupported-input", str(exc))

    @app.errorhandler(UnknownModelError)
    def unknown_model(exc: UnknownModelError):
        return problem(422, "unknown-model", str(exc), models=exc.names)

    @app.errorhandler(GenreError)
    def unknown_genre(exc: GenreError):
        return problem(422, "unknown-genre", str(exc), model=exc.model, genres=exc.genres)

    @app.errorhandler(UnavailableModelError)
    def unavailable_model(exc: UnavailableModelError):
        return problem(503, "model-unavailable", str(exc), model=exc.name)

    @app.errorhandler(DeadlineExceededError)
    def deadline(exc: DeadlineExceededError):
        return problem(503, "deadline-exceeded", str(exc), {"Retry-After": RETRY_AFTER})

    @app.errorhandler(BusyError)
    def busy(exc: BusyError):
        return problem(503, "busy", str(exc), {"Retry-After": RETRY_AFTER})

    @app.errorhandler(ReloadPendingError)
    def reload_pending(exc: ReloadPendingError):
        return problem(409, "reload-pending", str(exc), {"Retry-After": RETRY_AFTER})

    @app.errorhandler(RateLimitedError)
    def too_many_reloads(exc: RateLimitedError):
        return problem(429, "too-many-reloads", str(exc), {"Retry-After": str(exc.retry_after)})

    @app.errorhandler(AuthError)
    def unauthorized(exc: AuthError):
        return problem(401, "unauthorized", str(exc), {"WWW-Authenticate": "Bearer"})

    @app.errorhandler(AdminDisabledError)
    def admin_disabled(exc: AdminDisabledError):
        return problem(403, "admin-disabled", str(exc))

    @app.errorhandler(ModelLoadError)
    def load_failed(exc: ModelLoadError):
        return problem(422, "model-load-failed", str(exc))

    @app.errorhandler(ReportUnavailableError)
    def report_unavailable(exc: ReportUnavailableError):
        logger.warning("%s (request_id=%s)", exc, g.get("request_id", ""))
        return problem(500, "report-unavailable", str(exc))

    @app.errorhandler(NotReadyError)
    def not_ready(exc: NotReadyError):
        return problem(503, "not-ready", str(exc), {"Retry-After": "10"})

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException):
        status = exc.code or 500
        slug = _HTTP_SLUGS.get(status, "invalid-body" if status == 400 else "http-error")
        detail = exc.description or HTTPStatus(status).phrase
        if status == 405:
            allowed = ", ".join(sorted(m for m in exc.valid_methods or [] if m != "OPTIONS"))
            detail = f"{request.method} is not allowed on {request.path}; use {allowed}"
        elif status == 413:
            limit = app.config["MAX_CONTENT_LENGTH"]
            detail = f"the request body is over {limit} bytes (FLUENCY_MAX_CONTENT_LENGTH)"
        resp = problem(status, slug, detail)
        if status == 405 and exc.valid_methods:
            resp.headers["Allow"] = ", ".join(exc.valid_methods)
        return resp

    @app.errorhandler(Exception)
    def internal(exc: Exception):
        logger.exception(
            "unhandled error in %s %s (request_id=%s)",
            request.method,
            request.path,
            g.get("request_id", ""),
        )
        return problem(
            500,
            "internal-error",
            f"the server failed on this request; quote request id {g.get('request_id', '')}",
        )
