"""How far a second stage can go on a bundle's features: fitted on the very files it is judged on.

A held-out figure (`fluency benchmark --protocol lodo`) is what a new dataset sees. This is the
reference above it: the same regressor over the same inputs (the GLEU score and every feature
column, each dataset weighing the same, inputs bounded as `training.second_stage.fit_on` does),
fitted in-sample three ways:

- each file alone: one fit a file, judged on that file;
- each genre pooled: one fit over a genre's files, each of them judged by it;
- every file pooled: one fit over all, each file judged by it.

Beside them, read the same way: the GLEU score alone, minus the length and the LM's summed
log-probability. None of these rows is a model to ship: every figure is in-sample. A held-out
bar above the pooled rows asks for other signals (or another reading of the genre), not another
fit of these.

    python -m training.ceiling --model neural [--dev ../shared/dev] [--regressor 'ridge(alpha=1)']

Feature rows come from the benchmark's cache (`build/rows`); a file whose rows are not there is
parsed (and, for the neural tier, run through SmolLM2) first.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from features.errors import InputError
from training.recipes import MT_FLUENCY, baseline_results, table
from training.second_stage import JudgedFile, candidates, design, fit_on, judge

__all__ = ["ceilings", "main"]


def ceilings(
    files: Sequence[JudgedFile], genres: Mapping[str, str], regressor: str
) -> dict[str, dict[str, dict[str, float]]]:
    """{fit: {file: {"spearman", "group_kendall"}}} for the three in-sample fits of
    `regressor` (a name of `training.second_stage.candidates`)."""
    estimator = candidates()[regressor]
    columns = list(files[0].features[0]) if files and files[0].features else []

    def judged_by(groups: Sequence[Sequence[JudgedFile]]) -> dict[str, dict[str, float]]:
        out = {}
        for group in groups:
            model = fit_on(estimator, group, columns, ())
            out.update({f.name: judge(model.predict(design([f], columns)), f) for f in group})
        return {f.name: out[f.name] for f in files}

    by_genre: dict[str, list[JudgedFile]] = {}
    for f in files:
        by_genre.setdefault(genres[f.name], []).append(f)
    return {
        f"{regressor}, each file alone": judged_by([[f] for f in files]),
        f"{regressor}, each genre pooled": judged_by(list(by_genre.values())),
        f"{regressor}, every file pooled": judged_by([list(files)]),
    }


def main(argv: Sequence[str] | None = None) -> int:
    from features.rows import default_cache_dir
    from scorer.bundles import load_configured_all
    from scorer.config import from_env
    from scorer.evidence.benchmark_run import file_columns, judgement_files
    from scorer.evidence.genres import GENRES, genres_of
    from training.lodo import judged_columns

    ap = argparse.ArgumentParser(prog="python -m training.ceiling", description=__doc__)
    ap.add_argument("--dev", default="../shared/dev", help="folder of *.jsonl judgement files")
    ap.add_argument("--model", default="default", help="the bundle whose GLEU stage and features")
    ap.add_argument("--aggregate", default="weighted", help="the reading of a text")
    ap.add_argument(
        "--regressor",
        action="append",
        help="training.second_stage candidates (default: ridge(alpha=1), ridge(alpha=1000))",
    )
    ap.add_argument("--jobs", type=int, default=2, help="feature worker processes")
    ap.add_argument("--out", help="write the Markdown table here (stdout without it)")
    args = ap.parse_args(argv)
    try:
        paths = judgement_files(args.dev)
    except InputError as exc:
        print(f"python -m training.ceiling: {exc}", file=sys.stderr)
        return 2
    (scorer,) = load_configured_all([args.model], from_env())
    genres = genres_of([p.stem for p in paths], GENRES)
    (columns,) = file_columns(
        [scorer.gleu_stage()],
        ["gleu"],
        paths,
        [args.aggregate],
        cache_dir=default_cache_dir(),
        human_field={"": "score", **MT_FLUENCY},
        keep_references=False,
        n_jobs=args.jobs,
        readings=False,
    ).values()
    files = [judged_columns(f) for f in columns]
    results = baseline_results(files, {f.name: f.baselines for f in columns})
    for regressor in args.regressor or ["ridge(alpha=1)", "ridge(alpha=1000)"]:
        results.update(ceilings(files, genres, regressor))
    lines = [
        f"In-sample ceilings of a second stage on {args.model}'s GLEU score and features, "
        f"reading {args.aggregate}; MQM on scores.fluency. Every row but the baselines is fitted "
        "on the files it is judged on.",
        "",
        *table(results, genres),
    ]
    text = "\n".join(lines).replace("recipe (fit on: regressor [inputs], reading)", "fit") + "\n"
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text, encoding="utf-8")
    else:
        print(text, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
