"""Which recipe a general second stage should follow, by leaving one genre out.

A recipe is: the genres whose judgement files it is fitted on, the regressor (its objective:
across inputs, within inputs, or both), its inputs, and the reading of a text of several
sentences. For each recipe every development file is scored by the recipe fitted on the files of
the recipe's genres other than the file's own (`training.second_stage.leave_one_genre_out`, no
file ever scored by a fit that saw its genre); a genre that leaves nothing to fit on is
unscored, and said so. The table gives, per recipe, the mean over files of Spearman's rho and of
the per-input Kendall tau, the mean per genre, and the same for the plain baselines and the GLEU
score alone, read under the same protocol (`fluency benchmark`). Tau is the one `fluency
calibrate` chooses by (`training.second_stage.judge`: an input where the column is constant is
skipped, where the benchmark counts it 0), so figures can differ from the benchmark's in the
third decimal.

The recipe chosen here is chosen on these figures, so its own figures are in-sample at the level
of the recipe (a handful of choices), not of any fit; the human evaluations outside the
development files are the check that decides (`docs/agreement.md`).

    python -m training.recipes [--dev ../shared/dev] [--out build/recipes.md]

Feature rows come from the benchmark's cache (`build/rows`).
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from tqdm import tqdm

from training.second_stage import (
    JudgedFile,
    candidates,
    design,
    fit_on,
    inputs_of,
    judge,
)

__all__ = ["FIT_SETS", "REGRESSORS", "Recipe", "criterion", "main", "score_recipes", "table"]

# The fit sets tried: every genre, every genre but one, and data-to-text with each other genre.
FIT_SETS: tuple[tuple[str, ...], ...] = (
    ("data-to-text", "mt", "summaries", "acceptability"),
    ("data-to-text", "summaries", "acceptability"),
    ("data-to-text", "mt", "acceptability"),
    ("data-to-text", "acceptability"),
    ("data-to-text", "summaries"),
    ("data-to-text", "mt"),
    ("data-to-text",),
)
REGRESSORS = (
    "ridge(alpha=100)",
    "ridge(alpha=1000)",
    "ridge(alpha=10000)",
    "huber(epsilon=1.35)",
    "ranker(C=0.01)",
    "ranker(C=0.01, across=0.5)",
)
PLAIN = ("minus length", "LM logprob, summed")
# What a fluency score claims to measure on the MT files: fluency errors only.
MT_FLUENCY = {"mqm_newstest2020_zhen": "scores.fluency", "mqm_newstest2021_zhen": "scores.fluency"}


class Recipe(tuple):
    """(fit genres, regressor, inputs, reading), printed as one label."""

    @property
    def label(self) -> str:
        genres, regressor, inputs, how = self
        return f"{' + '.join(genres)}: {regressor} [{inputs}], {how}"


def _mean(values) -> float:
    kept = [v for v in values if v is not None and math.isfinite(v)]
    return float(np.mean(kept)) if kept else math.nan


def score_recipes(
    files: Mapping[str, Sequence[JudgedFile]],
    genres: Mapping[str, str],
    *,
    fit_sets: Sequence[Sequence[str]] = FIT_SETS,
    regressors: Sequence[str] = REGRESSORS,
    input_sets: Sequence[str] = ("features", "features+readings"),
) -> dict[Recipe, dict[str, dict[str, float] | None]]:
    """{recipe: {file: {"spearman", "group_kendall"} or None}}: `files` maps each reading to
    the judged files read that way. A fit shared by two recipes (the same training genres) is
    made once."""
    pool = candidates()
    out: dict[Recipe, dict[str, dict[str, float] | None]] = {}
    fitted: dict[tuple, object] = {}
    todo = [
        Recipe((tuple(s), r, i, how))
        for how in files
        for s in fit_sets
        for r in regressors
        for i in input_sets
        if not (r == "linear(gleu only)" and i != "features")
    ]
    for recipe in tqdm(todo, desc="recipes, genres held out", unit=" recipe"):
        fit_genres, regressor, inputs, how = recipe
        judged = files[how]
        columns = list(judged[0].features[0])
        readings = inputs_of((), inputs)[1:]
        per: dict[str, dict[str, float] | None] = {}
        for genre in dict.fromkeys(genres[f.name] for f in judged):
            train_genres = frozenset(g for g in fit_genres if g != genre)
            held = [f for f in judged if genres[f.name] == genre]
            if not train_genres:
                per.update({f.name: None for f in held})
                continue
            key = (how, regressor, inputs, train_genres)
            if key not in fitted:
                train = [f for f in judged if genres[f.name] in train_genres]
                fitted[key] = fit_on(pool[regressor], train, columns, readings)
            for f in held:
                per[f.name] = judge(fitted[key].predict(design([f], columns, readings)), f)
        out[recipe] = {f.name: per[f.name] for f in judged}
    return out


def baseline_results(
    judged: Sequence[JudgedFile], baselines: Mapping[str, Mapping[str, np.ndarray]]
) -> dict[str, dict[str, dict[str, float]]]:
    """{label: {file: figures}} of the GLEU score alone and the plain baselines the done-when
    of a default is stated against (minus the length, the LM's summed log-probability)."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for f in judged:
        columns = {"GLEU alone": f.gleu}
        columns |= {k: v for k, v in baselines[f.name].items() if k in PLAIN}
        for label, x in columns.items():
            out.setdefault(label, {})[f.name] = judge(np.asarray(x, dtype=float), f)
    return out


def criterion(per: Mapping[str, dict | None], genres: Mapping[str, str]) -> float:
    """The mean over genres of rho plus the mean over genres of per-input tau, each genre's
    figure the mean of its files (every genre weighs the same, as in the nested choice of
    `training.second_stage.choose`); NaN when a genre is not scored."""
    if any(r is None for r in per.values()):
        return math.nan
    by: dict[str, list[dict]] = {}
    for name, r in per.items():
        by.setdefault(genres[name], []).append(r)
    rho = _mean(_mean(r["spearman"] for r in rs) for rs in by.values())
    tau = _mean(_mean(r["group_kendall"] for r in rs) for rs in by.values())
    return rho + (0.0 if math.isnan(tau) else tau)


def table(results: Mapping[str, Mapping[str, dict | None]], genres: Mapping[str, str]) -> list[str]:
    """Markdown: per row, the criterion (`criterion`), mean rho / tau over scored files, and
    per genre."""
    order = list(dict.fromkeys(genres.values()))
    header = ["recipe (fit on: regressor [inputs], reading)", "criterion", "mean rho", "mean tau"]
    header += [f"{g} rho / tau" for g in order]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for label, per in results.items():
        scored = {n: r for n, r in per.items() if r is not None}
        crit = criterion(per, genres)
        cells = [
            label,
            "–" if math.isnan(crit) else f"{crit:.3f}",
            f"{_mean(r['spearman'] for r in scored.values()):.3f}",
            f"{_mean(r['group_kendall'] for r in scored.values()):.3f}",
        ]
        for g in order:
            mine = [r for n, r in scored.items() if genres[n] == g]
            if not mine:
                cells.append("not scored")
                continue
            rho = _mean(r["spearman"] for r in mine)
            tau = _mean(r["group_kendall"] for r in mine)
            cells.append(f"{rho:.3f} / " + ("–" if math.isnan(tau) else f"{tau:.3f}"))
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    from features.rows import default_cache_dir
    from scorer.bundles import load_configured_all
    from scorer.config import from_env
    from scorer.evidence.benchmark_run import file_columns, judgement_files
    from scorer.evidence.genres import GENRES, genres_of
    from training.lodo import judged_columns

    ap = argparse.ArgumentParser(prog="python -m training.recipes", description=__doc__)
    ap.add_argument("--dev", default="../shared/dev", help="folder of *.jsonl judgement files")
    ap.add_argument("--model", default="default", help="the GLEU stage (a bundle's, if any)")
    ap.add_argument("--aggregate", action="append", help="readings (default: whole, weighted)")
    ap.add_argument("--regressor", action="append", help=f"default: {', '.join(REGRESSORS)}")
    ap.add_argument("--jobs", type=int, default=2, help="feature worker processes")
    ap.add_argument("--out", help="write the Markdown table here (stdout without it)")
    ap.add_argument("--json", help="also write every file's figures here")
    args = ap.parse_args(argv)
    config = from_env()
    (scorer,) = load_configured_all([args.model], config)
    paths = judgement_files(args.dev)
    genres = genres_of([p.stem for p in paths], GENRES)
    ways = args.aggregate or ["whole", "weighted"]
    columns = file_columns(
        [scorer.gleu_stage()],
        ["gleu"],
        paths,
        ways,
        cache_dir=default_cache_dir(),
        human_field={"": "score", **MT_FLUENCY},
        keep_references=False,
        n_jobs=args.jobs,
        readings=True,
    )
    files = {how: [judged_columns(f) for f in cols] for how, cols in columns.items()}
    results: dict[str, dict] = {}
    for how in ways:
        base = baseline_results(files[how], {f.name: f.baselines for f in columns[how]})
        for label, per in base.items():
            if label == "GLEU alone" or how == ways[0]:  # the others do not depend on it
                results[f"{label}, {how}" if label == "GLEU alone" else label] = per
    scored = score_recipes(files, genres, regressors=args.regressor or REGRESSORS)
    ranked = sorted(scored.items(), key=lambda kv: -np.nan_to_num(criterion(kv[1], genres), nan=-9))
    results.update({r.label: per for r, per in ranked})  # best first
    lines = [
        f"Every file scored by a fit that never saw its genre; MQM on scores.fluency; "
        f"GLEU stage of {args.model}. Criterion: mean over genres of rho + mean over genres "
        "of per-input tau (– where a genre is left unscored: its fit set is that genre alone).",
        "",
        *table(results, genres),
    ]
    text = "\n".join(lines) + "\n"
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text, encoding="utf-8")
    else:
        print(text, end="")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, default=float) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
