"""Options several commands share, declared once: `--model`, `--genre`, `--jobs`, `--aggregate`,
and the `--in`/`--out`/`--text-column` of the commands that read tables.

Each function adds one option to an `argparse` parser (or an argument group, or a mutually
exclusive group) and returns the action. Only `features.segment` is imported, so building the
parser stays fast.
"""

from __future__ import annotations

import argparse

from features.segment import AGGREGATES, DEFAULT_AGGREGATE

__all__ = [
    "AGGREGATE_HELP",
    "GENRE_HELP",
    "MODEL_HELP",
    "add_aggregate_option",
    "add_genre_option",
    "add_jobs_option",
    "add_model_option",
    "add_table_options",
    "positive_int",
]

MODEL_HELP = "model folder or name under FLUENCY_MODELS_DIR (default: the default model)"
GENRE_HELP = (
    "score with the model's head for this genre (general, or data-to-text, mt, dialogue, "
    "summaries...: the `heads` its card ships, GET /v1/models lists them); default: the head "
    "the model scores with (a bundle's general one)"
)
AGGREGATE_HELP = (
    "how a text of several sentences is read: split at its sentence-final punctuation and "
    "folded by the token-weighted mean of its sentences' scores (weighted), their mean or their "
    f"minimum, or scored whole as one sentence (default: {DEFAULT_AGGREGATE}, as the service "
    "scores)"
)


def positive_int(text: str) -> int:
    """An `argparse` type: an integer of at least 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value}")
    return value


def add_model_option(parser, *, repeat: bool = False, required: bool = False, help=None):
    """`--model`: a model folder, or a name under FLUENCY_MODELS_DIR; absent: the default model.
    With `repeat`, the option may be given several times and `args.model` is a list
    (empty when none is given)."""
    if repeat:
        return parser.add_argument(
            "--model",
            action="append",
            default=[],
            required=required,
            help=help or "model folder or name under FLUENCY_MODELS_DIR; repeat",
        )
    return parser.add_argument("--model", required=required, help=help or MODEL_HELP)


def add_genre_option(parser, help=None):
    """`--genre`: the head of the model to score with (`FluencyScorer.for_genre`); absent: the
    one it scores with. Checked when the model is loaded: a genre it has no head for is an
    error."""
    return parser.add_argument("--genre", metavar="GENRE", help=help or GENRE_HELP)


def add_jobs_option(parser, default: int = 1, help=None):
    """`--jobs`: how many worker processes, a positive integer."""
    return parser.add_argument(
        "--jobs",
        type=positive_int,
        default=default,
        help=f"{help or 'worker processes'} (default: {default})",
    )


def add_aggregate_option(parser, *, allow_all: bool = False, default=None, help=None):
    """`--aggregate`: how a text of several sentences becomes one score (`features.segment`).
    `default=None` leaves the choice to the scorer (`DEFAULT_AGGREGATE`). With `allow_all` the
    option may be repeated and also takes "all" (every way), and `args.aggregate` is a list or
    None."""
    if allow_all:
        return parser.add_argument(
            "--aggregate",
            action="append",
            choices=(*AGGREGATES, "all"),
            default=default,
            help=help or f"{AGGREGATE_HELP}; repeat for several, or 'all' for every one",
        )
    return parser.add_argument(
        "--aggregate", choices=AGGREGATES, default=default, help=help or AGGREGATE_HELP
    )


def add_table_options(parser, *, refs: bool = False) -> None:
    """`--in`, `--out` and `--text-column` of a command reading rows of a table
    (`scorer.tables`); with `refs`, also the repeatable `--ref-column`."""
    parser.add_argument(
        "--in",
        dest="in_path",
        help="input: .txt (one text a line), .jsonl or .parquet (rows; every column is kept)",
    )
    parser.add_argument(
        "--out",
        help="output: .jsonl or .parquet (the input's columns plus the scores and a reason "
        "column, null when scored), else plain text (default: standard output)",
    )
    parser.add_argument(
        "--text-column", default="text", help="the column holding the text (default: text)"
    )
    if refs:
        parser.add_argument(
            "--ref-column",
            action="append",
            default=[],
            help="a column of references (a string, or a list of strings); repeat for more",
        )
