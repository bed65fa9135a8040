"""Each extractor's share of the default's agreement with people, beside what it costs.

A general head is chosen by leaving one genre out (`training.heads.estimators.select`; `fluency
benchmark --protocol lodo --across-genres`). Here each genre is scored by a head chosen and fitted
on the other genres (`training.heads.selection.held_out.lodo_columns`, texts read as the default's
general head reads them unless `--aggregate` says otherwise) once with every column, then once
without each extractor's columns among the candidate inputs, and once on the GLEU stages of
`models/fast` (the default without Link Grammar, whose columns the GLEU stage itself also reads) and
`models/full` (with benepar).
A row's figures are the mean over files of rho and of per-input tau, each file scored by a head
that never saw its genre; "- all" is the drop against the first row, with a paired-bootstrap 95%
interval over inputs, pooled over files by their mean.

Cost: each extractor's milliseconds a sentence on the shared parse (one process, parse excluded)
and spaCy's parse itself, over `--sentences` sentences of 15-25 words.

Feature rows come from the benchmark's cache (`build/rows`): run `fluency benchmark --model full
--model default --model fast` over the same files first, or this parses them all.

Usage: python -m bench.ablation [--dev ../shared/dev] [--aggregate whole] [--samples 200]
"""

from __future__ import annotations

import json
import time

import numpy as np

from bench._args import add_sentences, parser
from bench._data import sentences
from features.resources import MODELS_DIR
from features.rows import default_cache_dir
from scorer.config import from_env
from scorer.evidence.benchmark import Pairs, agreement
from scorer.evidence.benchmark_run import file_columns, judgement_files
from scorer.evidence.genres import GENRES, genres_of
from training.heads.selection.held_out import lodo_columns

# What a fluency scorer claims to measure on the MT files: fluency errors only.
MT_FLUENCY = {"mqm_newstest2020_zhen": "scores.fluency", "mqm_newstest2021_zhen": "scores.fluency"}


def _without(files, prefix: str):
    """The benchmark's columns of each file with the features of one extractor taken out."""
    from dataclasses import replace

    return [
        replace(f, features={k: v for k, v in f.features.items() if not k.startswith(prefix)})
        for f in files
    ]


def held_out(files, genres, fit_genres) -> dict[str, np.ndarray]:
    scores, _ = lodo_columns(files, genres, across="genres", fit_genres=fit_genres)
    return scores


def summary(files, scores: dict[str, np.ndarray]) -> tuple[float, float]:
    rho, tau = [], []
    for f in files:
        a = agreement(scores[f.name], f.human, Pairs(f.human, f.groups))
        rho.append(a.spearman)
        if np.isfinite(a.kendall):
            tau.append(a.kendall)
    return float(np.mean(rho)), float(np.mean(tau)) if tau else float("nan")


def drop(files, scores, reference, n_samples: int, seed: int) -> dict[str, tuple[float, ...]]:
    """The mean over files of (this - reference), rho and tau, with a 95% percentile interval:
    each draw resamples every file's inputs (outputs, where a file has none) with replacement
    and averages the files' differences, so the interval is of the mean the table shows. (The
    benchmark's `group_bootstrap` gives one file's interval; this pools them.)"""
    from scipy.stats import spearmanr

    rng = np.random.default_rng(seed)
    prepared = []
    for f in files:
        pairs = Pairs(f.human, f.groups)
        a, b = scores[f.name], reference[f.name]
        prepared.append((f, pairs, a, b, pairs.group_taus(a), pairs.group_taus(b)))

    def rho(x, h):
        return spearmanr(x, h).statistic if np.ptp(x) > 0 else 0.0

    observed = {"spearman": [], "kendall": []}
    draws = {"spearman": np.zeros(n_samples), "kendall": np.zeros(n_samples)}
    n_tau = 0
    for f, pairs, a, b, ta, tb in prepared:
        observed["spearman"].append(rho(a, f.human) - rho(b, f.human))
        has_tau = pairs.has_groups and pairs.eligible.any()
        if has_tau:
            observed["kendall"].append(float(np.nanmean(ta) - np.nanmean(tb)))
            n_tau += 1
        units = pairs.n_groups if pairs.has_groups else len(f.human)
        for k in range(n_samples):
            pick = rng.integers(0, units, units)
            idx = np.concatenate([pairs.members[g] for g in pick]) if pairs.has_groups else pick
            draws["spearman"][k] += rho(a[idx], f.human[idx]) - rho(b[idx], f.human[idx])
            if has_tau:
                ok = pairs.eligible[pick]
                if ok.any():
                    draws["kendall"][k] += float(ta[pick][ok].mean() - tb[pick][ok].mean())
    out = {}
    for what, n in (("spearman", len(files)), ("kendall", n_tau)):
        if n:
            lo, hi = np.percentile(draws[what] / n, [2.5, 97.5])
            out[what] = (float(np.mean(observed[what])), float(lo), float(hi))
    return out


def costs(n: int) -> dict[str, float]:
    """Milliseconds a sentence: spaCy's parse, then each extractor on the shared parse."""
    from features.extract import extract
    from features.parsing import parse
    from features.registry import all_specs
    from features.resources import Resources

    texts = sentences(n)
    resources = Resources()
    parse(texts[:4])
    t0 = time.perf_counter()
    parsed = parse(texts)
    out = {"spacy parse": (time.perf_counter() - t0) * 1000 / len(texts)}
    names = [s.name for s in all_specs()]
    extract(parsed[:2], names, resources)  # every component loaded before timing
    for name in names:
        t0 = time.perf_counter()
        extract(parsed, [name], resources)
        out[name] = (time.perf_counter() - t0) * 1000 / len(texts)
    return out


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--dev", default="../shared/dev", help="folder of judgement files")
    ap.add_argument("--aggregate", help="how a text of several sentences is read")
    ap.add_argument("--fit-genre", action="append", help="the genres it is fitted on; repeat")
    ap.add_argument("--samples", type=int, default=200, help="bootstrap resamples")
    ap.add_argument("--jobs", type=int, default=2, help="feature worker processes")
    add_sentences(ap, 300)
    args = ap.parse_args()
    from scorer.bundles import load_configured_all

    config = from_env()
    paths = judgement_files(args.dev)
    genres = genres_of([p.stem for p in paths], GENRES)
    section = json.loads((MODELS_DIR / "default" / "card.json").read_text())["heads"]["general"]
    how = args.aggregate or section["aggregate"]
    recipe = args.fit_genre or None
    bases = {}
    for name, scorer in zip(
        ("default", "fast", "full"),
        load_configured_all(["default", "fast", "full"], config),
        strict=True,
    ):
        cols = file_columns(
            [scorer.gleu_stage()],
            [name],
            paths,
            [how],
            cache_dir=default_cache_dir(),
            human_field={"": "score", **MT_FLUENCY},
            keep_references=False,
            n_jobs=args.jobs,
            readings=False,
        )
        bases[name] = cols[how]
    files = bases["default"]
    rows: dict[str, tuple[list, dict]] = {}
    reference = held_out(files, genres, recipe)
    rows["all (default)"] = (files, reference)
    extractors = sorted({k.split("/")[0] for k in files[0].features})
    for ex in extractors:
        rows[f"without {ex} (head inputs)"] = (
            files,
            held_out(_without(files, ex + "/"), genres, recipe),
        )
    rows["without Link Grammar (models/fast's GLEU stage)"] = (
        bases["fast"],
        held_out(bases["fast"], genres, recipe),
    )
    rows["with benepar (models/full's GLEU stage)"] = (
        bases["full"],
        held_out(bases["full"], genres, recipe),
    )
    print(
        f"held out by genre, {len(files)} files, read {how}; heads chosen and fitted on "
        f"{', '.join(recipe or ['every genre'])}; MQM on scores.fluency; "
        f"intervals: {args.samples} paired-bootstrap draws over inputs"
    )
    print("| inputs | mean rho | mean tau | - all, rho [95% CI] | - all, tau [95% CI] |")
    print("|---|---|---|---|---|")
    for label, (fs, scores) in rows.items():
        rho, tau = summary(fs, scores)
        cells = [label, f"{rho:.3f}", f"{tau:.3f}"]
        if scores is reference:
            cells += ["", ""]
        else:
            d = drop(fs, scores, reference, args.samples, config["SEED"])
            for what in ("spearman", "kendall"):
                m, lo, hi = d.get(what, (np.nan,) * 3)
                cells.append(f"{m:+.3f} [{lo:+.3f}, {hi:+.3f}]")
        print("| " + " | ".join(cells) + " |")
    print()
    print(f"cost, {args.sentences} sentences of 15-25 words, one process:")
    print("| what | ms a sentence |")
    print("|---|---|")
    for name, ms in costs(args.sentences).items():
        print(f"| {name} | {ms:.2f} |")


if __name__ == "__main__":
    main()
