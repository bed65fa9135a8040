"""POST /v1/explain: why each text scores as it does (spans in it, features behind the score).

Same body and limits (`scorer.limits`) as /v1/score (`sentences`), plus `top`: how many
contributions to list (default 10; the rest are summed in `rest`), and `locate_nulls`: mark
which words Link Grammar skips in a sentence that needs more than one null word (a second
parse of such sentences; off by default), and `model` and `genre`, as /v1/score. The score is
the one /v1/score gives, from the same parse as the spans.
"""

from __future__ import annotations

from flask import Blueprint, current_app

from scorer.bundles import genre_name
from scorer.deadline import in_chunks
from scorer.errors import InputError
from scorer.explain import LM_THRESHOLD, LM_THRESHOLD_MEANS, TYPICAL_MEANS, as_dict, explain_texts
from scorer.limits import Limits
from scorer.web import body, metrics, work
from scorer.web.api import pick

__all__ = ["DEFAULT_TOP", "bp"]

bp = Blueprint("explain", __name__)
DEFAULT_TOP = 10


@bp.post("/explain")
def explain():
    loaded = current_app.extensions["fluency"].get()
    data = body.read_object(("sentences", "top", "locate_nulls", "model", "genre"))
    scorer = pick(loaded, data)
    sentences = body.text_list(data, "sentences")
    top = body.optional(data, "top", "integer", DEFAULT_TOP)
    locate = body.optional(data, "locate_nulls", "boolean", False)
    if top < 1:
        raise InputError(f"top must be at least 1, got {top}")
    sentences = Limits.from_config(current_app.config).sentences(sentences)
    deadline = work.deadline()
    with work.slot().hold(deadline):  # one scoring request at a time per worker, as /v1/score
        explained = in_chunks(
            lambda chunk: explain_texts(scorer, chunk, locate_nulls=locate),
            sentences,
            deadline.check,
        )
    metrics.texts_scored(len(sentences), scorer.name, genre_name(scorer))
    return {
        "model": scorer.name,
        "genre": genre_name(scorer),
        "lm_threshold": {"value": LM_THRESHOLD, "of": LM_THRESHOLD_MEANS},
        "typical": TYPICAL_MEANS,
        "explanations": [{"index": i, **as_dict(e, top=top)} for i, e in enumerate(explained)],
    }
