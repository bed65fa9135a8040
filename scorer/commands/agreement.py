"""`fluency evaluate` and `regress`: a metric against people's judgements (JSON Lines,
`scorer.evidence.judgements`).

`evaluate` reports correlations and pairwise accuracy (`scorer.evidence.agreement`); `regress`
fits human scores on automatic measures by OLS, stepwise selection, and Bangalore et al.'s
(2000, section 4) model with `--accuracy`, following Foster (2008, section 5).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from scorer.commands.options import GENRE_HELP, add_genre_option, add_model_option
from scorer.errors import InputError
from scorer.textio import read_lines

__all__ = ["add_commands"]


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
        from scorer.scoring import load_configured

        # A bare name resolves inside MODELS_DIR; a genre it has no head for is an error.
        scorer = load_configured(args.model, config).for_genre(args.genre)
        scored = score_texts(scorer, [j.text for j in items])
        n_blank = len(items) - sum(s is not None for s in scored)  # blank outputs: no score
        items = [j for j, s in zip(items, scored, strict=True) if s is not None]
        metric = [s for s in scored if s is not None]
        head = f", {scorer.genre} head" if scorer.genre else ""
        metric_name = f"fluency ({scorer.name}{head})"
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


def add_commands(sub) -> None:
    ev = sub.add_parser(
        "evaluate",
        help="agreement of a metric with human judgements (correlations, pairwise accuracy)",
    )
    ev.add_argument("--judgements", required=True, help="JSONL judgement file")
    ev.add_argument("--human-field", default="score", help="dotted field of the human score")
    src = ev.add_mutually_exclusive_group()
    add_model_option(src)
    add_genre_option(ev, help="with the model (no --score-field, --scores): " + GENRE_HELP)
    src.add_argument("--score-field", help="evaluate a field of the file instead (auto.bleu)")
    src.add_argument("--scores", help="evaluate these scores instead, one per judgement line")
    ev.add_argument("--z-normalise", action="store_true", help="z-normalise per judge ('judges')")
    ev.add_argument("--no-references", action="store_true", help="leave out is_reference lines")
    ev.add_argument("--plot", help="PNG: metric against human score with the regression line")
    ev.add_argument("--plot-systems", help="PNG: mean metric score per system with 95%% CIs")
    ev.add_argument("--format", choices=("table", "json"), default="table")
    ev.set_defaults(func=cmd_evaluate)

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
