"""`fluency benchmark`: agreement with people on every judgement file, models beside plain
baselines (`benchmark_run`, `benchmark_report`). The other evidence commands, `compare`,
`diversity`, `evaluate` and `regress`, are in `scorer.commands.compare` and
`scorer.commands.agreement`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

__all__ = ["add_commands"]


def cmd_benchmark(args: argparse.Namespace, config: dict) -> int:
    from features.segment import AGGREGATES, DEFAULT_AGGREGATE
    from scorer.bundles import load_configured_all
    from scorer.evidence.benchmark_report import aggregate_table, markdown
    from scorer.evidence.benchmark_run import as_dict, judgement_files, run_benchmark

    aggregates = list(dict.fromkeys(args.aggregate or [DEFAULT_AGGREGATE]))
    if "all" in aggregates:
        aggregates = list(AGGREGATES)
    models = args.model or [None]
    seed = config["SEED"] if args.seed is None else args.seed
    paths = judgement_files(args.dev, args.files)
    genres = parse_genres(args.genre, [p.stem for p in paths])
    human_field = parse_fields(args.human_field, [p.stem for p in paths])
    scorers = load_configured_all(models, config)  # one LM, parsers and rows per GLEU base
    names = [m or s.name for m, s in zip(models, scorers, strict=True)]
    if args.with_gleu:  # each bundle's GLEU stage beside it, on the same rows
        pairs = []
        for name, scorer in zip(names, scorers, strict=True):
            pairs.append((name, scorer))
            if scorer.head is not None:
                pairs.append((f"{name} GLEU", scorer.gleu_stage()))
        names, scorers = [n for n, _ in pairs], [s for _, s in pairs]
    runs = run_benchmark(
        scorers,
        paths,
        aggregates=aggregates,
        names=names,
        cache_dir=args.cache,
        human_field=human_field,
        keep_references=args.keep_references,
        n_jobs=args.jobs,
        n_samples=args.samples,
        seed=seed,
        protocol=args.protocol,
        second_stage=_second_stage(args) if args.protocol == "lodo" else None,
        genres=genres,
        readings=False,  # a held-out head reads the GLEU score and the folded features
        max_outputs=args.max_outputs,
        max_words=args.max_words,
    )
    robust = None
    if args.robustness:
        # Built with the training package's corpus reader and glue generator.
        from training.gleu.robustness import robustness_markdown, run_robustness

        robust = run_robustness(
            scorers,
            runs[0].models,
            aggregates,
            corpus=args.reuters,
            cache_dir=args.cache,
            n_jobs=args.jobs,
            seed=seed,
        )
    if args.format == "json":
        out = {"runs": [as_dict(r) for r in runs], "robustness": robust}
        text = json.dumps(out, ensure_ascii=False, indent=1) + "\n"
    else:
        parts = [markdown(r, full=not args.summary) for r in runs]
        if len(runs) > 1:
            parts.insert(0, "### Aggregates side by side\n\n" + aggregate_table(runs))
        if robust is not None:
            parts.append(robustness_markdown(robust))
        text = "\n".join(parts)
    if args.results:
        from scorer.evidence.benchmark_pages import command_line, write_results

        before = {"--placeholders": getattr(args, "placeholders", None)}
        pages = write_results(
            runs,
            args.results,
            command_line(args.benchmark_parser, args, before),
            models={
                m: s.card.get("model_sha256")
                for m, s in zip(runs[0].models[: len(scorers)], scorers, strict=True)
            },
            robustness=robustness_markdown(robust) if robust is not None else None,
        )
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text, encoding="utf-8")
    elif args.results:
        print("\n".join(str(p) for p in pages))
    else:
        sys.stdout.write(text)
    return 0


def _second_stage(args):
    # Chosen as `fluency calibrate` chooses a head (the training package), as robustness sets
    # are built with it.
    from training.heads.selection.held_out import benchmark_stage

    return benchmark_stage(
        across_genres=args.across_genres,
        across_datasets=args.across_datasets,
        fit_genres=args.fit_genre or None,
    )


def _add_benchmark(sub) -> None:
    from scorer.commands.options import add_aggregate_option, add_jobs_option, add_model_option

    bm = sub.add_parser(
        "benchmark",
        help="agreement with people on every judgement file, models beside baselines",
        description="Every judgement file of --dev, one protocol (docs/agreement.md): "
        "Spearman, per-input Kendall and pairwise accuracy of each model, the plain baselines "
        "and every feature (directions never chosen on the file itself), the best baseline per "
        "file and a paired-bootstrap interval of the model's lead; robustness sets from the "
        "Reuters test split.",
    )
    add_model_option(bm, repeat=True)
    bm.add_argument("--dev", default="../shared/dev", help="folder of *.jsonl judgement files")
    bm.add_argument("--files", nargs="+", default=[], help="only these files (names or paths)")
    bm.add_argument(
        "--human-field",
        action="append",
        default=[],
        metavar="[FILE=]FIELD",
        help="dotted field of the human score (default: score); FILE=FIELD for one file only "
        "(e.g. mqm_newstest2021_zhen=scores.fluency); repeat",
    )
    add_aggregate_option(bm, allow_all=True)
    bm.add_argument(
        "--keep-references", action="store_true", help="score human reference texts too"
    )
    bm.add_argument(
        "--protocol",
        choices=("plain", "lodo"),
        default="plain",
        help="lodo: add a head chosen and fitted as fluency calibrate does on the other files "
        "of each file's genre (scorer/evidence/genres.py), judged on the file it left out; a "
        "genre of one file is held out by folds of its inputs, marked as such",
    )
    bm.add_argument(
        "--across-genres",
        action="store_true",
        help="with --protocol lodo: hold out whole genres instead of datasets: each genre "
        "scored by a head chosen and fitted on the other genres (what a general head meets: "
        "a genre it never saw)",
    )
    bm.add_argument(
        "--across-datasets",
        action="store_true",
        help="with --protocol lodo: hold out each dataset alone, the head chosen by genres on "
        "every other one (of --fit-genre): what a general head gives a new dataset of a genre "
        "it was fitted on",
    )
    bm.add_argument(
        "--fit-genre",
        action="append",
        default=[],
        metavar="GENRE",
        help="with --across-genres or --across-datasets: fit only on these genres (besides "
        "leaving the held-out one out); repeat (default: every genre)",
    )
    bm.add_argument(
        "--genre",
        action="append",
        default=[],
        metavar="FILE=GENRE",
        help="put a judgement file (its name without .jsonl) in a genre, for files not listed "
        "in scorer/evidence/genres.py (your own datasets beside ../shared/dev); repeat",
    )
    bm.add_argument(
        "--with-gleu",
        action="store_true",
        help="score each bundle that has a second stage also by its GLEU stage alone, beside it",
    )
    bm.add_argument(
        "--max-outputs",
        type=int,
        default=0,
        help="cut each file to this many outputs by whole inputs drawn with --seed (0: all); "
        "with --max-words, the cut python -m training.heads judges heads on",
    )
    bm.add_argument("--max-words", type=int, default=0, help="cut each file to this many words")
    bm.add_argument("--samples", type=int, default=1000, help="bootstrap resamples")
    bm.add_argument("--seed", type=int, help="bootstrap seed (default: FLUENCY_SEED or 12345)")
    add_jobs_option(bm, help="feature worker processes")
    bm.add_argument(
        "--cache",
        default=None,
        help="feature-row cache folder, shared with calibrate and train "
        "(default: FLUENCY_ROW_CACHE, else build/rows)",
    )
    bm.add_argument(
        "--reuters",
        default="../shared/corpora/reuters21578/test.txt",
        help="held-out text for the robustness sets (skipped when absent)",
    )
    bm.add_argument("--no-robustness", dest="robustness", action="store_false")
    bm.add_argument("--summary", action="store_true", help="summaries only, no per-column tables")
    bm.add_argument("--format", choices=("markdown", "json"), default="markdown")
    bm.add_argument("--out", help="write here instead of stdout")
    bm.add_argument(
        "--results",
        metavar="DIR",
        help="also write every table as Markdown pages into DIR (index.md first), each marked "
        "as generated with this command, the date and the versions",
    )
    bm.set_defaults(func=cmd_benchmark, benchmark_parser=bm)


def parse_genres(pairs, names) -> dict[str, str]:
    """`scorer.evidence.genres.GENRES` with each FILE=GENRE of `pairs` added (or replaced);
    a FILE that is not among `names`, the files being benchmarked, is an error."""
    from features.errors import InputError
    from scorer.evidence.genres import GENRES

    out = dict(GENRES)
    for pair in pairs:
        name, sep, genre = pair.partition("=")
        name, genre = name.strip().removesuffix(".jsonl"), genre.strip()
        if not sep or not name or not genre:
            raise InputError(f"--genre takes FILE=GENRE, got {pair!r}")
        if name not in names:
            raise InputError(f"--genre {pair!r}: no judgement file {name!r} among {sorted(names)}")
        out[name] = genre
    return out


def parse_fields(values, names, *, flag: str = "--human-field") -> str | dict[str, str]:
    """`--human-field` values: FIELD (every file) and FILE=FIELD (one file), as
    `scorer.evidence.benchmark_run.field_of` reads them; a FILE not among `names` is an error."""
    from features.errors import InputError

    out: dict[str, str] = {}
    for value in values:
        name, sep, field = value.partition("=")
        if not sep:
            out[""] = value.strip()
            continue
        name, field = name.strip().removesuffix(".jsonl"), field.strip()
        if not name or not field:
            raise InputError(f"{flag} takes FIELD or FILE=FIELD, got {value!r}")
        if name not in names:
            raise InputError(f"{flag} {value!r}: no judgement file {name!r} among {sorted(names)}")
        out[name] = field
    if set(out) <= {""}:
        return out.get("", "score")
    return out


def add_commands(sub) -> None:
    _add_benchmark(sub)
