"""GET /: a page to rank candidates and see why each scores as it does.

One HTML file and its script and style sheet, shipped in `scorer/web/static/` and served by
this app; the page reads /v1/models (the models served and each one's genre heads, for its
pickers), calls /v1/explain and /v1/rerank with the model and genre picked, on the same origin,
and loads nothing from anywhere else (its Content-Security-Policy forbids it).
"""

from __future__ import annotations

from pathlib import Path

from flask import Blueprint, send_from_directory

__all__ = ["CSP", "STATIC", "bp"]

bp = Blueprint("page", __name__)
STATIC = Path(__file__).resolve().parent / "static"
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)


@bp.get("/")
def index():
    resp = send_from_directory(STATIC, "index.html", mimetype="text/html", max_age=0)
    resp.headers["Content-Security-Policy"] = CSP
    resp.headers["X-Content-Type-Options"] = "nosniff"
    return resp
