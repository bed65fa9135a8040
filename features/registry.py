"""The feature registry: a name, the feature names it yields, a batch function. One file each.

An extractor module in `features/` declares itself with `@feature(...)`; `get` and `all_specs`
import every module of the package once, so adding a file is enough. Names are versioned
(`lm.v1`): change what an extractor returns and it becomes `lm.v2`, so a model trained on the
old features cannot silently load the new ones.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from features.errors import FeatureError
from features.resources import Artefact, artefacts_for
from features.sentence import Sentence

__all__ = ["FeatureSpec", "all_specs", "feature", "get"]

BatchFunc = Callable[[Sequence[Sentence], "object"], list[dict[str, float]]]


@dataclass(frozen=True)
class FeatureSpec:
    name: str  # "surface.v2"
    names: tuple[str, ...]  # what it yields, without the prefix: ("n_tokens", ...)
    func: BatchFunc  # (sentences, resources) -> one {name: value} per sentence
    requires: tuple[str, ...]  # components it loads: "spacy", "linkgrammar", "lm", "benepar"
    doc: str

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(f"{self.name}/{n}" for n in self.names)

    @property
    def artefacts(self) -> tuple[Artefact, ...]:
        """The files its components are loaded from: what a model card records and
        `load_scorer` gives back (`features.resources.ARTEFACTS`)."""
        return artefacts_for(self.requires)


_REGISTRY: dict[str, FeatureSpec] = {}
_IMPORTED = False
# Modules of this package that hold no extractor (importing them here would be wasted work).
_NOT_EXTRACTORS = {
    "accuracy",
    "errors",
    "extract",
    "gold",
    "parsing",
    "placeholders",
    "registry",
    "resources",
    "rows",
    "segment",
    "sentence",
}


def feature(name: str, *, names: Sequence[str], requires: Sequence[str] = ()):
    """Register a batch extractor under a versioned `name`, yielding exactly `names`."""

    def register(func: BatchFunc) -> BatchFunc:
        if name in _REGISTRY:
            raise FeatureError(f"feature {name!r} is registered twice")
        if "." not in name or not name.rsplit(".", 1)[1].startswith("v"):
            raise FeatureError(f"feature name {name!r} needs a version: '<family>.v<N>'")
        _REGISTRY[name] = FeatureSpec(
            name, tuple(names), func, tuple(requires), (func.__doc__ or "").strip()
        )
        return func

    return register


def _import_all() -> None:
    global _IMPORTED
    if _IMPORTED:
        return
    import features

    for info in pkgutil.iter_modules(features.__path__):
        if info.name not in _NOT_EXTRACTORS and not info.name.startswith("_"):
            importlib.import_module(f"features.{info.name}")
    _IMPORTED = True


# Extractors no longer shipped, and what to do about a model that reads one.
RETIRED = {
    "neural.v1": "it read SmolLM2 through llama.cpp (0.8.0-0.11.0), which is no longer "
    "installed; retrain the model with neural.v2 (the same weights on ONNX Runtime)",
}


def get(name: str) -> FeatureSpec:
    _import_all()
    if name in RETIRED and name not in _REGISTRY:
        raise FeatureError(f"feature {name!r} is retired: {RETIRED[name]}")
    if name not in _REGISTRY:
        raise FeatureError(f"unknown feature {name!r}; registered: {', '.join(sorted(_REGISTRY))}")
    return _REGISTRY[name]


def all_specs() -> list[FeatureSpec]:
    _import_all()
    return [_REGISTRY[n] for n in sorted(_REGISTRY)]
