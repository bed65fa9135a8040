"""Heavy components extractors share, loaded lazily, once per process: the extractor stays a
function of the sentences and these resources, with no global state of its own.

Paths default to the artefacts shipped under `models/`; `Resources(lm_path=...)` overrides them.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["MODELS_DIR", "Resources", "one_thread_per_process"]

MODELS_DIR = Path(__file__).resolve().parent.parent / "models"


@dataclass
class Resources:
    spacy_model: str | None = None
    lm_path: Path | None = None  # KenLM model (binary or ARPA)
    unigram_path: Path | None = None  # unigram log10 probabilities for SLOR
    benepar_path: Path | None = None  # our benepar checkpoint
    linkgrammar_timeout_s: float = 2.0
    linkgrammar_max_linkages: int = 30  # see features/linkgrammar.py (v2, v4)
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)

    def get(self, name: str, loader) -> Any:
        """The component `name`, built by `loader(self)` on first use."""
        if name not in self._cache:
            self._cache[name] = loader(self)
        return self._cache[name]


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
