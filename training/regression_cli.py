"""`fluency regress`: which automatic measures explain the human scores of a judgement file.

Foster (2008, section 5): OLS of the human score on every named measure, then stepwise
selection. Bangalore et al. (2000, section 4): with `--accuracy`, the texts are scored against
their references and the fit "human ~ simple tree accuracy + substitutions (+ length)" is
reported, with the rescaled metric's value for a perfect sentence.
"""

from __future__ import annotations

import argparse
import json

from scorer.errors import InputError

__all__ = ["add_commands"]


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
    from training.judgements import field_values, read_judgements
    from training.regression import bangalore_model, fit_ols, stepwise

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
