"""The /v1 blueprint: score, rerank, accuracy, the model card, and the admin reload.

Each view reads its body (`body.py`), takes the served model once (`ModelHolder.get`), calls
the library, and returns a dict naming the model used. The web layer never touches features.
"""

from __future__ import annotations

import hmac
import math
import os
from typing import Any

from flask import Blueprint, current_app, request

from features.accuracy import score_accuracy
from features.parsing import load_nlp
from scorer.errors import InputError, ModelLoadError
from scorer.rerank import check_weights, rerank
from scorer.web import body
from scorer.web.errors import AdminDisabledError, AuthError, BodyError
from scorer.web.state import ModelHolder, NotReadyError, request_reload

__all__ = ["bp"]

bp = Blueprint("v1", __name__)


def _holder() -> ModelHolder:
    return current_app.extensions["fluency"]


def _limits() -> dict[str, int]:
    return {
        "max_batch": current_app.config["MAX_BATCH"],
        "max_chars": current_app.config["MAX_CHARS"],
    }


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
    data = body.read_object(("sentences", "features"))
    sentences = body.text_list(data, "sentences")
    want = data.get("features", False)
    if not isinstance(want, bool):
        raise BodyError(f"field 'features' must be true or false, got {body.typename(want)}")
    sentences = body.texts(sentences, "sentences", **_limits())
    scorer = loaded.scorer
    scores = scorer.score_texts(sentences, with_features=want)
    items = []
    for i, s in enumerate(scores):
        item: dict[str, Any] = {"index": i, "fluency": s.score}
        if want:
            item["features"] = s.features
        items.append(item)
    return {"model": loaded.scorer.name, "scores": items}


def _weights(data: dict[str, Any]) -> dict[str, float] | None:
    weights = data.get("weights")
    if weights is None:
        return None
    if not isinstance(weights, dict):
        raise BodyError(f"field 'weights' must be an object, got {body.typename(weights)}")
    for name, w in weights.items():
        if isinstance(w, bool) or not isinstance(w, int | float):
            raise BodyError(f"weights[{name!r}] must be a number, got {body.typename(w)}")
    return weights


@bp.post("/rerank")
def rerank_view():
    loaded = _holder().get()
    data = body.read_object(("candidates", "references", "weights", "top_k"))
    candidates = body.text_list(data, "candidates")
    references = body.text_list(data, "references") if "references" in data else None
    weights = _weights(data)
    top_k = data.get("top_k")
    if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, int)):
        raise BodyError(f"field 'top_k' must be an integer, got {body.typename(top_k)}")
    limits = _limits()
    candidates = body.texts(candidates, "candidates", **limits)
    if references is not None:
        max_refs = current_app.config["MAX_REFERENCES"]
        references = body.texts(
            references, "references", max_batch=max_refs, max_chars=limits["max_chars"]
        )
    used = check_weights(weights, references is not None)
    ranked = rerank(loaded.scorer, candidates, references, weights=weights, top_k=top_k, **limits)
    items = []
    for r in ranked:
        item: dict[str, Any] = {
            "index": r.index,
            "text": r.text,
            "combined": r.combined,
            "fluency": r.fluency,
        }
        if references is not None:
            item["accuracy"] = _finite(r.accuracy)
        items.append(item)
    return {"model": loaded.scorer.name, "weights": used, "ranked": items}


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
    limits = _limits()
    hypotheses = body.texts(hypotheses, "hypotheses", **limits)
    if len(references) != len(hypotheses):
        raise InputError(
            f"{len(hypotheses)} hypotheses but {len(references)} reference lists; "
            "give one list of references per hypothesis"
        )
    max_refs = current_app.config["MAX_REFERENCES"]
    for i, refs in enumerate(references):
        body.texts(refs, f"references[{i}]", max_batch=max_refs, max_chars=limits["max_chars"])
    model = _holder().spacy_model
    try:
        load_nlp(model)
    except ModelLoadError as exc:  # no parser: nothing to align, the service is not ready
        raise NotReadyError(str(exc)) from exc
    report = score_accuracy(hypotheses, references, model=model)
    return {
        "rows": [_finite(row) for row in report.rows],
        "corpus": _finite(report.corpus),
        "signatures": report.signatures,
    }


@bp.get("/model")
def model():
    loaded = _holder().get()
    return {"serving": loaded.summary(), "card": loaded.scorer.card}


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
    path = data.get("model")
    if path is not None and (not isinstance(path, str) or not path.strip()):
        raise BodyError("field 'model' must be a bundle name or a path under the models folder")
    holder = _holder()
    previous = holder.current.summary() if holder.current else None
    loaded = holder.reload(path)  # ModelLoadError (422) leaves the old model in place
    master = current_app.config.get("GUNICORN_MASTER_PID")
    scope = "process"
    if master and int(master) == os.getppid():
        request_reload(int(master), loaded.path)
        scope = "all-workers"
    return {"serving": loaded.summary(), "previous": previous, "scope": scope}
