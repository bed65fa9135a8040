"""Feature rows of texts: the one way from texts to the rows a model reads.

Scoring, the benchmark, calibration, training and model comparisons all ask the same question,
"the feature rows of these texts, as these extractors compute them", and all get their answer
here (`FeatureRows.rows`):

- each text is taken whole, as one sentence (splitting and placeholders are the caller's);
- a row depends only on the text, the extractors, the artefacts they read (LM, unigram table,
  constituency parser: by SHA-256) and the spaCy pipeline (by name and version), so that is its
  key (`RowKey`): models that share extractors and artefacts share rows;
- rows come from a bounded in-memory cache (`memory`, least recently used out first: a
  service's reranker sees the same candidates again and again), else from a store on disk
  (`cache_dir`: one JSON-lines file per key, appended to, so a second run, a retrained SVM or
  another command over the same texts parses nothing; a key whose extractors are a subset of a
  stored key's, with the same artefacts, takes its rows from that store, and the columns of
  several stores add up), else they are
  computed: parsed once and extracted, in this process or, with `n_jobs` > 1, in spawned worker
  processes (`features.extract.feature_chunks`), with a progress bar when asked.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from array import array
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from features import registry
from features.extract import extract, feature_chunks
from features.parsing import parse, pipeline_name
from features.resources import Resources
from features.sentence import Sentence

__all__ = ["FeatureCache", "FeatureRows", "RowKey", "RowStore", "artefact_sha256"]

log = logging.getLogger(__name__)

META_FILE = "meta.json"
ROWS_FILE = "rows.jsonl"

_HASHES: dict[tuple[str, int, int], str] = {}


def artefact_sha256(path: str | Path) -> str:
    """SHA-256 of a file, remembered per (path, size, mtime) in this process; "" if absent."""
    path = Path(path)
    try:
        st = path.stat()
    except OSError:
        return ""
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    if key not in _HASHES:
        digest = hashlib.sha256()
        with path.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
        _HASHES[key] = digest.hexdigest()
    return _HASHES[key]


@dataclass(frozen=True)
class RowKey:
    """What a feature row depends on: per extractor, the SHA-256 of each artefact it reads; the
    columns; the spaCy pipeline."""

    extractors: tuple[tuple[str, tuple[tuple[str, str], ...]], ...]
    columns: tuple[str, ...]
    spacy: str

    @classmethod
    def of(cls, features: Sequence[str], resources: Resources) -> RowKey:
        extractors, columns = [], []
        for name in features:
            spec = registry.get(name)
            arts = tuple((a.key, artefact_sha256(a.path(resources))) for a in spec.artefacts)
            extractors.append((name, arts))
            columns.extend(f"{name}/{n}" for n in spec.names)
        return cls(tuple(extractors), tuple(columns), pipeline_name(resources.spacy_model))

    def meta(self) -> dict[str, Any]:
        return {
            "extractors": {name: dict(arts) for name, arts in self.extractors},
            "columns": list(self.columns),
            "spacy": self.spacy,
        }

    @property
    def digest(self) -> str:
        text = json.dumps(self.meta(), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def served_by(self, donor: Mapping[str, Any]) -> set[str]:
        """This key's extractors whose columns a store with meta `donor` holds exactly as they
        compute them: same spaCy pipeline, the extractor there with the same artefacts."""
        if donor.get("spacy") != self.spacy:
            return set()
        theirs = donor.get("extractors", {})
        return {name for name, arts in self.extractors if theirs.get(name) == dict(arts)}


class FeatureCache:
    """Rows of texts already seen, least recently used out first, at most `size` (0: none).

    Not functools.lru_cache: hits must be found before parsing, for a whole batch, and the
    misses computed together. Thread-safe (a gthread worker's cheap requests read it too).
    A row is kept as its values in an `array` of doubles beside its column names, shared by
    every row of the same columns: the same floats back, in a fraction of a dict's memory (a
    row of the neural tier's 616 columns: 5.2 KiB against 27 KiB as a dict of floats)."""

    def __init__(self, size: int):
        self.size = max(0, int(size))
        self._rows: OrderedDict[str, tuple[tuple[str, ...], array]] = OrderedDict()
        self._columns: dict[tuple[str, ...], tuple[str, ...]] = {}
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def get(self, text: str) -> dict[str, float] | None:
        with self._lock:
            found = self._rows.get(text)
            if found is None:
                self.misses += 1
                return None
            self._rows.move_to_end(text)
            self.hits += 1
        columns, values = found
        return dict(zip(columns, values, strict=True))

    def put(self, text: str, row: Mapping[str, float]) -> None:
        if not self.size:
            return
        columns = tuple(row)
        values = array("d", (float(row[c]) for c in columns))
        with self._lock:
            if len(self._columns) > 64:  # rows of ever other columns: share no more than these
                self._columns.clear()
            columns = self._columns.setdefault(columns, columns)
            self._rows[text] = (columns, values)
            self._rows.move_to_end(text)
            while len(self._rows) > self.size:
                self._rows.popitem(last=False)

    def __len__(self) -> int:
        return len(self._rows)


class RowStore:
    """{text: row} of one `RowKey`, kept in `<cache_dir>/<digest>/rows.jsonl` (one {"text",
    "row"} a line, appended to) beside the key's `meta.json`."""

    def __init__(self, cache_dir: str | Path, key: RowKey):
        self.folder = Path(cache_dir) / key.digest
        self.path = self.folder / ROWS_FILE
        self.key = key
        self.rows: dict[str, dict[str, float]] = dict(self._read(self.path))

    @staticmethod
    def _read(path: Path) -> Iterable[tuple[str, dict[str, float]]]:
        if not path.is_file():
            return
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                try:
                    item = json.loads(line)
                except ValueError:  # a line cut short by a run that was killed: skip it
                    continue
                yield item["text"], item["row"]

    def add(self, items: Sequence[tuple[str, Mapping[str, float]]]) -> None:
        """Keep `items` here and on disk: one write per call, so a run killed later keeps them
        and processes appending to the same store do not interleave within a line."""
        if not items:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        meta = self.folder / META_FILE
        if not meta.is_file():
            meta.write_text(json.dumps(self.key.meta(), indent=1, sort_keys=True) + "\n")
        lines = "".join(
            json.dumps({"text": t, "row": dict(r)}, ensure_ascii=False) + "\n" for t, r in items
        )
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(lines)
        self.rows.update((t, dict(r)) for t, r in items)

    def borrow(self, wanted: Iterable[str]) -> None:
        """Take the rows of `wanted` that sibling stores hold: each store gives the columns of
        the extractors it computed with the same artefacts (`RowKey.served_by`), and a text is
        taken when its stores give every column between them (the parsers' store and a neural
        model's store make the rows of a model that reads both, parsing nothing again)."""
        wanted = {t for t in wanted if t not in self.rows}
        if not wanted or not self.folder.parent.is_dir():
            return
        columns = self.key.columns
        parts: dict[str, dict[str, float]] = {}
        for sibling in sorted(self.folder.parent.iterdir()):
            if sibling == self.folder or not (sibling / ROWS_FILE).is_file():
                continue
            try:
                donor = json.loads((sibling / META_FILE).read_text())
            except (OSError, ValueError):
                continue
            served = self.key.served_by(donor)
            given = [c for c in columns if c.split("/", 1)[0] in served]
            if not given:
                continue
            n = 0
            for t, row in self._read(sibling / ROWS_FILE):
                if t in wanted and all(c in row for c in given):
                    parts.setdefault(t, {}).update((c, row[c]) for c in given)
                    n += 1
            log.info("%d partial rows (%d columns) from %s", n, len(given), sibling)
            complete = [t for t in wanted if len(parts.get(t, ())) == len(columns)]
            self.add([(t, {c: parts[t][c] for c in columns}) for t in complete])
            wanted -= set(complete)
            if not wanted:
                break


# Components whose extractors read a sentence's text alone, never its parse (SmolLM2 tokenizes
# the text itself): rows of such extractors only are made without parsing.
TEXT_ONLY = frozenset({"neural"})


class FeatureRows:
    """Texts in, feature rows out, for one set of extractors and resources (see the module).

    `memory`: rows kept in this process (least recently used out first; 0 keeps none);
    `batch`: texts parsed together when rows are stored, shown or computed by workers."""

    def __init__(
        self,
        features: Sequence[str],
        resources: Resources | None = None,
        *,
        memory: int = 0,
        batch: int = 64,
    ):
        self.features = tuple(features)
        self.resources = resources or Resources()
        self.memory = FeatureCache(memory)
        self.batch = batch
        self._key: RowKey | None = None
        self._stores: dict[str, RowStore] = {}
        self._lock = threading.Lock()
        self.n_computed = 0  # rows this object has parsed and extracted (not found anywhere)

    @property
    def key(self) -> RowKey:
        if self._key is None:
            self._key = RowKey.of(self.features, self.resources)
        return self._key

    def store(self, cache_dir: str | Path) -> RowStore:
        """The on-disk store of this key under `cache_dir`, read once per process."""
        path = str(Path(cache_dir).resolve())
        with self._lock:
            if path not in self._stores:
                self._stores[path] = RowStore(path, self.key)
            return self._stores[path]

    def extract(self, sentences: Sequence[Sentence]) -> list[dict[str, float]]:
        """Rows of parsed sentences (computed, then remembered in memory)."""
        rows = extract(sentences, self.features, self.resources)
        self.n_computed += len(rows)
        for sentence, row in zip(sentences, rows, strict=True):
            self.memory.put(sentence.text, row)
        return rows

    def annotate(self, texts: Sequence[str]) -> list[Sentence]:
        if all(registry.get(n).requires and set(registry.get(n).requires) <= TEXT_ONLY
               for n in self.features):  # fmt: skip
            return [Sentence(text=t, tokens=(), heads=(), deps=()) for t in texts]
        # No extractor (nor the accuracy module) reads lemmas or coarse POS: skipping the
        # attribute ruler and lemmatizer saves 40% of spaCy's time, trees and tags unchanged.
        return parse(texts, model=self.resources.spacy_model, lemmas=False)

    def rows(
        self,
        texts: Sequence[str],
        *,
        parsed: Mapping[str, Sentence] | None = None,
        cache_dir: str | Path | None = None,
        n_jobs: int = 1,
        progress: bool = False,
        desc: str = "features",
    ) -> list[dict[str, float]]:
        """One row per text, same order: from memory, else from the store under `cache_dir`,
        else from `parsed` (text -> Sentence, already parsed by the caller), else parsed and
        extracted, in `n_jobs` spawned processes when there is more than one batch."""
        texts = list(texts)
        rows: list[dict[str, float] | None] = [self.memory.get(t) for t in texts]
        store = self.store(cache_dir) if cache_dir is not None else None
        if store is not None:
            store.borrow(t for t, r in zip(texts, rows, strict=True) if r is None)
            for i, t in enumerate(texts):
                if rows[i] is None and t in store.rows:
                    rows[i] = dict(store.rows[t])
                    self.memory.put(t, rows[i])
        todo = list(dict.fromkeys(t for t, r in zip(texts, rows, strict=True) if r is None))
        if todo:
            fresh = dict(self._compute(todo, parsed or {}, store, n_jobs, progress, desc))
            rows = [fresh[t] if r is None else r for t, r in zip(texts, rows, strict=True)]
        return rows  # type: ignore[return-value]

    def _compute(self, todo, parsed, store, n_jobs, progress, desc):
        """(text, row) for every text of `todo`, parsed once; stored as each batch is done."""
        from tqdm import tqdm

        given = [t for t in todo if t in parsed]
        if given:
            got = list(zip(given, self.extract([parsed[t] for t in given]), strict=True))
            if store is not None:
                store.add(got)
            yield from got
        todo = [t for t in todo if t not in parsed]
        # Batches are for progress, stored partial results and workers; a call with none of
        # them (a service's request) parses all its texts at once, as one batch.
        size = self.batch if (store is not None or progress or n_jobs > 1) else len(todo) or 1
        chunks = [todo[i : i + size] for i in range(0, len(todo), size)]
        if not chunks:
            return
        jobs = n_jobs if len(chunks) > 1 else 1  # one batch: no worker start-up to pay for
        if jobs > 1:
            parts = feature_chunks(chunks, self.features, self.resources, n_jobs=jobs)
        else:
            parts = (self.extract(self.annotate(c)) for c in chunks)
        bar = tqdm(total=len(todo), desc=desc, unit=" sent", disable=not progress, leave=False)
        try:
            for chunk, part in zip(chunks, parts, strict=True):
                got = list(zip(chunk, part, strict=True))
                if jobs > 1:
                    self.n_computed += len(got)
                    for t, r in got:
                        self.memory.put(t, r)
                if store is not None:
                    store.add(got)  # kept even if a later batch fails
                bar.update(len(chunk))
                yield from got
        finally:
            bar.close()


def default_cache_dir() -> Path:
    """Where commands keep rows on disk unless told otherwise: FLUENCY_ROW_CACHE, else
    build/rows under the working folder."""
    return Path(os.environ.get("FLUENCY_ROW_CACHE") or "build/rows")
