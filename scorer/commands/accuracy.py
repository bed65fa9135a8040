"""`fluency accuracy`: the reference-based accuracies (string and tree accuracy, BLEU, chrF,
NIST, dependency F) of hypotheses against references, from line files or a table
(`scorer.tables`). One output row per hypothesis, same order, or the corpus figures alone.
"""

from __future__ import annotations

import argparse
import json
import sys

from scorer.commands.options import add_jobs_option, add_table_options
from scorer.errors import InputError
from scorer.textio import cell, print_rows, read_lines

__all__ = ["add_commands"]


def _references_of(row: dict, columns: list[str]) -> list:
    refs: list = []
    for column in columns:
        value = row.get(column)
        if isinstance(value, str):
            refs.append(value)
        elif value is not None and not isinstance(value, dict):
            refs.extend(list(value))  # a list (JSON) or an array (Parquet) of references
    return refs


def _accuracy_files(args) -> tuple[list[dict], list, list, list | None]:
    """Input rows, hypotheses, reference lists and gold trees from --hyp/--ref/--ref-conllu."""
    from features.gold import read_conllu

    hyps = read_lines(args.hyp)
    streams = [read_lines(p) for p in args.ref]
    gold = [read_conllu(p) for p in args.ref_conllu]
    if not streams and gold:  # the gold trees are the references
        streams = [[s.text for s in g] for g in gold]
    if not streams:
        raise InputError("give at least one --ref file (or --ref-conllu)")
    if len(gold) > len(streams):
        raise InputError(f"{len(gold)} --ref-conllu files for {len(streams)} --ref files")
    for name, lines in [
        *zip(args.ref, streams, strict=False),
        *zip(args.ref_conllu, gold, strict=True),
    ]:
        if len(lines) != len(hyps):
            raise InputError(
                f"{args.hyp} has {len(hyps)} lines but {name} has {len(lines)}; "
                "give one reference line (or tree) per hypothesis line"
            )
    references = [list(refs) for refs in zip(*streams, strict=True)]
    trees = [list(t) for t in zip(*gold, strict=True)] if gold else None
    rows = [{"hypothesis": h, "references": r} for h, r in zip(hyps, references, strict=True)]
    return rows, hyps, references, trees


def _accuracy_table(args) -> tuple[list[dict], list, list]:
    """Input rows, hypotheses and reference lists from --in, --text-column and --ref-column."""
    from scorer.tables import read_chunks

    if args.hyp or args.ref or args.ref_conllu:
        raise InputError("--in takes its references from --ref-column, not --hyp/--ref files")
    if not args.ref_column:
        raise InputError("give the references' column with --ref-column (repeat for more)")
    chunks = read_chunks(args.in_path, 4096, text_column=args.text_column, columns=args.ref_column)
    rows = [row for chunk in chunks for row in chunk]
    hyps = [row.get(args.text_column) for row in rows]
    return rows, hyps, [_references_of(row, args.ref_column) for row in rows]


def cmd_accuracy(args: argparse.Namespace, config: dict) -> int:
    """Segments that cannot be scored (an empty reference, a text too long to parse) get null
    metrics, a `reason` and a warning; the corpus figures are over the scored segments."""
    from scorer.batch import accuracy_rows
    from scorer.tables import format_of, open_writer, parquet_schema

    if args.in_path:
        rows, hyps, references = _accuracy_table(args)
        trees = None
    elif args.hyp:
        rows, hyps, references, trees = _accuracy_files(args)
    else:
        raise InputError("give --hyp and --ref files, or --in with --ref-column")
    batch = accuracy_rows(
        hyps,
        references,
        reference_trees=trees,
        model=config["SPACY_MODEL"],
        lowercase=args.lowercase,
        n_process=args.jobs,
    )
    where = "row" if args.in_path and format_of(args.in_path) != "text" else "line"
    _warn_reasons(batch.reasons, where)
    if args.corpus:
        if args.format == "json":
            print(json.dumps({**batch.corpus, "signatures": batch.signatures}))
        else:
            for key, value in batch.corpus.items():
                print(f"{key}\t{cell(value)}")
            for key, value in batch.signatures.items():
                print(f"signature.{key}\t{value}")
        return 0
    keys = batch.keys()
    metrics = [
        m if m is not None else {**dict.fromkeys(keys), "index": i, "reason": why}
        for i, (m, why) in enumerate(zip(batch.rows, batch.reasons, strict=True))
    ]
    if not args.out:
        print_rows(metrics, args.format, sys.stdout)
        return 0
    schema = (
        parquet_schema(args.in_path)
        if args.in_path and format_of(args.in_path) == "parquet"
        else None
    )
    writer = open_writer(args.out, schema=schema)
    try:
        writer.write(
            [
                {**row, **dict.fromkeys(keys), **(m or {}), "reason": why}
                for row, m, why in zip(rows, batch.rows, batch.reasons, strict=True)
            ]
        )
    finally:
        writer.close()
    return 0


def _warn_reasons(reasons, where: str) -> None:
    for i, why in enumerate(reasons):
        if why is not None:
            print(f"fluency: warning: {where} {i + 1} not scored: {why}", file=sys.stderr)


def add_commands(sub) -> None:
    acc = sub.add_parser(
        "accuracy",
        help="reference-based accuracy: string/tree accuracies, BLEU, chrF, NIST, dependency F",
        description="One output line per hypothesis line, same order.",
    )
    acc.add_argument("--hyp", help="hypotheses, one per line ('-': stdin)")
    acc.add_argument("--ref", action="append", default=[], help="references, one per line; repeat")
    acc.add_argument(
        "--ref-conllu",
        action="append",
        default=[],
        help="gold dependency trees (CoNLL-U) for the first, second... --ref file",
    )
    add_table_options(acc, refs=True)
    acc.add_argument("--format", choices=("json", "tsv"), default="json")
    acc.add_argument("--corpus", action="store_true", help="print corpus-level figures only")
    acc.add_argument("--lowercase", action="store_true", help="compare lower-cased tokens")
    add_jobs_option(acc, help="processes parsing and scoring slices of the input")
    acc.set_defaults(func=cmd_accuracy)
