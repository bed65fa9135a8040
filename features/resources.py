"""Heavy components extractors share, loaded lazily, once per process: the extractor stays a
function of the sentences and these resources, with no global state of its own.

Paths default to the artefacts shipped under `models/`; `Resources(lm_path=...)` overrides them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["MODELS_DIR", "Resources"]

MODELS_DIR = Path(__file__).resolve().parent.parent / "models"


@dataclass
class Resources:
    spacy_model: str | None = None
    lm_path: Path | None = None  # KenLM model (binary or ARPA)
    unigram_path: Path | None = None  # unigram log10 probabilities for SLOR
    benepar_path: Path | None = None  # our benepar checkpoint
    linkgrammar_timeout_s: float = 2.0
    linkgrammar_max_linkages: int = 1000
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)

    def get(self, name: str, loader) -> Any:
        """The component `name`, built by `loader(self)` on first use."""
        if name not in self._cache:
            self._cache[name] = loader(self)
        return self._cache[name]
