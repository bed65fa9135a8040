"""One call extracts every requested feature for a batch: parse once, run each extractor once;
and the same over many batches, in this process or in worker processes (`feature_chunks`)."""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Iterable, Iterator, Sequence

from features import registry
from features.errors import FeatureError
from features.parsing import parse
from features.resources import Resources, one_thread_per_process
from features.sentence import Sentence

__all__ = ["extract", "feature_chunks", "featurize_chunk", "init_worker"]

_WORKER: dict = {}


def extract(
    sentences: Sequence[Sentence],
    features: Sequence[str] | None = None,
    resources: Resources | None = None,
) -> list[dict[str, float]]:
    """`{"<extractor>/<name>": value}` per sentence, the same keys for every sentence.

    Every value is a finite float: an extractor that returns NaN or infinity, or a key it did not
    declare, is a bug caught here, not a model silently trained on garbage.
    """
    specs = registry.all_specs() if features is None else [registry.get(n) for n in features]
    resources = resources or Resources()
    rows: list[dict[str, float]] = [{} for _ in sentences]
    for spec in specs:
        values = spec.func(list(sentences), resources)
        if len(values) != len(sentences):
            raise FeatureError(f"{spec.name} gave {len(values)} rows for {len(sentences)} texts")
        for row, got in zip(rows, values, strict=True):
            if set(got) != set(spec.names):
                raise FeatureError(
                    f"{spec.name} yielded {sorted(got)}, but declared {sorted(spec.names)}"
                )
            for key, value in got.items():
                value = float(value)
                if not math.isfinite(value):
                    raise FeatureError(f"{spec.name}/{key} is {value}: extractors must be finite")
                row[f"{spec.name}/{key}"] = value
    return rows


def init_worker(
    names: Sequence[str], resources: Resources, pooled: bool = False, warm: bool = False
) -> None:
    """A worker's set-up (`feature_chunks`). `warm` loads every component now rather than on
    the first chunk (bench/extractors.py times a warm pool apart from its start-up)."""
    if pooled:
        one_thread_per_process()
    _WORKER["names"], _WORKER["resources"] = tuple(names), resources
    if warm:
        featurize_chunk(["A short sentence warms the parsers up."])


def featurize_chunk(texts: list[str]) -> list[dict[str, float]]:
    """Rows of raw texts, with the worker's extractors and resources (`init_worker`)."""
    # lemmas=False: no extractor reads lemmas or coarse POS (same trees and tags, 40% faster)
    resources = _WORKER["resources"]
    sentences = parse(texts, model=resources.spacy_model, lemmas=False)
    return extract(sentences, _WORKER["names"], resources)


def feature_chunks(
    chunks: Iterable[list[str]],
    features: Sequence[str],
    resources: Resources | None = None,
    *,
    n_jobs: int = 1,
) -> Iterator[list[dict[str, float]]]:
    """Feature rows per chunk of raw texts, in order, chunks read lazily.

    `n_jobs` > 1 runs chunks in that many worker processes, each loading the parsers itself
    (a few seconds; they are CPU-bound and hold the GIL, so threads would not help), with at
    most 2 chunks per worker in flight: a file of any length streams in bounded memory.
    Spawned, not forked: a parent that has already run torch (benepar) or Link Grammar can
    leave their thread pools locked in a forked child, which then hangs."""
    names = tuple(features)
    resources = resources or Resources()
    if n_jobs <= 1:
        init_worker(names, resources)
        yield from map(featurize_chunk, chunks)
        return
    import multiprocessing

    fresh = dataclasses.replace(resources, _cache={})
    pool = multiprocessing.get_context("spawn").Pool(
        n_jobs, initializer=init_worker, initargs=(names, fresh, True)
    )
    chunks = iter(chunks)
    try:
        while window := list(itertools.islice(chunks, 2 * n_jobs)):
            yield from pool.imap(featurize_chunk, window)
        pool.close()
    finally:
        pool.terminate()
        pool.join()
