"""The /v1 blueprint: score, rerank, accuracy, the models and the model card, the admin reload.

Each view reads its body (`body.py`: JSON shapes and types, 400), has the library check what
it asks for (`scorer.limits`, `scorer.rerank.check_rerank`: texts and cost, 422) before any
work, then takes the worker's work slot (`work.py`) and calls the library with the request's
deadline. A scoring request may name one of the loaded models (`"model"`, `GET /v1/models`;
422 for another name) and one of its genre heads (`"genre"`; 422 for a genre the model has no
head for); it returns a dict naming the model and the genre used. The web layer never touches
features.
"""

from __future__ import annotations

import hmac
import math
import os
from typing import Any

from flask import Blueprint, current_app, request

from features.accuracy import score_accuracy
from features.parsing import load_nlp
from scorer.bundles import genre_name, scale_of
from scorer.deadline import in_chunks
from scorer.errors import ModelLoadError
from scorer.head_weights import lean_heads
from scorer.heads_report import lean_card
from scorer.limits import Limits
from scorer.rerank import check_rerank, rank
from scorer.scoring import FluencyScorer
from scorer.web import body, metrics, work
from scorer.web.errors import AdminDisabledError, AuthError, BodyError, QueryError
from scorer.web.reloads import ReloadGate
from scorer.web.state import Loaded, ModelHolder, NotReadyError

__all__ = ["bp", "pick"]

bp = Blueprint("v1", __name__)


def _holder() -> ModelHolder:
    return current_app.extensions["fluency"]


def _gate() -> ReloadGate:
    gate = current_app.extensions.get("fluency_reload")
    if gate is None:
        gate = current_app.extensions.setdefault(
            "fluency_reload", ReloadGate(current_app.config["RELOAD_INTERVAL"])
        )
    return gate


def pick(loaded: Loaded, data: dict[str, Any]) -> FluencyScorer:
    """The model the body names (`"model"`), else the default, scoring with the head of the
    genre it names (`"genre"`), else its general one; 422 for a model not loaded or a genre
    the model has no head for (`scorer.errors.GenreError`)."""
    scorer = loaded.pick(body.optional(data, "model", "string"))
    return scorer.for_genre(body.optional(data, "genre", "string"))


def _limits() -> Limits:
    return Limits.from_config(current_app.config)


def _finite(value: Any) -> Any:
    """JSON has no NaN or infinity: a metric that is undefined for a segment becomes null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    return value


@bp.post("/score")
def score():
    loaded = _holder().get()
    data = body.read_object(("sentences", "features", "model", "genre"))
    scorer = pick(loaded, data)
    sentences = _limits().sentences(body.text_list(data, "sentences"))
    want = body.optional(data, "features", "boolean", False)
    deadline = work.deadline()
    with work.slot().hold(deadline):
        scores = in_chunks(
            lambda chunk: scorer.score_texts(chunk, with_features=want),
            sentences,
            deadline.check,
        )
    metrics.texts_scored(len(sentences), scorer.name, genre_name(scorer))
    items = []
    for i, s in enumerate(scores):
        item: dict[str, Any] = {"index": i, "fluency": s.score, "gleu": _finite(s.gleu)}
        if want:
            item["features"] = s.features
        items.append(item)
    return {
        "model": scorer.name,
        "genre": genre_name(scorer),
        "scale": scale_of(scorer),
        "scores": items,
    }


@bp.post("/rerank")
def rerank_view():
    loaded = _holder().get()
    data = body.read_object(("candidates", "references", "weights", "top_k", "model", "genre"))
    scorer = pick(loaded, data)
    candidates = body.text_list(data, "candidates")
    references = body.text_list(data, "references") if "references" in data else None
    weights = body.optional(data, "weights", "object")
    if weights is not None:
        for name, w in weights.items():
            if isinstance(w, bool) or not isinstance(w, int | float):
                raise BodyError(f"weights[{name!r}] must be a number, got {body.typename(w)}")
    top_k = body.optional(data, "top_k", "integer")
    inputs = check_rerank(candidates, references, weights=weights, top_k=top_k, limits=_limits())
    deadline = work.deadline()
    with work.slot().hold(deadline):
        ranked = rank(scorer, inputs, deadline.check)
    metrics.texts_scored(len(candidates), scorer.name, genre_name(scorer))
    items = []
    for r in ranked:
        item: dict[str, Any] = {
            "index": r.index,
            "text": r.text,
            "combined": r.combined,
            "fluency": r.fluency,
            "gleu": _finite(r.gleu),
        }
        if references is not None:
            item["accuracy"] = _finite(r.accuracy)
        items.append(item)
    return {
        "model": scorer.name,
        "genre": genre_name(scorer),
        "scale": scale_of(scorer),
        "weights": inputs.weights,
        "ranked": items,
    }


@bp.post("/accuracy")
def accuracy():
    data = body.read_object(("hypotheses", "references"))
    hypotheses = body.text_list(data, "hypotheses")
    references = data.get("references")
    if not isinstance(references, list):
        raise BodyError(
            "field 'references' is required: a list with one list of strings per hypothesis"
        )
    for i, refs in enumerate(references):
        if not isinstance(refs, list) or not all(isinstance(r, str) for r in refs):
            raise BodyError(f"references[{i}] must be a list of strings")
    hypotheses, references = _limits().accuracy(hypotheses, references)
    model = _holder().spacy_model
    deadline = work.deadline()
    with work.slot().hold(deadline):
        try:
            load_nlp(model)
        except ModelLoadError as exc:  # no parser: nothing to align, the service is not ready
            raise NotReadyError(str(exc)) from exc
        report = score_accuracy(hypotheses, references, model=model, check=deadline.check)
    return {
        "rows": [_finite(row) for row in report.rows],
        "corpus": _finite(report.corpus),
        "signatures": report.signatures,
    }


@bp.get("/models")
def models():
    loaded = _holder().get()
    return {"default": loaded.scorer.name, "models": loaded.listing()}


@bp.get("/model")
def model():
    """The default model's card, lean (`scorer.heads_report.lean_card`: an older card's tables
    left out too); `?report=1` adds `heads_report`, every head's full held-out table, read from
    the bundle's heads_report.json (500 `report-unavailable` when that cannot be read)."""
    want = _flag("report")
    loaded = _holder().get()
    out = {"serving": loaded.summary(), "card": lean_card(lean_heads(loaded.scorer.card)[0])}
    if want:
        out["heads_report"] = loaded.scorer.heads_report()
    return out


def _flag(name: str) -> bool:
    """A query parameter that is on ("1", "true") or off ("0", "false", absent); 400 else."""
    value = request.args.get(name, "0")
    if value not in ("0", "1", "false", "true"):
        raise QueryError(f"query parameter {name!r} must be 1 or 0, not {value!r}")
    return value in ("1", "true")


def _check_admin() -> None:
    token = current_app.config.get("ADMIN_TOKEN")
    if not token:
        raise AdminDisabledError("the admin API is off; set FLUENCY_ADMIN_TOKEN to enable it")
    given = request.headers.get("Authorization", "")
    scheme, _, value = given.partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(value.encode(), token.encode()):
        raise AuthError("send the admin token as 'Authorization: Bearer <token>'")


@bp.post("/admin/reload")
def reload():
    _check_admin()
    data = body.read_object(("model",), allow_empty=True)
    path = body.optional(data, "model", "string")
    if path is not None and not path.strip():
        raise BodyError("field 'model' must be a bundle name or a path under the models folder")
    holder = _holder()
    previous = holder.current.summary() if holder.current else None
    master = current_app.config.get("GUNICORN_MASTER_PID")
    under_master = bool(master) and int(master) == os.getppid()
    with _gate().claim(int(master) if under_master else None) as claim:  # 409 / 429
        with work.slot().hold(work.deadline()):  # the warm-up sentence goes through spaCy
            loaded = holder.reload(path)  # ModelLoadError (422) leaves the old model in place
        claim.signal(loaded.path)  # under gunicorn: the master reloads every worker
    scope = "all-workers" if under_master else "process"
    return {"serving": loaded.summary(), "previous": previous, "scope": scope}
