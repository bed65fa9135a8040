"""CLI commands for the evidence: `fluency benchmark`, `compare`, `evaluate`, `diversity` and
`regress`.

Handlers read, call `significance`, `agreement`, `diversity` or `regression` of this package,
print. Every printed p-value comes with its test, trial count and seed. `regress` follows Foster
(2008, section 5) and, with `--accuracy`, Bangalore et al. (2000, section 4).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from scorer.errors import InputError
from scorer.textio import print_rows, read_lines

__all__ = ["add_commands"]


def _names(paths: Sequence[str], names: Sequence[str]) -> list[str]:
    if names and len(names) != len(paths):
        raise InputError(f"{len(names)} --name for {len(paths)} --system; give one per system")
    out = list(names) or [Path(p).stem for p in paths]
    if len(set(out)) != len(out):
        out = [f"{i}:{p}" for i, p in enumerate(paths)]
    return out


def _references(paths: Sequence[str], n: int) -> list[list[str]] | None:
    if not paths:
        return None
    streams = [read_lines(p) for p in paths]
    for p, s in zip(paths, streams, strict=True):
        if len(s) != n:
            raise InputError(f"{p} has {len(s)} lines but the systems have {n}; give one per line")
    return [list(refs) for refs in zip(*streams, strict=True)]


def _scorer(args, config):
    from scorer.scoring import load_configured

    return load_configured(args.model, config)  # a bare name resolves inside MODELS_DIR


def _print(rows: list[dict], header: list[str], fmt: str) -> None:
    if fmt == "json":
        print(json.dumps(rows, ensure_ascii=False))
        return
    for line in header:
        print(f"# {line}")
    print_rows(rows, "tsv", sys.stdout)


def _compare_inputs(
    args,
) -> tuple[dict[str, list[str]], list[list[str]] | None, dict | None, dict | None]:
    """Systems' outputs and references from --system/--ref files, or from a judgement file
    (outputs paired by `group`); with --field, that field's values are the per-row scores."""
    from scorer.evidence.judgements import align_by_group, field_values, read_judgements

    if args.judgements:
        if args.system:
            raise InputError("give either --judgements or --system files, not both")
        _, by = align_by_group(read_judgements(args.judgements), args.name or None)
        systems = {s: [j.text for j in js] for s, js in by.items()}
        refs = [list(j.refs) for j in next(iter(by.values()))]
        fields = {s: field_values(js, args.field) for s, js in by.items()} if args.field else None
        human = (
            {s: field_values(js, args.human_field) for s, js in by.items()}
            if args.human_field
            else None
        )
        return systems, refs, fields, human
    if args.field or args.human_field:
        raise InputError("--field and --human-field read a judgement file: give --judgements")
    if len(args.system) < 2:
        raise InputError("give at least two --system files to compare (or --judgements)")
    names = _names(args.system, args.name)
    systems = {n: read_lines(p) for n, p in zip(names, args.system, strict=True)}
    return systems, _references(args.ref, len(next(iter(systems.values())))), None, None


def cmd_compare(args: argparse.Namespace, config: dict) -> int:
    import numpy as np

    from scorer.evidence.significance import all_pairs
    from scorer.evidence.system_stats import system_stats

    systems, refs, fields, human = _compare_inputs(args)
    seed = config["SEED"] if args.seed is None else args.seed
    metric = f"field:{args.field}" if fields else args.metric
    if args.engine == "sacrebleu":
        if args.metric not in ("bleu", "chrf") or refs is None or fields:
            raise InputError(
                "--engine sacrebleu runs sacrebleu's tests: --metric bleu|chrf and --ref"
            )
        result = _sacrebleu_pairs(systems, refs, args, seed)
        signature = f"{args.metric}|sacrebleu.significance"
    else:
        if fields:
            stats = {s: np.asarray(v, dtype=float)[:, None] for s, v in fields.items()}
            from_stats, signature = None, f"{args.field}|mean"
        else:
            scorer = _scorer(args, config) if args.metric == "fluency" else None
            ss = system_stats(
                args.metric,
                systems,
                refs,
                scorer=scorer,
                spacy_model=config["SPACY_MODEL"],
                lowercase=args.lowercase,
            )
            stats, from_stats, signature = ss.stats, ss.from_stats, ss.signature
        result = all_pairs(
            stats,
            from_stats,
            test=args.test,
            n_trials=args.trials,
            seed=seed,
            alpha=args.alpha,
            missing="drop",  # a blank output the model cannot score leaves its pairs only
        )
    rows = [
        {
            **row,
            "test": result.test,
            "n_trials": result.n_trials,
            "seed": result.seed,
            "metric": metric,
        }
        for row in result.rows()
    ]
    header = [
        f"metric {metric}  signature {signature}",
        f"test {result.test}  trials {result.n_trials}  seed {result.seed}  rows {result.n_rows}",
        f"{result.n_comparisons} comparisons at alpha {result.alpha}: experimentwise error "
        f"1-(1-alpha)^{result.n_comparisons} = {result.experimentwise_error:.4f} uncorrected; "
        "p_holm and p_bonferroni are corrected",
    ]
    if human is not None:
        header.append(_with_human(rows, human, result, args))
    _print(rows, header, args.format)
    return 0


def _with_human(rows: list[dict], human: dict, result, args) -> str:
    """Add the human field's means and Holm p-values (same test, seed, trials) to each pair;
    say how many metric-significant pairs people order the same way."""
    import numpy as np

    from scorer.evidence.significance import all_pairs

    stats = {s: np.asarray(v, dtype=float)[:, None] for s, v in human.items()}
    people = all_pairs(
        stats, test=result.test, n_trials=result.n_trials, seed=result.seed, alpha=result.alpha
    )
    by_pair = {(c.a, c.b): c for c in people.comparisons}
    n_sig = n_same = n_both = 0
    for row in rows:
        c = by_pair[(row["a"], row["b"])]
        same = bool(np.sign(c.difference) == np.sign(row["difference"]))
        row.update(human_a=c.score_a, human_b=c.score_b, human_p_holm=c.p_holm, same_order=same)
        if row["p_holm"] <= result.alpha:
            n_sig += 1
            n_same += same
            n_both += same and c.p_holm <= result.alpha
    return (
        f"people ({args.human_field}): of {n_sig} pairs significant under Holm, {n_same} are "
        f"ordered the same way by people, {n_both} of them significantly (Holm) for people too"
    )


def _sacrebleu_pairs(systems, refs, args, seed):
    import itertools

    from statsmodels.stats.multitest import multipletests

    from scorer.evidence.significance import (
        DEFAULT_TRIALS,
        AllPairs,
        PairComparison,
        sacrebleu_paired,
    )

    pairs = list(itertools.combinations(systems, 2))
    results = [
        sacrebleu_paired(
            systems[a],
            systems[b],
            refs,
            args.metric,
            test=args.test,
            n_trials=args.trials,
            seed=seed,
        )
        for a, b in pairs
    ]
    p = [r.p_value for r in results]
    holm, bonf = (multipletests(p, method=m)[1] for m in ("holm", "bonferroni"))
    comps = [
        PairComparison(a, b, r.score_a, r.score_b, r.difference, r.p_value, float(h), float(bf))
        for (a, b), r, h, bf in zip(pairs, results, holm, bonf, strict=True)
    ]
    trials = args.trials or DEFAULT_TRIALS[args.test]
    return AllPairs(comps, args.test, trials, seed, args.alpha, results[0].n_rows)


def cmd_evaluate(args: argparse.Namespace, config: dict) -> int:
    from scorer.evidence.agreement import agreement_report, z_normalise
    from scorer.evidence.judgements import field_values, read_judgements

    items = read_judgements(args.judgements)
    if args.no_references:
        items = [j for j in items if not j.is_reference]
    n_blank = 0
    if args.score_field:
        metric = field_values(items, args.score_field)
        metric_name = args.score_field
    elif args.scores:
        metric = [float(x) for x in read_lines(args.scores)]
        if len(metric) != len(items):
            raise InputError(f"{args.scores} has {len(metric)} scores for {len(items)} judgements")
        metric_name = Path(args.scores).stem
    else:
        from scorer.evidence.system_stats import score_texts

        scorer = _scorer(args, config)
        scored = score_texts(scorer, [j.text for j in items])
        n_blank = len(items) - sum(s is not None for s in scored)  # blank outputs: no score
        items = [j for j, s in zip(items, scored, strict=True) if s is not None]
        metric = [s for s in scored if s is not None]
        metric_name = f"fluency ({scorer.name})"
    if args.z_normalise:
        if not all(j.judges for j in items):
            raise InputError("--z-normalise needs per-judge ratings ('judges') on every line")
        human = z_normalise([j.judges for j in items])
    else:
        human = field_values(items, args.human_field)
    groups = [j.group for j in items]
    report = agreement_report(metric, human, groups)
    row = {
        "metric": metric_name,
        "human": "z(judges)" if args.z_normalise else args.human_field,
        "n_blank_left_out": n_blank,
        **report,
    }
    if args.plot:
        from scorer.evidence.plots import plot_regression

        plot_regression(metric, human, args.plot, xlabel=metric_name, ylabel=row["human"])
    if args.plot_systems:
        from scorer.evidence.plots import plot_system_means

        by_system: dict[str, list[float]] = {}
        for j, m in zip(items, metric, strict=True):
            by_system.setdefault(j.system, []).append(m)
        plot_system_means(by_system, args.plot_systems, ylabel=metric_name)
    if args.format == "json":
        print(json.dumps(row))
    else:
        for key, value in row.items():
            print(f"{key}\t{value:.6g}" if isinstance(value, float) else f"{key}\t{value}")
    return 0


def cmd_diversity(args: argparse.Namespace, config: dict) -> int:
    from scorer.evidence.diversity import corpus_reproduction, system_diversity

    names = _names(args.system, args.name)
    rows = []
    for name, path in zip(names, args.system, strict=True):
        texts = read_lines(path)
        row = {
            "system": name,
            **system_diversity(texts, max_n=args.max_n, lowercase=args.lowercase),
        }
        refs = _references(args.ref, len(texts))
        if refs is not None:
            rep = corpus_reproduction(texts, refs, lowercase=args.lowercase)
            row.update({f"reproduction_{k}": v for k, v in rep.items()})
        rows.append(row)
    _print(rows, [f"tokens: sacrebleu 13a  lowercase: {args.lowercase}"], args.format)
    return 0


def _accuracy_columns(items, config) -> dict[str, list[float]]:
    from features.accuracy import score_accuracy

    report = score_accuracy(
        [j.text for j in items], [j.refs for j in items], model=config["SPACY_MODEL"]
    )
    names = {
        "simple_tree_accuracy": "simple_tree_accuracy",
        "substitutions": "simple_tree_S",
        "length": "hyp_len",
        "simple_string_accuracy": "simple_string_accuracy",
        "generation_tree_accuracy": "generation_tree_accuracy",
    }
    return {k: [float(r[v]) for r in report.rows] for k, v in names.items()}


def _fit_rows(name: str, fit) -> list[dict]:
    return [
        {
            "model": name,
            "term": term,
            "coefficient": fit.coefficients[term],
            "p_value": fit.p_values[term],
            "r_squared": fit.r_squared,
            "adj_r_squared": fit.adj_r_squared,
            "n": fit.n,
        }
        for term in ("const", *fit.predictors)
    ]


def cmd_regress(args: argparse.Namespace, config: dict) -> int:
    from scorer.evidence.judgements import field_values, read_judgements
    from scorer.evidence.regression import bangalore_model, fit_ols, stepwise

    items = read_judgements(args.judgements)
    if args.no_references:
        items = [j for j in items if not j.is_reference]
    human = field_values(items, args.human_field)
    predictors = {p: field_values(items, p) for p in args.predictor}
    rows: list[dict] = []
    if args.accuracy:
        acc = _accuracy_columns(items, config)
        model = bangalore_model(
            human, acc["simple_tree_accuracy"], acc["substitutions"], acc["length"]
        )
        rows += _fit_rows("bangalore+length", model.with_length)
        rows += _fit_rows("bangalore", model.without_length)
        rows.append(
            {"model": "bangalore", "term": "perfect_sentence", "coefficient": model.perfect}
        )
        predictors.update(acc)
    if not predictors:
        raise InputError("name at least one --predictor field, or give --accuracy")
    rows += _fit_rows("all", fit_ols(human, predictors))
    if args.stepwise:
        fit, steps = stepwise(human, predictors)
        rows += _fit_rows("stepwise:" + " ".join(steps), fit)
    if args.format == "json":
        print(json.dumps(rows))
    else:
        for row in rows:
            print(
                "\t".join(
                    f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()
                )
            )
    return 0


def cmd_benchmark(args: argparse.Namespace, config: dict) -> int:
    from features.segment import AGGREGATES, DEFAULT_AGGREGATE
    from scorer.evidence.benchmark_report import aggregate_table, markdown
    from scorer.evidence.benchmark_run import as_dict, judgement_files, run_benchmark
    from scorer.scoring import load_configured

    aggregates = list(dict.fromkeys(args.aggregate or [DEFAULT_AGGREGATE]))
    if "all" in aggregates:
        aggregates = list(AGGREGATES)
    models = args.model or [None]
    seed = config["SEED"] if args.seed is None else args.seed
    paths = judgement_files(args.dev, args.files)
    scorers = [load_configured(m, config) for m in models]
    runs = run_benchmark(
        scorers,
        paths,
        aggregates=aggregates,
        names=[m or s.name for m, s in zip(models, scorers, strict=True)],
        cache_dir=args.cache,
        human_field=args.human_field,
        keep_references=args.keep_references,
        n_jobs=args.jobs,
        loads=[(m, config) for m in models],
        n_samples=args.samples,
        seed=seed,
    )
    robust = None
    if args.robustness:
        # Built with the training package's corpus reader and glue generator.
        from training.robustness import robustness_markdown, run_robustness

        robust = run_robustness(
            scorers,
            runs[0].models,
            aggregates,
            corpus=args.reuters,
            cache_dir=args.cache,
            n_jobs=args.jobs,
            loads=[(m, config) for m in models],
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
        from scorer.evidence.benchmark_report import command_line, write_results

        before = {"--placeholders": getattr(args, "placeholders", None)}
        pages = write_results(
            runs,
            args.results,
            command_line(args.benchmark_parser, args, before),
            models={
                m: s.card.get("model_sha256") for m, s in zip(runs[0].models, scorers, strict=True)
            },
            robustness=robustness_markdown(robust) if robust is not None else None,
        )
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    elif args.results:
        print("\n".join(str(p) for p in pages))
    else:
        sys.stdout.write(text)
    return 0


def _add_benchmark(sub) -> None:
    from features.segment import AGGREGATES

    bm = sub.add_parser(
        "benchmark",
        help="agreement with people on every judgement file, models beside baselines",
        description="Every judgement file of --dev, one protocol (docs/agreement.md): "
        "Spearman, per-input Kendall and pairwise accuracy of each model, the plain baselines "
        "and every feature (directions never chosen on the file itself), the best baseline per "
        "file and a paired-bootstrap interval of the model's lead; robustness sets from the "
        "Reuters test split.",
    )
    bm.add_argument("--model", action="append", default=[], help="model folder or name; repeat")
    bm.add_argument("--dev", default="../shared/dev", help="folder of *.jsonl judgement files")
    bm.add_argument("--files", nargs="+", default=[], help="only these files (names or paths)")
    bm.add_argument("--human-field", default="score", help="dotted field of the human score")
    bm.add_argument(
        "--aggregate",
        action="append",
        choices=(*AGGREGATES, "all"),
        help="how a text's sentences are folded into one score; repeat, or 'all' "
        "(default: the scorer's default)",
    )
    bm.add_argument(
        "--keep-references", action="store_true", help="score human reference texts too"
    )
    bm.add_argument("--samples", type=int, default=1000, help="bootstrap resamples")
    bm.add_argument("--seed", type=int, help="bootstrap seed (default: FLUENCY_SEED or 12345)")
    bm.add_argument("--jobs", type=int, default=1, help="feature worker processes")
    bm.add_argument("--cache", default="build/benchmark/rows", help="feature-row cache folder")
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
        "as generated with this command, the date and the versions (docs/results/)",
    )
    bm.set_defaults(func=cmd_benchmark, benchmark_parser=bm)


def add_commands(sub) -> None:
    from scorer.evidence.system_stats import CORPUS_METRICS, SENTENCE_METRICS

    _add_benchmark(sub)

    cmp_ = sub.add_parser(
        "compare",
        help="paired significance tests between every pair of systems (Riezler & Maxwell 2005)",
        description="Every pair of systems: both scores, difference, p-value, Holm and Bonferroni.",
    )
    cmp_.add_argument("--system", action="append", default=[], help="outputs, one per line; repeat")
    cmp_.add_argument(
        "--name",
        action="append",
        default=[],
        help="a name per --system (with --judgements: systems to keep)",
    )
    cmp_.add_argument("--judgements", help="JSONL judgement file: its systems, paired by group")
    cmp_.add_argument("--field", help="with --judgements: compare this field (scores.fluency)")
    cmp_.add_argument(
        "--human-field", help="with --judgements: add people's means and Holm p for this field"
    )
    cmp_.add_argument("--ref", action="append", default=[], help="references, one per line; repeat")
    cmp_.add_argument("--metric", choices=SENTENCE_METRICS + CORPUS_METRICS, default="fluency")
    cmp_.add_argument("--test", choices=("ar", "bootstrap"), default="ar")
    cmp_.add_argument("--trials", type=int, help="randomizations / resamples (10000 / 1000)")
    cmp_.add_argument("--seed", type=int, help="random seed (default: FLUENCY_SEED or 12345)")
    cmp_.add_argument("--alpha", type=float, default=0.05)
    cmp_.add_argument(
        "--engine",
        choices=("rows", "sacrebleu"),
        default="rows",
        help="rows: resample our sufficient statistics (any metric); sacrebleu: its own tests",
    )
    cmp_.add_argument("--model", help="fluency model folder or name in the models directory")
    cmp_.add_argument("--lowercase", action="store_true")
    cmp_.add_argument("--format", choices=("table", "json"), default="table")
    cmp_.set_defaults(func=cmd_compare)

    ev = sub.add_parser(
        "evaluate",
        help="agreement of a metric with human judgements (correlations, pairwise accuracy)",
    )
    ev.add_argument("--judgements", required=True, help="JSONL judgement file")
    ev.add_argument("--human-field", default="score", help="dotted field of the human score")
    src = ev.add_mutually_exclusive_group()
    src.add_argument("--model", help="fluency model folder or name (default: the default model)")
    src.add_argument("--score-field", help="evaluate a field of the file instead (auto.bleu)")
    src.add_argument("--scores", help="evaluate these scores instead, one per judgement line")
    ev.add_argument("--z-normalise", action="store_true", help="z-normalise per judge ('judges')")
    ev.add_argument("--no-references", action="store_true", help="leave out is_reference lines")
    ev.add_argument("--plot", help="PNG: metric against human score with the regression line")
    ev.add_argument("--plot-systems", help="PNG: mean metric score per system with 95%% CIs")
    ev.add_argument("--format", choices=("table", "json"), default="table")
    ev.set_defaults(func=cmd_evaluate)

    div = sub.add_parser("diversity", help="tokens, types, TTR, distinct-n; corpus reproduction")
    div.add_argument("--system", action="append", required=True, help="outputs; repeat")
    div.add_argument("--name", action="append", default=[])
    div.add_argument("--ref", action="append", default=[], help="references for P/R/F; repeat")
    div.add_argument("--max-n", type=int, default=2)
    div.add_argument("--lowercase", action="store_true")
    div.add_argument("--format", choices=("table", "json"), default="table")
    div.set_defaults(func=cmd_diversity)

    reg = sub.add_parser(
        "regress",
        help="OLS of human scores on automatic measures; stepwise selection; Bangalore's model",
    )
    reg.add_argument("--judgements", required=True, help="JSONL judgement file")
    reg.add_argument("--human-field", default="score", help="dotted field of the human score")
    reg.add_argument("--predictor", action="append", default=[], help="dotted field; repeat")
    reg.add_argument("--accuracy", action="store_true", help="add Bangalore's accuracies (parses)")
    reg.add_argument("--stepwise", action="store_true", help="also fit by stepwise selection")
    reg.add_argument("--no-references", action="store_true", help="leave out is_reference lines")
    reg.add_argument("--format", choices=("table", "json"), default="table")
    reg.set_defaults(func=cmd_regress)
