"""`python -m training.heads.learned.store`: every rated output of the judged files read through
SmolLM2 once, kept under `build/states/store`, for the learned heads at any training size.

Each file's outputs, filled and read whole as the scorer reads them, in the file's own order,
are kept in shards of `SHARD` texts: the states after each of the graph's layers, both poolings
(`features.neural_states.pooled_states`, float32), and the summed log-probability. A shard is
written whole (to a temporary name, then renamed), so an interrupted run resumes at the first
shard missing; the folder's name holds the file's SHA-256, the graph's layers and the
placeholders, so a changed file or graph starts afresh. Progress shows per text. The worker
processes that read texts through SmolLM2 (`text_states`) serve `rows` too.

    python -m training.heads.learned.store --dev ../shared/dev --jobs 2
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import os
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
from tqdm import tqdm

__all__ = [
    "SHARD",
    "StoredFile",
    "chunk_states",
    "fill_store",
    "init_worker",
    "load_stored",
    "main",
    "store_folder",
    "text_states",
]

SHARD = 512  # texts a shard
_TASK = 16  # texts a worker task
DEFAULT_STORE = Path("build/states/store")


def init_worker() -> None:
    """A worker process's SmolLM2, one thread (`chunk_states` reads it)."""
    os.environ["OMP_NUM_THREADS"] = "1"
    global _LM
    from features.neural_lm import load_neural
    from features.resources import Resources

    _LM = Resources().get("neural", load_neural)


def chunk_states(texts: list[str]):
    """`pooled_states` of `texts` in a worker `init_worker` started."""
    from features.neural_states import pooled_states

    return pooled_states(_LM, texts)


def text_states(texts: Sequence[str], jobs: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`features.neural_states.pooled_states` of `texts`, in `jobs` spawned processes."""
    chunks = [list(texts[i : i + _TASK]) for i in range(0, len(texts), _TASK)]
    parts = []
    with ProcessPoolExecutor(
        max_workers=max(1, jobs),
        mp_context=multiprocessing.get_context("spawn"),
        initializer=init_worker,
    ) as pool:
        for part in tqdm(
            pool.map(chunk_states, chunks), total=len(chunks), desc="SmolLM2 states", unit=" chunk"
        ):
            parts.append(part)
    return tuple(np.concatenate([p[k] for p in parts]) for k in range(3))


class StoredFile:
    """One judged file's place in the store: its texts (filled), its folder and its shards."""

    def __init__(self, root: Path, name: str, sha256: str, texts: Sequence[str], key: list):
        digest = hashlib.sha256(json.dumps([sha256, *key]).encode()).hexdigest()[:12]
        self.name = name
        self.texts = list(texts)
        self.folder = Path(root) / f"{name}-{digest}"

    def shard_path(self, k: int) -> Path:
        return self.folder / f"shard-{k:05d}.npz"

    @property
    def n_shards(self) -> int:
        return -(-len(self.texts) // SHARD)

    def missing(self) -> list[int]:
        return [k for k in range(self.n_shards) if not self.shard_path(k).is_file()]

    @property
    def complete(self) -> bool:
        return not self.missing()


def store_folder(root: Path, path: Path, placeholders, layers) -> StoredFile:
    """The store's entry for the judged file at `path` (every output, in the file's order)."""
    from features.placeholders import fill_placeholders
    from scorer.evidence.benchmark_data import read_judged
    from scorer.evidence.genres import FLUENCY_FIELDS

    data = read_judged(path, human_field=FLUENCY_FIELDS.get(path.stem, "score"))
    texts = fill_placeholders(list(data.texts), placeholders)
    key = [list(layers), placeholders, SHARD]
    return StoredFile(root, data.name, data.sha256, texts, key)


def fill_store(files: Sequence[StoredFile], jobs: int) -> None:
    """Every missing shard of `files` computed in `jobs` spawned processes and written."""
    todo = [(f, k) for f in files for k in f.missing()]
    total = sum(len(f.texts) for f in files)
    done = total - sum(len(_shard_texts(f, k)) for f, k in todo)
    if not todo:
        return
    with (
        ProcessPoolExecutor(
            max_workers=max(1, jobs),
            mp_context=multiprocessing.get_context("spawn"),
            initializer=init_worker,
        ) as pool,
        tqdm(total=total, initial=done, desc="SmolLM2 states", unit=" text") as bar,
    ):
        for f, k in todo:
            texts = _shard_texts(f, k)
            tasks = [texts[i : i + _TASK] for i in range(0, len(texts), _TASK)]
            parts = []
            for part, task in zip(pool.map(chunk_states, tasks), tasks, strict=True):
                parts.append(part)
                bar.update(len(task))
            f.folder.mkdir(parents=True, exist_ok=True)
            tmp = f.folder / f".shard-{k:05d}.tmp.npz"
            np.savez(
                tmp,
                states=np.concatenate([p[0] for p in parts]),
                logprob=np.concatenate([p[1] for p in parts]),
            )
            tmp.replace(f.shard_path(k))


def _shard_texts(f: StoredFile, k: int) -> list[str]:
    return f.texts[k * SHARD : (k + 1) * SHARD]


def load_stored(f: StoredFile, rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(states [n, layers, poolings, hidden], summed log-probabilities [n]) of a complete entry,
    of `rows` (positions in the file's order) only where given."""
    missing = f.missing()
    if missing:
        raise FileNotFoundError(
            f"{f.name}: {len(missing)} of {f.n_shards} shards missing under {f.folder} "
            "(python -m training.heads.learned.store)"
        )
    states, sums = [], []
    for k in range(f.n_shards):
        with np.load(f.shard_path(k)) as z:
            states.append(z["states"])
            sums.append(z["logprob"])
    s, lp = np.concatenate(states), np.concatenate(sums)
    if len(lp) != len(f.texts):
        raise RuntimeError(f"{f.name}: {len(lp)} texts stored, {len(f.texts)} in the file")
    return (s, lp) if rows is None else (s[rows], lp[rows])


def main(argv: Sequence[str] | None = None) -> int:
    from features.neural_lm import load_neural
    from scorer import load_scorer

    ap = argparse.ArgumentParser(prog="python -m training.heads.learned.store", description=__doc__)
    ap.add_argument("--dev", default="../shared/dev", help="folder of *.jsonl judgement files")
    ap.add_argument("--files", nargs="*", default=(), help="these files of --dev only")
    ap.add_argument("--store", default=str(DEFAULT_STORE), help="the store's folder")
    ap.add_argument("--jobs", type=int, default=2, help="processes reading through SmolLM2")
    args = ap.parse_args(argv)
    scorer = load_scorer("neural")
    lm = scorer.resources.get("neural", load_neural)
    paths = [Path(args.dev) / n for n in args.files] or sorted(Path(args.dev).glob("*.jsonl"))
    files = [store_folder(Path(args.store), p, scorer.placeholders, lm.layers) for p in paths]
    fill_store(files, args.jobs)
    n = sum(len(f.texts) for f in files)
    print(f"{n} outputs of {len(files)} files stored under {args.store}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
