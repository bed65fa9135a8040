"""The component schemas of the OpenAPI document (scorer/web/openapi.py): request and response
bodies, with the limits of the configuration they are built from.

OpenAPI 3.1 schemas are JSON Schema 2020-12; tests/web/test_openapi.py validates every answer
of the service against them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from features.accuracy import METRICS
from scorer.limits import REFUSED_CHARS, blank_chars
from scorer.web.schemas_listed import explain_response as _explain_response
from scorer.web.schemas_listed import listed_model as _listed_model

__all__ = ["ref", "schemas", "text_pattern"]

_REF = "#/components/schemas/"

FLUENCY = (
    "larger is more fluent: the score of the model's head for the genre asked (its card's "
    "`heads`), in standard deviations above the average judged output of the development "
    "judgements; for a model without heads the same as `gleu`"
)
GLEU = (
    "the GLEU stage's SVM signed distance (Mutton et al. 2007); > 0: the side of real text; null "
    "where the head that scored reads none of the GLEU stage (the neural tier's general head, "
    "SmolLM2's states alone), which is then not run"
)


def ref(name: str) -> dict[str, str]:
    return {"$ref": _REF + name}


def _char_class(chars: str) -> str:
    """The inside of a regex character class holding `chars`: ranges of \\uXXXX escapes (the
    few characters above U+FFFF as themselves)."""
    points, out, i = sorted(map(ord, chars)), [], 0
    while i < len(points):
        j = i
        while j + 1 < len(points) and points[j + 1] == points[j] + 1:
            j += 1
        a, b = points[i], points[j]
        esc = lambda c: f"\\u{c:04x}" if c <= 0xFFFF else chr(c)  # noqa: E731
        out.append(esc(a) if a == b else f"{esc(a)}-{esc(b)}")
        i = j + 1
    return "".join(out)


def text_pattern() -> str:
    """What `scorer.limits.Limits.texts` accepts in one text, as a JSON Schema pattern: no
    control character but tab, LF, CR, and at least one character that is neither whitespace
    nor an invisible format character (Unicode Cf). Lone surrogates (a JSON escape such as
    \\ud800 without its pair) are refused too, but are not code points a pattern can name."""
    refused = _char_class("".join(c for c in REFUSED_CHARS if not 0xD800 <= ord(c) <= 0xDFFF))
    return f"^[^{refused}]*[^{refused}{_char_class(blank_chars())}][^{refused}]*$"


def _texts(description: str, max_items: int, max_chars: int) -> dict[str, Any]:
    return {
        "type": "array",
        "minItems": 1,
        "maxItems": max_items,
        "items": {
            "type": "string",
            "minLength": 1,
            "maxLength": max_chars,
            "pattern": text_pattern(),
        },
        "description": description,
    }


def _model(models: Sequence[str]) -> dict[str, Any]:
    """The optional `model` of a scoring request: one of the names served."""
    described = {
        "description": "The model to score with, by name (GET /v1/models); default: the first "
        "of FLUENCY_MODELS. Another name is 422 /problems/unknown-model"
    }
    return {"enum": list(models), **described} if models else {"type": "string", **described}


def _genre(genres: Sequence[str] | None) -> dict[str, Any]:
    """The optional `genre` of a scoring request: a head of the model it names (GET /v1/models
    lists each model's `genres`). The enum holds every genre of the models served (None: not
    known yet); which of them a model has, JSON Schema cannot tie to `model`."""
    described = {
        "description": "The genre head to score with, one of the model's `genres` (GET "
        "/v1/models); default: its general one. A genre the model has no head for is 422 "
        "/problems/unknown-genre"
    }
    return {"type": "string", **described} if genres is None else {"enum": [*genres], **described}


GENRE_USED = "the head that scored: `general`, or the genre named"
SCALE = {
    "enum": ["fluency", "gleu"],
    "description": "what `fluency` holds: `fluency`, a head's score on people's scale; `gleu`, "
    "the GLEU distance itself (a model without heads, such as one retrained with "
    "`fluency train --no-heads`)",
}


def schemas(
    cfg: Mapping[str, Any], models: Sequence[str] = (), genres: Sequence[str] | None = None
) -> dict[str, Any]:
    number_or_null = {"type": ["number", "null"]}
    model = _model(models)
    genre = _genre(genres)
    return {
        "Problem": {
            "type": "object",
            "required": ["type", "title", "status", "detail", "instance", "request_id"],
            "properties": {
                "type": {"type": "string", "pattern": "^/problems/[a-z-]+$"},
                "title": {"type": "string"},
                "status": {"type": "integer", "minimum": 400, "maximum": 599},
                "detail": {"type": "string", "minLength": 1},
                "instance": {"type": "string"},
                "request_id": {"type": "string"},
                "limit": {"type": "string", "description": "too-costly: the setting refused"},
                "limit_value": {"type": "integer", "description": "too-costly: its value"},
                "models": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "unknown-model: the models loaded",
                },
                "model": {
                    "type": "string",
                    "description": "model-unavailable, unknown-genre: the model named",
                },
                "genres": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "unknown-genre: the genres the model has heads for",
                },
            },
        },
        "ScoreRequest": {
            "type": "object",
            "additionalProperties": False,
            "required": ["sentences"],
            "properties": {
                "sentences": _texts("Texts to score", cfg["MAX_BATCH"], cfg["MAX_CHARS"]),
                "features": {"type": "boolean", "default": False},
                "model": model,
                "genre": genre,
            },
        },
        "ScoreResponse": {
            "type": "object",
            "required": ["model", "genre", "scale", "scores"],
            "properties": {
                "model": {"type": "string", "description": "the model that scored"},
                "genre": {"type": "string", "description": GENRE_USED},
                "scale": SCALE,
                "scores": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["index", "fluency", "gleu"],
                        "additionalProperties": False,
                        "properties": {
                            "index": {"type": "integer", "minimum": 0},
                            "fluency": {"type": "number", "description": FLUENCY},
                            "gleu": {"type": ["number", "null"], "description": GLEU},
                            "features": {
                                "type": "object",
                                "additionalProperties": {"type": "number"},
                            },
                        },
                    },
                },
            },
        },
        "RerankRequest": {
            "type": "object",
            "additionalProperties": False,
            "required": ["candidates"],
            "properties": {
                "candidates": _texts("Alternatives", cfg["MAX_BATCH"], cfg["MAX_CHARS"]),
                "references": _texts(
                    "References shared by all candidates", cfg["MAX_REFERENCES"], cfg["MAX_CHARS"]
                ),
                "weights": {
                    "type": "object",
                    "propertyNames": {"enum": ["fluency", *METRICS]},
                    "additionalProperties": {
                        "type": "number",
                        "minimum": 0,
                        "maximum": 1.7976931348623157e308,
                    },
                    "anyOf": [
                        {"required": [name], "properties": {name: {"exclusiveMinimum": 0}}}
                        for name in ("fluency", *METRICS)
                    ],
                    "description": "Finite, >= 0, at least one > 0; normalised to sum to 1. "
                    "Without references only `fluency` may be named",
                },
                "top_k": {"type": "integer", "minimum": 1},
                "model": model,
                "genre": genre,
            },
            "anyOf": [  # accuracy weights need references
                {"required": ["references"]},
                {"properties": {"weights": {"propertyNames": {"const": "fluency"}}}},
            ],
        },
        "RerankResponse": {
            "type": "object",
            "required": ["model", "genre", "scale", "weights", "ranked"],
            "properties": {
                "model": {"type": "string", "description": "the model that scored"},
                "genre": {"type": "string", "description": GENRE_USED},
                "scale": SCALE,
                "weights": {
                    "type": "object",
                    "description": "Weights used, normalised to sum to 1",
                    "additionalProperties": {"type": "number"},
                },
                "ranked": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["index", "text", "combined", "fluency", "gleu"],
                        "additionalProperties": False,
                        "properties": {
                            "index": {"type": "integer", "minimum": 0},
                            "text": {"type": "string"},
                            "combined": {"type": "number"},
                            "fluency": {"type": "number", "description": FLUENCY},
                            "gleu": {"type": ["number", "null"], "description": GLEU},
                            "accuracy": {
                                "type": "object",
                                "required": list(METRICS),
                                "additionalProperties": number_or_null,
                            },
                        },
                    },
                },
            },
        },
        "AccuracyRequest": {
            "type": "object",
            "additionalProperties": False,
            "required": ["hypotheses", "references"],
            "description": "references must hold exactly one list per hypothesis (422 "
            "otherwise: JSON Schema cannot compare the lengths of two arrays)",
            "properties": {
                "hypotheses": _texts("Generated texts", cfg["MAX_BATCH"], cfg["MAX_CHARS"]),
                "references": {
                    "type": "array",
                    "description": "One list of references per hypothesis, as many as hypotheses",
                    "minItems": 1,
                    "maxItems": cfg["MAX_BATCH"],
                    "items": _texts(
                        "References of one hypothesis", cfg["MAX_REFERENCES"], cfg["MAX_CHARS"]
                    ),
                },
            },
        },
        "AccuracyResponse": {
            "type": "object",
            "required": ["rows", "corpus", "signatures"],
            "properties": {
                "rows": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["index", "hyp_len", *METRICS],
                        "additionalProperties": number_or_null,
                    },
                },
                "corpus": {
                    "type": "object",
                    "required": ["n_segments", "bleu", "chrf", "nist", "dependency_f"],
                    "additionalProperties": number_or_null,
                },
                "signatures": {"type": "object", "additionalProperties": {"type": "string"}},
            },
        },
        "ModelSummary": {
            "type": "object",
            "required": ["name", "path", "model_sha256", "features", "loaded_at"],
            "properties": {
                "name": {"type": "string"},
                "path": {"type": "string"},
                "model_sha256": {"type": ["string", "null"]},
                "features": {"type": "array", "items": {"type": "string"}},
                "placeholders": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Slot placeholders read as a name before scoring "
                    "(FLUENCY_PLACEHOLDERS)",
                },
                "loaded_at": {"type": "string"},
                "models": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "every model served, this (the default) first",
                },
            },
        },
        "ModelsResponse": {
            "type": "object",
            "required": ["default", "models"],
            "properties": {
                "default": {"type": "string", "description": "the model used when none is named"},
                "models": {"type": "array", "items": _listed_model(), "minItems": 1},
            },
        },
        "ModelResponse": {
            "type": "object",
            "required": ["serving", "card"],
            "properties": {
                "serving": ref("ModelSummary"),
                "card": {
                    "type": "object",
                    "description": "the bundle's card.json without the held-out tables: per "
                    "head tried, `heads_report` has its decision and `head`, its own held-out "
                    "row; `heads_report_file` names the file of the tables and its SHA-256",
                },
                "heads_report": {
                    "type": "object",
                    "description": "with report=1 only: genre -> the card's entry with its "
                    "`table`, the head beside minus the length, chrF and every input tried, "
                    "on every held-out file",
                    "additionalProperties": {
                        "type": "object",
                        "required": ["decision"],
                        "properties": {
                            "decision": {"type": "string"},
                            "table": {"type": "array", "items": {"type": "object"}},
                        },
                    },
                },
            },
        },
        "ReloadRequest": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "model": {
                    "type": "string",
                    "description": "Bundle name or path under MODELS_DIR, made the default: "
                    "moved to the front if served, else in the old default's place; left out: "
                    "the models served are reloaded",
                }
            },
        },
        "ReloadResponse": {
            "type": "object",
            "required": ["serving", "previous", "scope"],
            "properties": {
                "serving": ref("ModelSummary"),
                "previous": {"oneOf": [ref("ModelSummary"), {"type": "null"}]},
                "scope": {"enum": ["process", "all-workers"]},
            },
        },
        "ExplainRequest": {
            "type": "object",
            "additionalProperties": False,
            "required": ["sentences"],
            "properties": {
                "sentences": _texts("Texts to explain", cfg["MAX_BATCH"], cfg["MAX_CHARS"]),
                "top": {"type": "integer", "minimum": 1, "default": 10},
                "locate_nulls": {
                    "type": "boolean",
                    "default": False,
                    "description": "mark which words Link Grammar skips where it skips several",
                },
                "model": model,
                "genre": genre,
            },
        },
        "ExplainResponse": _explain_response(),
        "Health": {
            "type": "object",
            "required": ["status"],
            "properties": {"status": {"const": "ok"}},
        },
        "Ready": {
            "type": "object",
            "required": ["status", "model", "models"],
            "properties": {
                "status": {"const": "ready"},
                "model": {"type": "string", "description": "the default model"},
                "models": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "every loaded model, the default first (FLUENCY_MODELS)",
                },
            },
        },
    }
