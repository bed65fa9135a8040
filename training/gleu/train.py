"""Fit a GLEU fluency model (Mutton et al. 2007, section 4) and save it as a bundle.

Positives are real corpus sentences; negatives are glued word sequences (section 3.2) of several
sequence sizes plus real errors (training/gleu/negatives.py), each negative as long as a real
sentence drawn at random, so length alone tells nothing. Features are extracted once; kernel and C
are chosen by stratified cross-validation on the extracted features (no re-parsing); held-out
classification accuracy is reported in the card.

    python -m training.gleu.train --corpus ../shared/corpora/reuters21578/train.txt --out
    models/NAME
"""

from __future__ import annotations

import argparse
import logging
import random
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from features import registry
from features.extract import featurize_chunk, init_worker
from features.resources import (
    DEFAULT_LM_DIR,
    LM_FILE,
    MODELS_DIR,
    UNIGRAM_FILE,
    Resources,
)
from features.rows import FeatureRows
from training.gleu.corpus import read_corpus
from training.gleu.negatives import ALL_ERROR_KINDS, ERROR_KINDS, Glue, inject_errors

__all__ = [
    "add_commands",
    "featurize",
    "featurize_chunk",  # features.extract's, for the tools that pool workers themselves
    "fit",
    "init_worker",
    "main",
    "make_dataset",
]

logger = logging.getLogger(__name__)
GLUE_SIZES = (1, 2, 3, 4, 6, 8)


def make_dataset(
    sentences: Sequence[Sequence[str]],
    *,
    n_positive: int,
    glue_sizes: Sequence[int] = GLUE_SIZES,
    error_kinds: Sequence[str] = ERROR_KINDS,
    error_share: float = 0.25,
    seed: int = 12345,
    lowercase_share: float = 0.0,
    bare_share: float = 0.0,
) -> tuple[list[str], list[int], list[str]]:
    """Texts, labels (1 real, 0 generated) and the kind of each ("real", "l=4", "swap"...).

    `lowercase_share`: that share of the texts, drawn at random across all kinds, is lower-cased
    (many generators' outputs are: WebNLG 2017's are), so case tells the model nothing about the
    level and it learns what lower-cased fluent text looks like. `bare_share`: likewise, that
    share loses its final punctuation (and closing quotes), so where a text stops tells nothing
    either: system outputs and text windows often end without it."""
    rng = random.Random(seed)
    pool = list(sentences)
    positives = pool[:n_positive]
    rest = pool[n_positive:] or pool
    glue = Glue(rest)
    texts = ["".join(s).strip() for s in positives]
    kinds = ["real"] * len(texts)
    n_errors = round(n_positive * error_share) if error_kinds else 0
    n_glued = n_positive - n_errors
    for i in range(n_glued):
        l = glue_sizes[i % len(glue_sizes)]
        n = len(rng.choice(positives))
        texts.append(glue.generate(n, l, rng))
        kinds.append(f"l={l}")
    if n_errors:
        picked = rng.sample(rest, min(len(rest), n_errors * 2))
        for text, kind in inject_errors(picked, error_kinds, seed)[:n_errors]:
            texts.append(text)
            kinds.append(kind)
    if lowercase_share > 0:
        lower = random.Random(seed + 1)
        texts = [t.lower() if lower.random() < lowercase_share else t for t in texts]
    if bare_share > 0:
        bare = random.Random(seed + 2)
        texts = [_bare(t) if bare.random() < bare_share else t for t in texts]
    labels = [1 if k == "real" else 0 for k in kinds]
    return texts, labels, kinds


def _bare(text: str) -> str:
    """`text` without its final punctuation, closing quotes and brackets (never empty)."""
    return text.rstrip(" \t.!?;:\"')]\u2019\u201d") or text


def featurize(
    texts: Sequence[str],
    features: Sequence[str] | None = None,
    resources: Resources | None = None,
    batch: int = 128,
    progress: bool = True,
    n_jobs: int = 1,
    cache_dir: str | Path | None = None,
) -> list[dict[str, float]]:
    """Rows of `texts` for the model's extractors (all when `features` is None), from
    `features.rows.FeatureRows`: parsed once, in batches with a progress bar, in `n_jobs`
    spawned processes, kept under `cache_dir` when given (a second run over the same texts, or
    the benchmark's, parses nothing)."""
    from scorer.model import FeatureExtractor

    names = FeatureExtractor(tuple(features or ())).fit().features_
    source = FeatureRows(names, resources, batch=batch)
    return source.rows(texts, cache_dir=cache_dir, n_jobs=n_jobs, progress=progress)


def fit(
    rows: list[dict[str, float]],
    labels: Sequence[int],
    *,
    seed: int = 12345,
    features: Sequence[str] | None = None,
    n_jobs: int = 2,
    grid: dict | None = None,
) -> tuple[object, dict]:
    """Cross-validated SVM over extracted features; returns the full pipeline and metrics."""
    from sklearn.model_selection import GridSearchCV, StratifiedKFold, train_test_split

    from scorer.model import build_model

    y = np.asarray(labels)
    idx = np.arange(len(rows))
    train_idx, test_idx = train_test_split(idx, test_size=0.2, random_state=seed, stratify=y)
    model = build_model(features=tuple(features or ()), seed=seed)
    model.named_steps["extract"].fit()
    tail = model[1:]
    grid = grid or {"svm__kernel": ["linear", "rbf"], "svm__C": [0.1, 1.0, 10.0]}
    search = GridSearchCV(
        tail,
        grid,
        cv=StratifiedKFold(5, shuffle=True, random_state=seed),
        scoring="accuracy",
        n_jobs=n_jobs,
    )
    t0 = time.perf_counter()
    search.fit([rows[i] for i in train_idx], y[train_idx])
    held_out = float(search.score([rows[i] for i in test_idx], y[test_idx]))
    # Refit on everything with the chosen settings: the held-out figure is already recorded.
    model.set_params(**search.best_params_)
    model[1:].fit(rows, y)
    metrics = {
        "cv_accuracy": float(search.best_score_),
        "held_out_accuracy": held_out,
        "best_params": {k: v for k, v in search.best_params_.items()},
        "n_train": len(train_idx),
        "n_held_out": len(test_idx),
        "fit_seconds": round(time.perf_counter() - t0, 1),
    }
    return model, metrics


LEVELS = ("graded", "binary")


def level(kind: str, levels: str = "graded") -> float:
    """Rank of a generated kind for the ranking objective. `graded`: real sentences on top,
    then one real error (swap, drop...), then glued text by sequence length (longer sequences
    read better), then "noise" (no English words left at all). `binary`: real on top, every
    generated kind below it and tied (the ranking SVM then maximises the AUC of real against
    generated, the paper's classification turned into a ranking)."""
    if levels not in LEVELS:
        raise ValueError(f"levels must be one of {LEVELS}, got {levels!r}")
    if levels == "binary":
        return 100.0 if kind == "real" else 0.0
    if kind == "real":
        return 100.0
    if kind == "noise":  # symbols and other scripts in place of words: below any word salad
        return 0.0
    if kind.startswith("l="):
        return float(kind[2:])
    return 50.0


def fit_rank(
    rows: list[dict[str, float]],
    kinds: Sequence[str],
    *,
    seed: int = 12345,
    features: Sequence[str] | None = None,
    grid: dict | None = None,
    kernels: Sequence[str] = ("linear",),
    levels: str = "binary",
) -> tuple[object, dict]:
    """A ranking SVM over `level(kind)`; kernel (among `kernels`) and C chosen by 5-fold CV on
    Spearman with the level.

    Linear only by default: with the RBF map also offered, CV picks it, but it agrees far worse
    with people on every ../shared/dev set: it fits the generators' artefacts, not fluency.

    `levels="binary"` (default) ranks real text above every generated kind, all tied; "graded"
    also orders the generated kinds, which spends the weights on telling l = 1 from l = 2, a
    distinction people's judgements of real system output never ask for, and agrees worse with
    them. The grid reaches C = 0.001 because CV chooses small C here. Figures: docs/model.md."""
    from scipy.stats import spearmanr
    from sklearn.metrics import make_scorer
    from sklearn.model_selection import GridSearchCV, StratifiedKFold, train_test_split

    from scorer.model import build_model

    y = np.asarray([level(k, levels) for k in kinds])
    real = (y == 100.0).astype(int)
    idx = np.arange(len(rows))
    train_idx, test_idx = train_test_split(idx, test_size=0.2, random_state=seed, stratify=real)
    model = build_model(features=tuple(features or ()), seed=seed, objective="rank")
    model.named_steps["extract"].fit()
    spearman = make_scorer(
        lambda truth, score: spearmanr(truth, score).statistic, response_method="decision_function"
    )
    search = GridSearchCV(
        model[1:],
        grid or {"svm__kernel": list(kernels), "svm__C": [0.001, 0.01, 0.1, 1.0]},
        cv=StratifiedKFold(5, shuffle=True, random_state=seed),
        scoring=spearman,
        n_jobs=1,
    )
    t0 = time.perf_counter()
    # StratifiedKFold stratifies on y: the levels, so every fold has every level.
    search.fit([rows[i] for i in train_idx], y[train_idx])
    held = search.best_estimator_.decision_function([rows[i] for i in test_idx])
    model.set_params(**search.best_params_)
    model[1:].fit(rows, y)
    metrics = {
        "objective": "rank",
        "levels": levels,
        "cv_spearman": float(search.best_score_),
        "held_out_spearman": float(spearmanr(y[test_idx], held).statistic),
        "held_out_accuracy": float(np.mean((held > 0) == real[test_idx].astype(bool))),
        "best_params": dict(search.best_params_),
        "n_train": len(train_idx),
        "n_held_out": len(test_idx),
        "fit_seconds": round(time.perf_counter() - t0, 1),
    }
    return model, metrics


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="fluency train", description=__doc__)
    add_arguments(ap)
    return run(ap.parse_args(argv))


def add_arguments(ap: argparse.ArgumentParser) -> None:
    from scorer.commands.options import add_jobs_option

    ap.add_argument(
        "--corpus",
        nargs="+",
        required=True,
        help="text files, folders, or NLTK corpus names (brown, treebank)",
    )
    ap.add_argument("--out", required=True, help="output folder, e.g. models/NAME")
    ap.add_argument("--sentences", type=int, default=3000, help="real sentences (= negatives)")
    ap.add_argument("--seed", type=int, default=12345)
    ap.add_argument("--features", nargs="*", default=None, help="extractors (default: all)")
    ap.add_argument("--glue-sizes", type=int, nargs="*", default=list(GLUE_SIZES))
    ap.add_argument("--error-share", type=float, default=0.25)
    ap.add_argument(
        "--lowercase-share",
        type=float,
        default=0.0,
        help="share of all texts (every kind alike) lower-cased, for lower-cased system outputs",
    )
    ap.add_argument(
        "--bare-share",
        type=float,
        default=0.0,
        help="share of all texts (every kind alike) without final punctuation",
    )
    ap.add_argument(
        "--error-kinds",
        nargs="+",
        choices=ALL_ERROR_KINDS,
        default=list(ERROR_KINDS),
        help="one-error negatives, cycled (training/gleu/negatives.py)",
    )
    add_jobs_option(ap, default=2, help="feature-extraction processes")
    ap.add_argument(
        "--lm",
        help="language-model folder (fluency train-lm); default: the shipped "
        f"{DEFAULT_LM_DIR.relative_to(MODELS_DIR)}",
    )
    ap.add_argument(
        "--feature-cache",
        help="folder for feature rows (features.rows), keyed by text, extractors and artefacts, "
        "shared with fluency benchmark and calibrate (e.g. build/rows): a second run on the "
        "same data (another --objective) parses nothing. Texts are then batched differently, "
        "and benepar's padded batches differ in the last float digits: the model is equivalent "
        "but its model_sha256 is not the uncached run's",
    )
    ap.add_argument(
        "--kernels",
        nargs="+",
        choices=("linear", "rbf"),
        default=["linear"],
        help="kernels cross-validation chooses among for --objective rank (rbf: a Nystroem "
        "map; it fits the synthetic levels better but agrees worse with people)",
    )
    ap.add_argument(
        "--levels",
        choices=LEVELS,
        default="binary",
        help="--objective rank: binary (default: real above every generated text, tied; agrees "
        "better with people on ../shared/dev) or graded (real > one error > l=8 > ... > l=1)",
    )
    ap.add_argument(
        "--passage-share",
        type=float,
        default=0.0,
        help="share of the corpus items that are 2-3 consecutive sentences kept together (real "
        "multi-sentence text, as generators write); 0: single sentences only",
    )
    ap.add_argument(
        "--objective",
        choices=("classify", "rank"),
        default="rank",
        help="rank (default): ranking SVM over levels, which agrees better with people on "
        "../shared/dev; classify: SVM real vs generated, as in the paper",
    )


def add_commands(sub) -> None:
    """`fluency train`."""
    ap = sub.add_parser(
        "train",
        help="train a GLEU fluency model on a corpus (real sentences vs generated ones)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_arguments(ap)
    ap.set_defaults(func=lambda args, config: run(args))


def run(args: argparse.Namespace) -> int:
    corpus = read_corpus(
        args.corpus,
        seed=args.seed,
        max_sentences=max(args.sentences * 4, 20000),
        passage_share=args.passage_share,
    )
    texts, labels, kinds = make_dataset(
        corpus.sentences,
        n_positive=args.sentences,
        glue_sizes=args.glue_sizes,
        error_share=args.error_share,
        error_kinds=args.error_kinds,
        seed=args.seed,
        lowercase_share=args.lowercase_share,
        bare_share=args.bare_share,
    )
    resources = Resources()
    if args.lm:
        lm = Path(args.lm)
        resources = Resources(lm_path=lm / LM_FILE, unigram_path=lm / UNIGRAM_FILE)
    rows = featurize(
        texts, args.features, resources, n_jobs=args.jobs, cache_dir=args.feature_cache or None
    )
    if args.objective == "rank":
        model, metrics = fit_rank(
            rows,
            kinds,
            seed=args.seed,
            features=args.features,
            kernels=args.kernels,
            levels=args.levels,
        )
    else:
        model, metrics = fit(rows, labels, seed=args.seed, features=args.features, n_jobs=args.jobs)
        metrics["objective"] = "classify"
    out = Path(args.out)
    card = {
        "name": out.name,
        "training": {
            "corpus": [str(c) for c in args.corpus],
            "corpus_sha256": corpus.sha256,
            "n_real": labels.count(1),
            "n_generated": labels.count(0),
            "generated_kinds": {k: kinds.count(k) for k in sorted(set(kinds))},
            "glue_sizes": list(args.glue_sizes),
            "error_share": args.error_share,
            "lowercase_share": args.lowercase_share,
            "bare_share": args.bare_share,
            "passage_share": args.passage_share,
            "seed": args.seed,
            "objective": args.objective,
            "levels": args.levels if args.objective == "rank" else None,
            "arguments": {k: v for k, v in vars(args).items() if k not in ("func", "command")},
        },
        "metrics": metrics,
        "resources": _resources_used(model.named_steps["extract"].features_, resources),
    }
    from scorer.model import save_model

    save_model(model, out, card)
    print(f"saved {out}: held-out accuracy {metrics['held_out_accuracy']:.3f}, {metrics}")
    return 0


def _resources_used(features: Sequence[str], resources: Resources) -> dict[str, str]:
    """The artefacts this model's features are loaded from (each extractor declares them,
    `FeatureSpec.artefacts`), relative to the models folder when inside it, with their SHA-256,
    so `load_scorer` gives the model the very files it was trained with."""
    from scorer.bundle import sha256_file

    out: dict[str, str] = {}
    for name in features:
        for artefact in registry.get(name).artefacts:
            path = artefact.path(resources).resolve()
            if artefact.package and path == artefact.default.resolve():
                # A file of an installed package (the SmolLM2 weights): named by package, found
                # wherever that package is installed (scorer.artefacts.recorded_artefact).
                out[artefact.key] = f"{artefact.package}:{path.name}"
                out[f"{artefact.key}_sha256"] = sha256_file(path)
                continue
            try:
                out[artefact.key] = str(path.relative_to(MODELS_DIR.resolve()))
            except ValueError:
                out[artefact.key] = str(path)
            out[f"{artefact.key}_sha256"] = sha256_file(path)
    return out


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    raise SystemExit(main())
