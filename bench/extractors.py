"""Feature extraction speed per extractor and all together, and each feature's AUC.

Speed: `--sentences` sentences of 15-25 words (Reuters test when ../shared is there). Baseline in
the same run: spaCy's bare `nlp.pipe` over the same texts, both cores (`n_process=2`). Then each
extractor alone on the shared parse (one process: the parse is done once, outside the timing),
and all extractors together, parsing included, in `--jobs` worker processes (what `fluency
train` and `fluency features` do).

AUC (`--auc`): how well each feature alone separates the real sentences from (a) the same words
shuffled and (b) the same sentence with one adjacent swap; 0.5 is chance, below 0.5 means the
feature is lower for real text. Paired: the share of sentences whose feature beats its own
variant's (ties half).

Usage: python -m bench.extractors [--sentences 1000] [--jobs 2] [--auc] [--batch 32 128]
"""

from __future__ import annotations

import random
import time

import numpy as np
from sklearn.metrics import roc_auc_score

from bench._args import add_jobs, add_sentences, parser
from bench._data import sentences
from features.extract import extract
from features.parsing import load_nlp, parse
from features.registry import all_specs
from features.resources import Resources
from training.gleu.svm import featurize, featurize_chunk, init_worker


def _shuffle(text: str, rng: random.Random) -> str:
    words = text.split()
    rng.shuffle(words)
    return " ".join(words)


def _swap(text: str, rng: random.Random) -> str:
    words = text.split()
    i = rng.randrange(len(words) - 1)
    words[i], words[i + 1] = words[i + 1], words[i]
    return " ".join(words)


def speed(texts: list[str], jobs: int, batches: tuple[int, ...] = (32, 128)) -> None:
    names = [s.name for s in all_specs()]
    nlp = load_nlp()
    t0 = time.perf_counter()
    for _ in nlp.pipe(texts, batch_size=256, n_process=jobs):
        pass
    base = len(texts) / (time.perf_counter() - t0)
    print(f"{len(texts)} sentences, mean {np.mean([len(t.split()) for t in texts]):.1f} words")
    print(f"{'what':44s} sent/s   ratio to baseline")
    print(f"{'baseline: spaCy nlp.pipe, ' + str(jobs) + ' processes':44s} {base:7.0f}   1.00")
    resources = Resources()
    parsed = parse(texts)
    extract(parsed[:2], names, resources)  # load every component before timing
    for name in names:
        t0 = time.perf_counter()
        extract(parsed, [name], resources)
        rate = len(texts) / (time.perf_counter() - t0)
        print(f"{name + ' alone (1 process, parse excluded)':44s} {rate:7.0f}   {rate / base:.2f}")
    t0 = time.perf_counter()
    featurize(texts, names, n_jobs=jobs, progress=False)
    rate = len(texts) / (time.perf_counter() - t0)
    label = f"all, parsing included, {jobs} processes, cold"
    print(f"{label:44s} {rate:7.0f}   {rate / base:.2f}")
    for batch in batches:
        rate = warm_rate(texts, names, jobs, batch)
        label = f"all, parsing included, {jobs} processes, warm, {batch}/batch"
        print(f"{label:44s} {rate:7.0f}   {rate / base:.2f}")
    print(
        "cold: what `fluency train` / `fluency features` see (batches of 128), worker start-up and"
    )
    print(
        "loading every component included; warm: the same workers, loaded before the clock starts."
    )
    print("Batch: sentences a worker parses and extracts together (spaCy and benepar batch them):")
    print("32 is a server's request, 128 `fluency train`, 512 `fluency score`.")


def warm_rate(texts: list[str], names: list[str], jobs: int, batch: int = 32) -> float:
    """Steady-state rate: `jobs` spawned workers, each with every component loaded first."""
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    args = (names, Resources(), True, True)
    with ctx.Pool(jobs, initializer=init_worker, initargs=args) as pool:
        pool.map(time.sleep, [0.5] * jobs * 2, chunksize=1)  # every worker has started and loaded
        chunks = [texts[i : i + batch] for i in range(0, len(texts), batch)]
        t0 = time.perf_counter()
        for _ in pool.imap(featurize_chunk, chunks):
            pass
        return len(texts) / (time.perf_counter() - t0)


def auc(texts: list[str], jobs: int) -> None:
    rng = random.Random(7)
    shuffled = [_shuffle(t, rng) for t in texts]
    swapped = [_swap(t, rng) for t in texts]
    rows = featurize(texts + shuffled + swapped, None, n_jobs=jobs, progress=False)
    n = len(texts)
    real, shuf, swap = rows[:n], rows[n : 2 * n], rows[2 * n :]
    print(f"\n{'feature':36s} {'AUC shuffled':>12s} {'AUC swap':>9s} {'paired swap':>12s}")
    for column in rows[0]:
        r = np.array([x[column] for x in real])
        values = []
        for other in (shuf, swap):
            o = np.array([x[column] for x in other])
            values.append(roc_auc_score([1] * n + [0] * n, np.concatenate([r, o])))
        o = np.array([x[column] for x in swap])
        paired = np.mean(r > o) + 0.5 * np.mean(r == o)
        print(f"{column:36s} {values[0]:12.3f} {values[1]:9.3f} {paired:12.3f}")


def main() -> None:
    ap = parser(__doc__)
    add_sentences(ap, 1000)
    add_jobs(ap, 2)
    ap.add_argument("--auc", action="store_true", help="also each feature's AUC")
    ap.add_argument(
        "--batch",
        type=int,
        nargs="+",
        default=[32, 128],
        help="sentences per worker batch for the warm rate (default: 32 128)",
    )
    args = ap.parse_args()
    texts = sentences(args.sentences)
    speed(texts, args.jobs, tuple(args.batch))
    if args.auc:
        auc(texts, args.jobs)


if __name__ == "__main__":
    main()
