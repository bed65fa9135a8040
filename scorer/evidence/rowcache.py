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

__all__ = ["RowStore", "feature_key", "store_meta"]

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


META_FILE = "meta.json"


def store_meta(scorer) -> dict[str, Any]:
    """What a store's rows are, beside its key: the extractors and columns, the SHA-256 of each
    artefact each extractor reads, and the spaCy pipeline. Another model whose extractors are a
    subset, with the same artefacts, can take its rows from this store (`RowStore.fill`)."""
    from features import registry

    card = scorer.card
    res = card.get("resources", {})
    extractors = {}
    for name in card.get("features", []):
        keys = [a.key for a in registry.get(name).artefacts]
        extractors[name] = {k: res.get(f"{k}_sha256", "") for k in keys}
    return {
        "extractors": extractors,
        "columns": list(card.get("feature_columns", [])),
        "spacy": str(scorer.spacy_model or ""),
    }


def _can_lend(donor: Mapping[str, Any], meta: Mapping[str, Any]) -> bool:
    """True when every row of `donor` holds, exactly, what `meta`'s extractors would compute."""
    if not meta["extractors"] or donor.get("spacy") != meta["spacy"]:
        return False
    theirs = donor.get("extractors", {})
    return all(name in theirs and theirs[name] == arts for name, arts in meta["extractors"].items())


def _init_worker(model: str | None, config: Mapping[str, Any]) -> None:
    from scorer.scoring import load_configured

    _WORKER["scorer"] = load_configured(model, dict(config, FEATURE_CACHE=0))


def _rows_chunk(sentences: list[str]) -> list[dict[str, float]]:
    return _WORKER["scorer"].sentence_rows(sentences)


class RowStore:
    """{sentence: feature row} for one feature key, read from and appended to `path`.

    With `meta` (`store_meta`), the store's folder records it, and rows missing here are first
    taken from a sibling store (same file name, another feature key) whose extractors include
    these with the same artefacts: a model trained on a subset of another's extractors parses
    nothing the other has parsed. Rows depend only on the text, the extractor and its
    artefacts, so such a row is the row this model would compute."""

    def __init__(self, path: str | Path, meta: Mapping[str, Any] | None = None):
        self.path = Path(path)
        self.meta = dict(meta) if meta is not None else None
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
        if self.meta is not None:
            self._write_meta()
            todo = self._borrow(todo) if todo else todo
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

    def _write_meta(self) -> None:
        meta_path = self.path.parent / META_FILE
        if not meta_path.is_file():
            meta_path.parent.mkdir(parents=True, exist_ok=True)
            meta_path.write_text(json.dumps(self.meta, indent=1, sort_keys=True) + "\n")

    def _borrow(self, todo: list[str]) -> list[str]:
        """Take what sibling stores can lend; return the sentences still missing."""
        wanted = set(todo)
        columns = self.meta["columns"]
        for sibling in sorted(self.path.parent.parent.iterdir()):
            if sibling == self.path.parent or not (sibling / self.path.name).is_file():
                continue
            try:
                donor = json.loads((sibling / META_FILE).read_text())
            except (OSError, ValueError):
                continue
            if not _can_lend(donor, self.meta):
                continue
            found = []
            for text, row in RowStore(sibling / self.path.name).rows.items():
                if text in wanted and all(c in row for c in columns):
                    found.append((text, {c: row[c] for c in columns}))
                    wanted.discard(text)
            if found:
                log.info("%d rows taken from %s", len(found), sibling / self.path.name)
                self.rows.update(found)
                self._append(found)
            if not wanted:
                break
        return [t for t in todo if t in wanted]

    def get(self, sentences: Sequence[str]) -> list[dict[str, float]]:
        return [self.rows[s] for s in sentences]
