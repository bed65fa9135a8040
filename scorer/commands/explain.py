"""`fluency explain`: why each line scores as it does, as JSON Lines.

One JSON object per input line, same order: `line` (1-based), `text`, `fluency` (the score
the library and the service give; `gleu`, the SVM's distance the contributions add up to),
`spans` (character offsets into the line, with kind and reason) and
`contributions` (the features that moved the score; see `scorer.explain`). An empty line gets
`{"line": n, "text": "", "fluency": null}`. Streams in chunks of `--chunk` lines.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys

from scorer.commands.options import (
    add_aggregate_option,
    add_genre_option,
    add_model_option,
    positive_int,
)
from scorer.textio import iter_lines

__all__ = ["add_commands"]


def cmd_explain(args: argparse.Namespace, config: dict) -> int:
    from scorer.explain import LM_THRESHOLD, as_dict, explain_texts
    from scorer.scoring import load_configured

    scorer = load_configured(args.model, config).for_genre(args.genre)
    lines = iter_lines(args.input)
    number = 0
    while chunk := list(itertools.islice(lines, args.chunk)):
        keep = [i for i, t in enumerate(chunk) if t.strip()]
        texts = [chunk[i] for i in keep]
        explained = (
            explain_texts(scorer, texts, aggregate=args.aggregate, locate_nulls=args.locate_nulls)
            if keep
            else []
        )
        by_line = dict(zip(keep, explained, strict=True))
        for i, text in enumerate(chunk):
            number += 1
            row: dict = {"line": number, "text": text}
            if i in by_line:
                row |= as_dict(by_line[i], top=args.top) | {"lm_threshold": LM_THRESHOLD}
            else:
                row["fluency"] = None
            print(json.dumps(row, ensure_ascii=False), file=sys.stdout)
        sys.stdout.flush()
    return 0


def add_commands(sub) -> None:
    explain = sub.add_parser(
        "explain",
        help="why each line scores as it does: marked spans and feature contributions (JSON Lines)",
        description=__doc__.splitlines()[0],
    )
    explain.add_argument("input", nargs="?", default="-", help="text file, one text a line")
    add_model_option(explain)
    add_genre_option(explain)
    explain.add_argument("--top", type=positive_int, default=10, help="contributions listed")
    explain.add_argument("--chunk", type=positive_int, default=64, help="lines per batch")
    add_aggregate_option(explain)
    explain.add_argument(
        "--locate-nulls",
        action="store_true",
        help="mark which words Link Grammar skips where one null word is not enough (parses "
        "those sentences again)",
    )
    explain.set_defaults(func=cmd_explain)
