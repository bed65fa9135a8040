"""Several model bundles loaded at once, sharing what they can.

Bundles built on the same GLEU base (`models/default` and `models/data-to-text` are one GLEU
stage under two second stages) read the same feature rows from the same artefacts.
`load_scorers` loads each bundle's own parts (card checks, GLEU stage, heads) and gives
bundles whose artefacts (LM, unigram table, constituency parser: the files their cards
record) and spaCy pipeline are the same one `features.resources.Resources`, so the LM and the
parsers are loaded once; bundles that also read the same extractors share one
`features.rows.FeatureRows`, so a text parsed for one is not parsed again for another while it
is in memory (`cache_size` texts, one cache for them all).

    >>> from scorer import load_scorers
    >>> scorers = load_scorers(["default", "data-to-text"])
    >>> scorers["data-to-text"].score(["The company said profits rose in the first quarter."])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

from features.placeholders import DEFAULT_PLACEHOLDERS, parse_placeholders
from features.resources import MODELS_DIR, Resources
from features.rows import FeatureRows
from scorer.errors import ModelLoadError
from scorer.heads_report import head_row
from scorer.scoring import FluencyScorer, load_scorer
from scorer.summary import summarize

__all__ = [
    "configured_models",
    "describe",
    "genre_name",
    "genres_of",
    "load_configured_all",
    "load_scorers",
    "load_shared",
    "scale_of",
]


def _resources_key(resources: Resources) -> tuple[tuple[str, str], ...]:
    """What a `Resources` loads its components from (not what it has loaded so far)."""
    return tuple(
        (f.name, str(getattr(resources, f.name)))
        for f in fields(resources)
        if not f.name.startswith("_")
    )


def load_shared(
    models: Sequence[str | Path],
    *,
    models_dir: str | Path = MODELS_DIR,
    spacy_model: str | None = None,
    cache_size: int = 0,
    placeholders: Sequence[str] = DEFAULT_PLACEHOLDERS,
) -> list[FluencyScorer]:
    """One scorer per bundle of `models` (names under `models_dir` or folders), same order, as
    `scorer.scoring.load_scorer` loads each, sharing resources and feature rows (module doc).
    A bundle named twice is loaded twice (its heads), sharing everything else."""
    resources: dict[tuple, Resources] = {}
    rows: dict[tuple, FeatureRows] = {}
    out = []
    for model in models:
        scorer = load_scorer(
            model,
            models_dir=models_dir,
            spacy_model=spacy_model,
            cache_size=cache_size,
            placeholders=placeholders,
        )
        key = _resources_key(scorer.resources)
        shared = resources.setdefault(key, scorer.resources)
        found = rows.get((key, scorer.features))
        if found is None:
            found = rows[key, scorer.features] = (
                scorer.rows
                if shared is scorer.resources
                else FeatureRows(scorer.features, shared, memory=cache_size)
            )
        scorer.share_rows(found)
        out.append(scorer)
    return out


def load_scorers(
    models: Sequence[str | Path],
    *,
    models_dir: str | Path = MODELS_DIR,
    spacy_model: str | None = None,
    cache_size: int = 0,
    placeholders: Sequence[str] = DEFAULT_PLACEHOLDERS,
) -> dict[str, FluencyScorer]:
    """{name: scorer} of several bundles (`load_shared`), keyed by the name their cards give
    (the bundle's folder name, as training and calibration write it), in the order given."""
    if isinstance(models, str | Path):
        raise TypeError("load_scorers takes a list of bundles; load_scorer loads one")
    if not models:
        raise ModelLoadError("no model bundle named: give at least one")
    scorers = load_shared(
        models,
        models_dir=models_dir,
        spacy_model=spacy_model,
        cache_size=cache_size,
        placeholders=placeholders,
    )
    out: dict[str, FluencyScorer] = {}
    for model, scorer in zip(models, scorers, strict=True):
        if scorer.name in out:
            raise ModelLoadError(
                f"two bundles are named {scorer.name!r} (their cards' name), the second from "
                f"{model}: give each bundle once"
            )
        out[scorer.name] = scorer
    return out


def configured_models(config: Mapping[str, Any]) -> list[str]:
    """The bundles the settings name: MODELS (comma-separated, the first is the default) when
    set, else MODEL_PATH alone."""
    listed = [m.strip() for m in str(config.get("MODELS") or "").split(",") if m.strip()]
    return listed or [str(config["MODEL_PATH"])]


def load_configured_all(
    models: Sequence[str | Path | None], config: Mapping[str, Any]
) -> list[FluencyScorer]:
    """`load_shared` with the settings of `scorer.config`; None in `models` stands for the
    configured MODEL_PATH (the CLI's `--model` left out)."""
    return load_shared(
        [m or config["MODEL_PATH"] for m in models],
        models_dir=config["MODELS_DIR"],
        spacy_model=config["SPACY_MODEL"],
        cache_size=config.get("FEATURE_CACHE", 0),
        placeholders=parse_placeholders(config.get("PLACEHOLDERS", DEFAULT_PLACEHOLDERS)),
    )


def describe(scorer: FluencyScorer) -> dict[str, Any]:
    """What a client choosing among loaded bundles needs to know of one: its name, the hash of
    its GLEU stage, whether it has a head and for which genre it scores a request that names
    none (its genre head's, else its general head's when its card says), how it reads a text
    of several sentences, a summary written from its card's heads (`scorer.summary`, after the
    card's own `description`, if any), the genre heads a request may name (`genres_of`) and
    why the others tried were not shipped."""
    card = scorer.card
    description = card.get("description")
    summary = summarize(card)
    if isinstance(description, str) and description.strip():
        summary = f"{description.strip()} {summary}"
    genres = genres_of(scorer)
    served = {g["name"] for g in genres}
    return {
        "name": scorer.name,
        "model_sha256": card.get("model_sha256"),
        "calibrated": scorer.head is not None,
        "genre": scorer.genre or (scorer.head.about.get("genre") if scorer.head else None),
        "aggregate": scorer.aggregate_for(),
        "features": list(card.get("features", [])),
        "summary": summary,
        "genres": genres,
        "genres_not_shipped": {
            str(name): str(report.get("decision") or "not shipped")
            for name, report in _heads_report(card).items()
            if name not in served
        },
    }


def genre_name(scorer: FluencyScorer) -> str:
    """The genre a scorer's head was fitted for, "general" for the bundle's own."""
    return scorer.genre or "general"


def scale_of(scorer: FluencyScorer) -> str:
    """What its scores are: "fluency" when a head scores (people's scale), "gleu" when the GLEU
    stage scores alone (a bundle without heads: its signed distance)."""
    return "fluency" if scorer.head is not None else "gleu"


def genres_of(scorer: FluencyScorer) -> list[dict[str, Any]]:
    """[{"name", "aggregate", "held_out"}] of each head a request may name (`scorer.genres`:
    "general" first): how it reads a text of several sentences, and its held-out agreement with
    people ({"rho", "tau", "rho_95", "tau_95"} per text, and "system": {"accuracy", "rho",
    "accuracy_95", "rho_95"} per system or None; the head's row of its card's `heads_report`,
    `scorer.heads_report.head_row`) where the card reports one for the head it ships, else
    None."""
    report = _heads_report(scorer.card)
    out = []
    for name in scorer.genres:
        entry = report.get(name) or {}
        shipped = str(entry.get("decision") or "").startswith("shipped")
        row = head_row(entry) if shipped else None
        out.append(
            {
                "name": name,
                "aggregate": scorer.for_genre(name).aggregate_for(),
                "held_out": (
                    {k: row.get(k) for k in ("rho", "tau", "rho_95", "tau_95")}
                    | {"system": _system(row.get("system"))}
                    if row
                    else None
                ),
            }
        )
    return out


def _system(figures: Any) -> dict[str, Any] | None:
    """A head's held-out system-level figures as the card records them (None: not judged so)."""
    if not isinstance(figures, Mapping):
        return None
    return {k: figures.get(k) for k in ("accuracy", "rho", "accuracy_95", "rho_95")}


def _heads_report(card: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """The card's `heads_report` ({genre: {"decision", "head", ...}}; an older card's entries
    hold the whole `table`), entries that are not objects left out."""
    report = card.get("heads_report") or {}
    if not isinstance(report, Mapping):
        return {}
    return {str(k): v for k, v in report.items() if isinstance(v, Mapping)}
