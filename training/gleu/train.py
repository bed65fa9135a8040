"""Fit a GLEU fluency model (Mutton et al. 2007, section 4) and save it as a bundle: `fluency
train`, the data and the fits being `training.gleu.svm`'s.

Positives are real corpus sentences; negatives are glued word sequences (section 3.2) of several
sequence sizes plus real errors (training/gleu/negatives.py), each negative as long as a real
sentence drawn at random, so length alone tells nothing. Features are extracted once; kernel and C
are chosen by stratified cross-validation on the extracted features (no re-parsing); held-out
classification accuracy is reported in the card.

`--tier` (default: `default`) trains with that shipped tier's extractors and options, as its
card records them (`training.gleu.tiers`); an option given on the command line wins. The tier's
heads are carried over to the new GLEU stage (`training.gleu.carry`), so the bundle scores on
people's scale (`fluency`) as the tier does; `--no-heads` leaves them out (scores are then the
GLEU distance, `gleu`, until `fluency calibrate` fits a head).

    fluency train --corpus brown --out models/brown --sentences 1000 --jobs 2
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
from training.gleu.negatives import ALL_ERROR_KINDS
from training.gleu.svm import LEVELS, featurize, fit, fit_rank, held_out_split, make_dataset
from training.gleu.tiers import TIERS, resolve

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
    ap.add_argument(
        "--tier",
        choices=TIERS,
        default="default",
        help="the shipped tier whose recipe (extractors and the options below, from its card) "
        "is followed and whose heads are carried over (default: default); an option given "
        "here wins over the recipe's",
    )
    ap.add_argument(
        "--no-heads",
        action="store_true",
        help="do not carry the tier's heads over: the bundle then scores the GLEU distance "
        "(gleu) until fluency calibrate fits a head on your ratings",
    )
    ap.add_argument("--features", nargs="*", default=None, help="extractors (default: the tier's)")
    ap.add_argument("--glue-sizes", type=int, nargs="*", default=None)
    ap.add_argument("--error-share", type=float, default=None)
    ap.add_argument(
        "--lowercase-share",
        type=float,
        default=None,
        help="share of all texts (every kind alike) lower-cased, for lower-cased system outputs",
    )
    ap.add_argument(
        "--bare-share",
        type=float,
        default=None,
        help="share of all texts (every kind alike) without final punctuation",
    )
    ap.add_argument(
        "--error-kinds",
        nargs="+",
        choices=ALL_ERROR_KINDS,
        default=None,
        help="one-error negatives, cycled (training/gleu/negatives.py)",
    )
    add_jobs_option(ap, default=2, help="feature-extraction processes, then fits at a time")
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
        default=None,
        help="kernels cross-validation chooses among for --objective rank (rbf: a Nystroem "
        "map; it fits the synthetic levels better but agrees worse with people)",
    )
    ap.add_argument(
        "--levels",
        choices=LEVELS,
        default=None,
        help="--objective rank: binary (default: real above every generated text, tied; agrees "
        "better with people on ../shared/dev) or graded (real > one error > l=8 > ... > l=1)",
    )
    ap.add_argument(
        "--passage-share",
        type=float,
        default=None,
        help="share of the corpus items that are 2-3 consecutive sentences kept together (real "
        "multi-sentence text, as generators write); 0: single sentences only",
    )
    ap.add_argument(
        "--objective",
        choices=("classify", "rank"),
        default=None,
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
    out = Path(args.out)
    given = {k: getattr(args, k) for k in vars(args)}
    options = argparse.Namespace(**{**given, **resolve(given, args.tier, out.name)})
    corpus = read_corpus(
        args.corpus,
        seed=args.seed,
        max_sentences=max(args.sentences * 4, 20000),
        passage_share=options.passage_share,
    )
    texts, labels, kinds = make_dataset(
        corpus.sentences,
        n_positive=args.sentences,
        glue_sizes=options.glue_sizes,
        error_share=options.error_share,
        error_kinds=options.error_kinds,
        seed=args.seed,
        lowercase_share=options.lowercase_share,
        bare_share=options.bare_share,
    )
    resources = Resources()
    if args.lm:
        lm = Path(args.lm)
        resources = Resources(lm_path=lm / LM_FILE, unigram_path=lm / UNIGRAM_FILE)
    features = options.features
    rows = featurize(
        texts, features, resources, n_jobs=args.jobs, cache_dir=args.feature_cache or None
    )
    if options.objective == "rank":
        model, metrics = fit_rank(
            rows,
            kinds,
            seed=args.seed,
            features=features,
            kernels=options.kernels,
            levels=options.levels,
            n_jobs=args.jobs,
        )
    else:
        model, metrics = fit(rows, labels, seed=args.seed, features=features, n_jobs=args.jobs)
        metrics["objective"] = "classify"
    used = _resources_used(model.named_steps["extract"].features_, resources)
    card = {
        "name": out.name,
        "training": {
            "corpus": [str(c) for c in args.corpus],
            "corpus_sha256": corpus.sha256,
            "n_real": labels.count(1),
            "n_generated": labels.count(0),
            "generated_kinds": {k: kinds.count(k) for k in sorted(set(kinds))},
            "glue_sizes": list(options.glue_sizes),
            "error_share": options.error_share,
            "lowercase_share": options.lowercase_share,
            "bare_share": options.bare_share,
            "passage_share": options.passage_share,
            "seed": args.seed,
            "objective": options.objective,
            "levels": options.levels if options.objective == "rank" else None,
            "tier": args.tier,
            "arguments": {k: v for k, v in vars(options).items() if k not in ("func", "command")},
        },
        "metrics": metrics,
        "resources": used,
    }
    gleu_map = (
        None if args.no_heads else _gleu_map(args.tier, model, texts, rows, labels, used, args)
    )
    if gleu_map is not None:
        from training.gleu.carry import rescale

        rescale(model, gleu_map)  # before saving: the pipeline and gleu_stage.json agree
    from scorer.model import save_model
    from training.gleu.carry import carried_heads, write_card_entries

    save_model(model, out, card)
    heads = None
    if gleu_map is not None:
        n_real = sum(labels[i] for i in held_out_split(labels, args.seed)[1])
        fitted_on = (
            f"the {gleu_map.n_texts} texts the fit held out ({n_real} real, "
            f"{gleu_map.n_texts - n_real} generated), scored by this GLEU stage (refitted on "
            "all texts) and the shipped one"
        )
        columns = list(model.named_steps["vectorize"].get_feature_names_out())
        heads = carried_heads(args.tier, gleu_map, columns, fitted_on=fitted_on)
    write_card_entries(out, heads or {})
    print(f"saved {out}: held-out accuracy {metrics['held_out_accuracy']:.3f}, {metrics}")
    print(_next_steps(out, heads))
    return 0


def _gleu_map(tier, model, texts, rows, labels, resources, args):
    """The map putting `model`'s GLEU score on the shipped `tier`'s scale, fitted on the texts
    the fit held out (`training.gleu.carry`); None, with a warning, when the tier's heads cannot
    be carried over."""
    from training.gleu.carry import fit_gleu_map, shipped_scores

    if type(model.steps[-1][1]).__name__ != "RankSVM":
        logger.warning("heads are carried over to a ranking SVM only (--objective rank)")
        return None
    held = held_out_split(labels, args.seed)[1]
    held_texts, held_rows = [texts[i] for i in held], [rows[i] for i in held]
    new = model[1:].decision_function(held_rows)
    try:
        return fit_gleu_map(new, shipped_scores(tier, held_texts, held_rows, resources))
    except ValueError as exc:
        logger.warning("the %s tier's heads are not carried over: %s", tier, exc)
        return None


def _next_steps(out: Path, heads: dict | None) -> str:
    """What to do with the bundle: its scale, how to score with it, serve it, swap it into a
    running service and calibrate it."""
    name, where = out.name, out.resolve().parent
    if heads and heads.get("heads"):
        carried = heads["carried_heads"]
        m = carried["gleu_map"]
        genres = ", ".join(heads["heads"])
        scale = (
            f"scores are fluency: the {carried['from']} tier's heads ({genres}) carried over, "
            f"this GLEU stage put on its scale (x {m['slope']:.3f}, {m['intercept']:+.3f}; "
            f"r = {m['pearson']:.3f} on {m['n_texts']} held-out texts)"
        )
        if carried["left_out"]:
            scale += "; left out: " + "; ".join(
                f"{genre}, as {why}" for genre, why in carried["left_out"].items()
            )
    else:
        scale = "no head: scores are the GLEU distance (gleu), not fluency on people's scale"
    env = f"FLUENCY_MODELS_DIR={where}"
    return "\n".join(
        [
            f"{name}: {scale}.",
            "Bundles load only from inside FLUENCY_MODELS_DIR (joblib runs code as it loads):",
            f"  score:     {env} fluency score --model {name} < texts.txt",
            f"  serve:     {env} FLUENCY_MODELS={name} make run",
            f"  swap in:   a service started with {env}: POST /v1/admin/reload "
            f'{{"model": "{name}"}} (docs/service.md)',
            f"  calibrate: {env} fluency calibrate --model {name} --judgements RATINGS.jsonl "
            f"--genre NAME --out {where}/{name}-NAME (docs/calibrate.md)",
        ]
    )


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
