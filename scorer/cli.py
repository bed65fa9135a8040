"""`fluency`: the command line. Handlers read, call the library, print; errors exit 2."""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from scorer.config import from_env
from scorer.errors import InputError, ScorerError

__all__ = ["main", "read_lines"]

# Each module adds its subcommands with `add_commands(subparsers)`; handlers import the library
# lazily, so `fluency --help` stays fast and `scorer` imports without `training/`.
_COMMAND_MODULES: tuple[str, ...] = (
    "scorer.commands",
    "training.corpus",
    "training.train",
    "training.evaluate",
    "training.select",
    "training.parser",
    "training.evidence",
    "training.regression_cli",
    "training.lm",
)


def read_lines(path: str) -> list[str]:
    """One sentence per line; '-' is standard input. Empty lines are kept (they are segments)."""
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise InputError(f"{path} is not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    return text.splitlines()


def _print_rows(rows: Sequence[dict], fmt: str, out) -> None:
    if fmt == "json":
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
        return
    if not rows:
        return
    keys = list(rows[0])
    out.write("\t".join(keys) + "\n")
    for row in rows:
        out.write("\t".join(_cell(row[k]) for k in keys) + "\n")


def _cell(value) -> str:
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def cmd_accuracy(args: argparse.Namespace, config: dict) -> int:
    from features.accuracy import score_accuracy
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
    report = score_accuracy(
        hyps,
        references,
        reference_trees=trees,
        model=config["SPACY_MODEL"],
        lowercase=args.lowercase,
        n_process=args.jobs,
    )
    if args.corpus:
        if args.format == "json":
            print(json.dumps({**report.corpus, "signatures": report.signatures}))
        else:
            for key, value in report.corpus.items():
                print(f"{key}\t{_cell(value)}")
            for key, value in report.signatures.items():
                print(f"signature.{key}\t{value}")
    else:
        _print_rows(report.rows, args.format, sys.stdout)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fluency", description=__doc__)
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")
    parser.add_argument(
        "--placeholders",
        metavar="TOKENS",
        default=None,
        help="delexicalised slot placeholders, comma-separated, read as a name before scoring "
        '(default: FLUENCY_PLACEHOLDERS, else "X"; "" for none)',
    )
    sub = parser.add_subparsers(dest="command", required=True)

    acc = sub.add_parser(
        "accuracy",
        help="reference-based accuracy: string/tree accuracies, BLEU, chrF, NIST, dependency F",
        description="One output line per hypothesis line, same order.",
    )
    acc.add_argument("--hyp", required=True, help="hypotheses, one per line ('-': stdin)")
    acc.add_argument("--ref", action="append", default=[], help="references, one per line; repeat")
    acc.add_argument(
        "--ref-conllu",
        action="append",
        default=[],
        help="gold dependency trees (CoNLL-U) for the first, second... --ref file",
    )
    acc.add_argument("--format", choices=("json", "tsv"), default="json")
    acc.add_argument("--corpus", action="store_true", help="print corpus-level figures only")
    acc.add_argument("--lowercase", action="store_true", help="compare lower-cased tokens")
    acc.add_argument("--jobs", type=int, default=1, help="spaCy worker processes")
    acc.set_defaults(func=cmd_accuracy)
    for module in _COMMAND_MODULES:
        importlib.import_module(module).add_commands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    try:
        config = from_env()
        if args.placeholders is not None:
            config["PLACEHOLDERS"] = args.placeholders
        return args.func(args, config)
    except ScorerError as exc:
        print(f"fluency: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
