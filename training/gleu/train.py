"""Fit a GLEU fluency model (Mutton et al. 2007, section 4) and save it as a bundle: `fluency
train`, the data and the fits being `training.gleu.svm`'s.

Positives are real corpus sentences; negatives are glued word sequences (section 3.2) of several
sequence sizes plus real errors (training/gleu/negatives.py), each negative as long as a real
sentence drawn at random, so length alone tells nothing. Features are extracted once; kernel and C
are chosen by stratified cross-validation on the extracted features (no re-parsing); held-out
classification accuracy is reported in the card.

    python -m training.gleu.train --corpus ../shared/corpora/reuters21578/train.txt \\
        --out models/NAME
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Sequence
from pathlib import Path

from features import registry
from features.resources import (
    DEFAULT_LM_DIR,
    LM_FILE,
    MODELS_DIR,
    UNIGRAM_FILE,
    Resources,
)
from training.gleu.corpus import read_corpus
from training.gleu.negatives import ALL_ERROR_KINDS, ERROR_KINDS
from training.gleu.svm import GLUE_SIZES, LEVELS, featurize, fit, fit_rank, make_dataset

__all__ = ["add_arguments", "add_commands", "main", "run"]

logger = logging.getLogger(__name__)


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
