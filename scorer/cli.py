"""`fluency`: the command line. Handlers read, call the library, print; errors exit 2."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from scorer.config import from_env
from scorer.errors import ScorerError

__all__ = ["build_parser", "main"]


def _add_commands(sub, command: str | None = None) -> None:
    """Every command module, named here. Each adds its subcommands and imports its library only
    when a command runs, so `fluency --help` stays fast. The model-making commands come from
    `training`, which a serving-only install may leave out; a process running one of the other
    commands (`command`) leaves them out too: importing them is a fifth of a second of every
    `fluency score`."""
    from scorer.commands import accuracy, agreement, compare, explain, score
    from scorer.evidence import cli as evidence

    for module in (score, accuracy, explain, evidence, compare, agreement):
        module.add_commands(sub)
    if command in sub.choices:
        return
    try:
        from training import cli as training
    except ImportError:  # pragma: no cover - `training` is shipped in the same distribution
        return
    training.add_commands(sub)


def _command(argv: Sequence[str]) -> str | None:
    """The command `argv` names: its first word that is neither an option nor the value of
    `--placeholders` (None when there is none, as for `fluency --help`)."""
    words = iter(argv)
    for word in words:
        if word == "--placeholders":
            next(words, None)
        elif not word.startswith("-"):
            return word
    return None


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or, given the `argv` it will parse, of what it needs."""
    parser = argparse.ArgumentParser(prog="fluency", description=__doc__)
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")
    parser.add_argument(
        "--placeholders",
        metavar="TOKENS",
        default=None,
        help="delexicalised slot placeholders, comma-separated, read as a name before scoring "
        '(default: FLUENCY_PLACEHOLDERS, else "X"; "" for none)',
    )
    command = None if argv is None else _command(argv)
    _add_commands(parser.add_subparsers(dest="command", required=True), command)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(argv)
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
    except ModuleNotFoundError as exc:
        # A library of an extra that a command imports without checking first.
        from features.optional_imports import extra_for, install_command

        extra = extra_for(exc.name)
        if extra is None:
            raise
        print(
            f"fluency: error: {args.command} needs {exc.name}, which is not installed: "
            f"{install_command(extra)}",
            file=sys.stderr,
        )
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
