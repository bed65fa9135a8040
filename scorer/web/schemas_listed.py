"""Two response schemas of the OpenAPI document (scorer/web/schemas.py builds the rest): a model
as `GET /v1/models` lists it (with its genre heads), and the explanation of one text."""

from __future__ import annotations

from typing import Any

from scorer.explain import KINDS

__all__ = ["explain_response", "listed_model"]


def listed_model() -> dict[str, Any]:
    string_or_null = {"type": ["string", "null"]}
    return {
        "type": "object",
        "required": [
            "name",
            "default",
            "calibrated",
            "model_sha256",
            "genre",
            "aggregate",
            "summary",
            "genres",
            "genres_not_shipped",
        ],
        "properties": {
            "name": {"type": "string", "description": "what a request's `model` names"},
            "default": {"type": "boolean"},
            "calibrated": {
                "type": "boolean",
                "description": "the bundle scores with a head: `fluency` is on the human "
                "scale, `gleu` is the GLEU stage's",
            },
            "model_sha256": {
                "type": ["string", "null"],
                "description": "the GLEU stage's hash: models with the same one share it",
            },
            "genre": {
                **string_or_null,
                "description": "the genre it scores for when a request names none (its "
                "general head's where the card says)",
            },
            "aggregate": {
                "type": "string",
                "description": "how a text of several sentences is read",
            },
            "summary": {
                "type": "string",
                "description": "what its GLEU stage and each head read, and how, written from "
                "its card (after the card's own `description`, if any)",
            },
            "features": {"type": "array", "items": {"type": "string"}},
            "path": {"type": "string"},
            "genres": {
                "type": "array",
                "items": _genre(),
                "description": "the heads a request's `genre` may name, `general` (the "
                "general head) first where the bundle has one",
            },
            "genres_not_shipped": {
                "type": "object",
                "additionalProperties": {"type": "string"},
                "description": "genre -> why its card ships no head for it",
            },
        },
    }


def _genre() -> dict[str, Any]:
    number_or_null = {"type": ["number", "null"]}
    interval = {"type": "array", "items": number_or_null, "minItems": 2, "maxItems": 2}
    held_out = {
        "type": "object",
        "required": ["rho", "tau", "rho_95", "tau_95"],
        "properties": {
            "rho": {**number_or_null, "description": "mean Spearman rho"},
            "tau": {**number_or_null, "description": "mean Kendall tau"},
            "rho_95": {"oneOf": [interval, {"type": "null"}]},
            "tau_95": {"oneOf": [interval, {"type": "null"}]},
            "system": {
                "oneOf": [
                    {
                        "type": "object",
                        "properties": {
                            "accuracy": {
                                **number_or_null,
                                "description": "share of system pairs whose mean scores are "
                                "ordered as their mean human scores",
                            },
                            "rho": {**number_or_null, "description": "Spearman of system means"},
                            "accuracy_95": {"oneOf": [interval, {"type": "null"}]},
                            "rho_95": {"oneOf": [interval, {"type": "null"}]},
                        },
                    },
                    {"type": "null"},
                ],
                "description": "per system, on held-out files of six or more systems",
            },
        },
    }
    return {
        "type": "object",
        "required": ["name", "aggregate", "held_out"],
        "additionalProperties": False,
        "properties": {
            "name": {"type": "string"},
            "aggregate": {
                "type": "string",
                "description": "how this head reads a text of several sentences",
            },
            "held_out": {
                "oneOf": [held_out, {"type": "null"}],
                "description": "its agreement with people on judgements held out of its fit, "
                "with 95% intervals (the card's heads_report); null where the card has none",
            },
        },
    }


def explain_response() -> dict[str, Any]:
    number = {"type": "number"}
    span = {
        "type": "object",
        "required": ["start", "end", "kind", "detail"],
        "properties": {
            "start": {"type": "integer", "minimum": 0, "description": "code points, inclusive"},
            "end": {"type": "integer", "minimum": 0, "description": "code points, exclusive"},
            "kind": {"enum": sorted(KINDS)},
            "detail": {"type": "string"},
        },
    }
    feature = {
        "type": "object",
        "required": ["feature", "value", "typical", "contribution"],
        "properties": {
            "feature": {"type": "string"},
            "value": number,
            "typical": number,
            "contribution": number,
        },
    }
    contributions = {
        "type": "object",
        "required": ["method", "exact", "intercept", "features", "rest", "residual"],
        "description": "the score `explains` names (fluency, or gleu under a non-linear "
        "second stage) = intercept + sum of features' contributions + rest + residual",
        "properties": {
            "method": {"enum": ["linear", "occlusion"]},
            "exact": {"type": "boolean"},
            "intercept": number,
            "features": {"type": "array", "items": feature},
            "rest": number,
            "residual": number,
            "parts": {
                "type": "object",
                "description": "a linear head's score in its parts, which add up to it: its "
                "intercept, the GLEU score times its weight, SmolLM2's states (a learned "
                "head) and its other inputs",
                "additionalProperties": number,
            },
        },
    }
    item = {
        "type": "object",
        "required": ["index", "fluency", "spans", "contributions"],
        "properties": {
            "index": {"type": "integer", "minimum": 0},
            "fluency": {"type": "number", "description": "as /v1/score gives it"},
            "gleu": {"type": "number", "description": "the GLEU stage's SVM distance"},
            "explains": {
                "enum": ["fluency", "gleu"],
                "description": "the score the contributions add up to: the fluency, unless "
                "the bundle's second stage is not linear",
            },
            "spans": {"type": "array", "items": span},
            "contributions": contributions,
        },
    }
    return {
        "type": "object",
        "required": ["model", "genre", "lm_threshold", "typical", "explanations"],
        "properties": {
            "model": {"type": "string", "description": "the model that explained"},
            "genre": {
                "type": "string",
                "description": "the head that scored: `general`, or the genre named",
            },
            "lm_threshold": {
                "type": "object",
                "required": ["value", "of"],
                "properties": {"value": number, "of": {"type": "string"}},
            },
            "typical": {"type": "string"},
            "explanations": {"type": "array", "items": item},
        },
    }
