"""Feature rows of single sentences, computed once per feature set and kept on disk.

A benchmark scores ~17,000 outputs, each whole and sentence by sentence, with every model under
comparison; parsing is nearly all of the cost (Link Grammar, benepar) and rows depend only on the
text, the feature extractors and the artefacts they read (LM, parser, spaCy pipeline), not on the
SVM. So rows are stored per (set of texts, feature key): models that share features and
artefacts share rows, and a rerun after a retrained SVM parses nothing. The store is a JSON-lines
file (one {"text", "row"} a line, appended to), under `build/` by default.

With `n_jobs` > 1 the missing rows are computed by worker processes that each load the model
themselves (spawned, not forked: a parent that has run torch or Link Grammar can leave locked
thread pools in a forked child).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from tqdm import tqdm

__all__ = ["RowStore", "feature_key"]

log = logging.getLogger(__name__)

_WORKER: dict[str, Any] = {}


def feature_key(scorer) -> str:
    """What a feature row depends on: feature-set version, artefact hashes, spaCy pipeline."""
    card = scorer.card
    res = card.get("resources", {})
    parts = {
        "features": card.get("feature_set_version", ""),
        "artefacts": {k: v for k, v in sorted(res.items()) if k.endswith("_sha256")},
        "spacy": str(scorer.spacy_model or ""),
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:12]


def _init_worker(model: str | None, config: Mapping[str, Any]) -> None:
    from scorer.scoring import load_configured

    _WORKER["scorer"] = load_configured(model, dict(config, FEATURE_CACHE=0))


def _rows_chunk(sentences: list[str]) -> list[dict[str, float]]:
    return _WORKER["scorer"].sentence_rows(sentences)


class RowStore:
    """{sentence: feature row} for one feature key, read from and appended to `path`."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.rows: dict[str, dict[str, float]] = {}
        if self.path.is_file():
            with self.path.open(encoding="utf-8") as fh:
                for line in fh:
                    if line.strip():
                        item = json.loads(line)
                        self.rows[item["text"]] = item["row"]

    def _append(self, items: Iterable[tuple[str, dict[str, float]]]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as fh:
            for text, row in items:
                fh.write(json.dumps({"text": text, "row": row}, ensure_ascii=False) + "\n")

    def fill(
        self,
        scorer,
        sentences: Sequence[str],
        *,
        n_jobs: int = 1,
        batch: int = 64,
        progress: bool = True,
        load: tuple[str | None, Mapping[str, Any]] | None = None,
        desc: str = "features",
    ) -> None:
        """Compute the rows of `sentences` not yet stored (each taken whole, as one sentence).
        `load`: (model, config) for worker processes to load the same model with
        (`load_configured`); without it, or with `n_jobs` 1, rows are computed here."""
        todo = list(dict.fromkeys(s for s in sentences if s not in self.rows))
        if not todo:
            return
        chunks = [todo[i : i + batch] for i in range(0, len(todo), batch)]
        bar = tqdm(total=len(todo), desc=desc, unit=" sent", disable=not progress, leave=False)
        pool = None
        if n_jobs > 1 and load is not None and len(chunks) > 1:
            import multiprocessing

            pool = multiprocessing.get_context("spawn").Pool(
                n_jobs, initializer=_init_worker, initargs=load
            )
            results = pool.imap(_rows_chunk, chunks)
        else:
            results = (scorer.sentence_rows(c) for c in chunks)
        try:
            for chunk, rows in zip(chunks, results, strict=True):
                self.rows.update(zip(chunk, rows, strict=True))
                self._append(zip(chunk, rows, strict=True))  # kept even if a later chunk fails
                bar.update(len(chunk))
        finally:
            if pool is not None:
                pool.close()
                pool.join()
            bar.close()

    def get(self, sentences: Sequence[str]) -> list[dict[str, float]]:
        return [self.rows[s] for s in sentences]
