"""How good is a fluency model? The two checks of Mutton et al. (2007, sections 4-5).

- `glue_evaluation`: on held-out text (the Reuters test split), real sentences of n tokens and
  sentences glued from word sequences of length l (section 3.2) for each l: classification
  accuracy of real versus each l (score > 0 means "real", the SVM's own decision), and the
  Spearman correlation of the score with l, l = n standing for the real sentences (Table 2).
- `paper_svm_evaluation`: the paper's own protocol for its 81% (section 4): an SVM trained on
  real n-token sentences against l = 1 ones only (1,000 each, from a training corpus), tested on
  a new set split evenly between the two (300, from held-out text).
- Agreement with human ratings, model and single features side by side (the paper's Table 5),
  is `fluency benchmark` (`scorer.evidence.benchmark_run`), which lists every single feature.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from training.gleu.corpus import read_corpus
from training.gleu.negatives import Glue

# scikit-learn and SciPy load only when a command runs, so `fluency --help` stays fast.
if TYPE_CHECKING:
    from scorer.scoring import FluencyScorer

__all__ = [
    "GlueResult",
    "PaperSvmResult",
    "add_commands",
    "glue_evaluation",
    "paper_svm_evaluation",
]


@dataclass(frozen=True)
class GlueResult:
    n: int
    sizes: tuple[int, ...]
    per_size: int
    accuracy: dict[int, float]  # l -> share classified correctly (real: score > 0)
    mean_score: dict[int, float]
    auc: dict[int, float]  # l -> AUC of the score, real sentences against l-glued ones
    spearman: float  # score against l over every sentence, l = n for the real ones
    spearman_p: float
    seed: int

    def as_dict(self) -> dict:
        return {
            "n": self.n,
            "sizes": list(self.sizes),
            "per_size": self.per_size,
            "accuracy": {str(k): v for k, v in self.accuracy.items()},
            "accuracy_real_vs_l1": self.pairwise_accuracy(1),
            "auc": {str(k): v for k, v in self.auc.items()},
            "mean_score": {str(k): v for k, v in self.mean_score.items()},
            "spearman": self.spearman,
            "spearman_p": self.spearman_p,
            "seed": self.seed,
        }

    def pairwise_accuracy(self, l: int) -> float:
        """Accuracy over the real sentences and the l-glued ones together (the paper's figure)."""
        return (self.accuracy[self.n] + self.accuracy[l]) / 2


def glue_evaluation(
    scorer: FluencyScorer,
    corpus: Sequence[str],
    *,
    n: int = 24,
    sizes: Sequence[int] = (1, 2, 4, 8),
    per_size: int = 200,
    seed: int = 12345,
    max_sentences: int = 40000,
) -> GlueResult:
    """Score `per_size` real n-token sentences and `per_size` glued ones for each l in `sizes`,
    all drawn from `corpus` (held-out text: files, folders or NLTK names)."""
    from scipy import stats
    from sklearn.metrics import roc_auc_score

    rng = random.Random(seed)
    sentences = read_corpus(list(corpus), seed=seed, max_sentences=max_sentences).sentences
    real = [s for s in sentences if len(s) == n]
    if len(real) < per_size:
        raise ValueError(f"only {len(real)} sentences of {n} tokens in {corpus}; lower per_size")
    chosen = rng.sample(real, per_size)
    glue = Glue(sentences)
    texts, levels = ["".join(s).strip() for s in chosen], [n] * per_size
    for l in sizes:
        texts += [glue.generate(n, l, rng) for _ in range(per_size)]
        levels += [l] * per_size
    # Each item is one sentence of n tokens by construction: scored whole, never split at the
    # "." tokens the glue carries over from sentence ends (half the l = 1 items have one).
    scores = np.asarray(scorer.score(texts, by_sentence=False))
    levels_arr = np.asarray(levels)
    accuracy, mean, auc = {}, {}, {}
    real_scores = scores[levels_arr == n]
    for l in [n, *sizes]:
        s = scores[levels_arr == l]
        accuracy[l] = float(np.mean(s > 0) if l == n else np.mean(s <= 0))
        mean[l] = float(s.mean())
        if l != n:
            auc[l] = float(
                roc_auc_score([1] * len(real_scores) + [0] * len(s), np.r_[real_scores, s])
            )
    rho, p = stats.spearmanr(scores, levels_arr)
    return GlueResult(n, tuple(sizes), per_size, accuracy, mean, auc, float(rho), float(p), seed)


@dataclass(frozen=True)
class PaperSvmResult:
    n: int
    n_train: int  # per class
    n_test: int  # per class
    accuracy: float  # on the held-out test set, real vs l = 1
    cv_accuracy: float
    best_params: dict
    features: tuple[str, ...]
    seed: int


def _real_and_glued(corpus, n: int, per_class: int, rng: random.Random, seed: int):
    sentences = read_corpus(list(corpus), seed=seed, max_sentences=200_000).sentences
    real = [s for s in sentences if len(s) == n]
    if len(real) < per_class:
        raise ValueError(f"only {len(real)} sentences of {n} tokens in {corpus}; ask for fewer")
    glue = Glue(sentences)
    texts = ["".join(s).strip() for s in rng.sample(real, per_class)]
    texts += [glue.generate(n, 1, rng) for _ in range(per_class)]
    return texts, [1] * per_class + [0] * per_class


def paper_svm_evaluation(
    train_corpus: Sequence[str],
    test_corpus: Sequence[str],
    *,
    features: Sequence[str],
    resources=None,
    n: int = 24,
    per_class: int = 1000,
    test_per_class: int = 150,
    seed: int = 12345,
    n_jobs: int = 1,
    progress: bool = True,
) -> PaperSvmResult:
    """Mutton et al.'s classification check, section 4: an SVM (kernel and C by 5-fold CV, as
    `fluency train --objective classify`) on `per_class` real `n`-token sentences against as many
    glued from single words (l = 1), both from `train_corpus`; its accuracy on `test_per_class`
    of each drawn from `test_corpus` (the paper: 1,000 + 1,000, tested on 150 + 150, 81%)."""
    from training.gleu.svm import featurize, fit

    rng = random.Random(seed)
    train_texts, train_y = _real_and_glued(train_corpus, n, per_class, rng, seed)
    test_texts, test_y = _real_and_glued(test_corpus, n, test_per_class, rng, seed)
    rows = featurize(
        train_texts + test_texts, features, resources, progress=progress, n_jobs=n_jobs
    )
    model, metrics = fit(rows[: len(train_texts)], train_y, seed=seed, features=features)
    accuracy = float(model[1:].score(rows[len(train_texts) :], test_y))
    return PaperSvmResult(
        n,
        per_class,
        test_per_class,
        accuracy,
        metrics["cv_accuracy"],
        metrics["best_params"],
        tuple(features),
        seed,
    )


def _load(args, config):
    from scorer.scoring import load_configured

    return load_configured(args.model, config)


def cmd_glue_test(args, config) -> int:
    scorer = _load(args, config)
    result = glue_evaluation(
        scorer,
        args.corpus,
        n=args.n,
        sizes=args.sizes,
        per_size=args.per_size,
        seed=args.seed,
    )
    paper = None
    if args.train_corpus:
        paper = paper_svm_evaluation(
            args.train_corpus,
            args.corpus,
            features=scorer.card["features"],
            resources=scorer.resources,
            n=args.n,
            per_class=args.train_per_class,
            seed=args.seed,
            n_jobs=args.jobs,
        )
    if args.format == "json":
        out = result.as_dict()
        if paper is not None:
            out["paper_svm"] = {
                "accuracy_real_vs_l1": paper.accuracy,
                "cv_accuracy": paper.cv_accuracy,
                "best_params": paper.best_params,
                "n_train_per_class": paper.n_train,
                "n_test_per_class": paper.n_test,
            }
        print(json.dumps(out))
        return 0
    print(f"n = {result.n}, {result.per_size} sentences per level, seed {result.seed}")
    print("level\tmean score\taccuracy\taccuracy real vs this level\tAUC real vs this level")
    for l in [result.n, *result.sizes]:
        pair = "" if l == result.n else f"{result.pairwise_accuracy(l):.3f}\t{result.auc[l]:.3f}"
        print(
            f"{'real' if l == result.n else l}\t{result.mean_score[l]:.3f}\t"
            f"{result.accuracy[l]:.3f}\t{pair}"
        )
    print(
        f"Spearman(score, l) over l in {[*result.sizes, result.n]}: {result.spearman:.3f} "
        f"(p = {result.spearman_p:.2g})"
    )
    if paper is not None:
        print(
            f"the paper's protocol: SVM on {paper.n_train} real vs {paper.n_train} l=1 sentences "
            f"from {' '.join(args.train_corpus)} ({paper.best_params}, CV accuracy "
            f"{paper.cv_accuracy:.3f}); accuracy on {paper.n_test} + {paper.n_test} held-out: "
            f"{paper.accuracy:.3f}"
        )
    return 0


def add_commands(sub) -> None:
    from scorer.commands.options import add_jobs_option, add_model_option

    glue = sub.add_parser(
        "glue-test",
        help="Mutton et al.'s test: real n-token sentences vs glued ones, accuracy and Spearman",
    )
    add_model_option(glue)
    glue.add_argument("--corpus", nargs="+", required=True, help="held-out text (Reuters test)")
    glue.add_argument("--n", type=int, default=24, help="sentence length in tokens")
    glue.add_argument("--sizes", type=int, nargs="+", default=[1, 2, 4, 8])
    glue.add_argument("--per-size", type=int, default=200)
    glue.add_argument("--seed", type=int, default=12345)
    glue.add_argument("--format", choices=("table", "json"), default="table")
    glue.add_argument(
        "--train-corpus",
        nargs="+",
        help="also run the paper's protocol: an SVM trained on real vs l=1 sentences from this "
        "text (not the LM's), tested on 150 + 150 from --corpus",
    )
    glue.add_argument("--train-per-class", type=int, default=1000)
    add_jobs_option(glue, help="feature processes (--train-corpus)")
    glue.set_defaults(func=cmd_glue_test)
