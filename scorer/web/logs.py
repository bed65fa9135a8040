"""Access logs: one JSON line per request, and the request id that ties a client to its line.

The id is the client's `X-Request-ID` when it sends a sane one (1-128 characters of letters,
digits, `.`, `_`, `-`), otherwise a fresh UUID; either way it is echoed in the response header,
in every problem-details body, and in the log line. Request text never reaches the log unless
`LOG_TEXT` (FLUENCY_LOG_TEXT=1) is set: texts sent for scoring may be private.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import time
import uuid

from flask import Flask, Response, g, request

__all__ = ["ACCESS_LOGGER", "register"]

ACCESS_LOGGER = "scorer.web.access"
_ID = re.compile(r"[A-Za-z0-9._-]{1,128}")
MAX_LOGGED_BODY = 4000  # characters of the body kept when LOG_TEXT is on


def _configure_logging() -> None:
    """Give our loggers a stderr handler when nobody configured logging (gunicorn doesn't)."""
    access = logging.getLogger(ACCESS_LOGGER)
    if not access.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        access.addHandler(handler)
        access.setLevel(logging.INFO)
        access.propagate = False  # JSON lines only, not repeated by a root handler
    for name in ("scorer", "features"):  # the service's own, and what loads the components
        ours = logging.getLogger(name)
        if not ours.handlers and not logging.getLogger().handlers:
            handler = logging.StreamHandler(sys.stderr)
            handler.setFormatter(
                logging.Formatter("%(asctime)s %(levelname)s [%(process)d] %(name)s: %(message)s")
            )
            ours.addHandler(handler)
            ours.setLevel(logging.INFO)


def register(app: Flask) -> None:
    if app.config["ACCESS_LOG"]:
        _configure_logging()
    access = logging.getLogger(ACCESS_LOGGER)

    @app.before_request
    def start() -> None:
        given = request.headers.get("X-Request-ID", "")
        g.request_id = given if _ID.fullmatch(given) else uuid.uuid4().hex
        g.started = time.perf_counter()

    @app.after_request
    def finish(resp: Response) -> Response:
        request_id = g.get("request_id") or uuid.uuid4().hex
        resp.headers["X-Request-ID"] = request_id
        if not app.config["ACCESS_LOG"]:
            return resp
        record = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "request_id": request_id,
            "method": request.method,
            "path": request.path,
            "status": resp.status_code,
            "duration_ms": round(
                (time.perf_counter() - g.get("started", time.perf_counter())) * 1000, 2
            ),
            "bytes_in": request.content_length or 0,
            "bytes_out": resp.calculate_content_length(),
            "remote": request.remote_addr,
            "pid": os.getpid(),  # which worker answered
        }
        if app.config["LOG_TEXT"]:
            try:
                record["body"] = request.get_data(as_text=True)[:MAX_LOGGED_BODY]
            except Exception:  # a body too large to read: say so, don't fail the response
                record["body"] = None
        access.info(json.dumps(record))
        return resp
