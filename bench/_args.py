"""Command-line options the benchmarks share, so that the same option means the same thing (and
reads the same in --help) in every script."""

from __future__ import annotations

import argparse
import sys


class _Help(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """The script's docstring as written, and each option's default (where it has one)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default is None or action.default is False:
            return action.help
        return super()._get_help_string(action)


def parser(doc: str) -> argparse.ArgumentParser:
    """An argument parser whose --help prints the script's docstring `doc` as written (its
    usage lines and targets included) and each option's default; its usage line names the
    script as it is run, `python -m bench.NAME`."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    prog = f"python -m {spec.name}" if spec and spec.name.startswith("bench.") else None
    return argparse.ArgumentParser(prog=prog, description=doc, formatter_class=_Help)


def add_sentences(ap: argparse.ArgumentParser, default: int) -> None:
    """`--sentences N`: how many sentences to time (`bench._data.sentences`)."""
    ap.add_argument(
        "--sentences",
        type=int,
        default=default,
        help="sentences of 15-25 words (Reuters test sentences when ../shared is there)",
    )


def add_jobs(ap: argparse.ArgumentParser, default: int = 2, help: str = "worker processes") -> None:
    """`--jobs N`: processes to run the work in."""
    ap.add_argument("--jobs", type=int, default=default, help=help)


def add_model(
    ap: argparse.ArgumentParser,
    default: str = "default",
    help: str = "a shipped model's name or a model folder",
) -> None:
    """`--model NAME`: one model, a shipped name (default, fast, full) or a folder."""
    ap.add_argument("--model", default=default, help=help)


def add_models(ap: argparse.ArgumentParser, defaults: list[str]) -> None:
    """`--model NAME`, repeated for several models; `args.model` is None when none is given, so
    the script reads `args.model or defaults`."""
    ap.add_argument(
        "--model",
        action="append",
        help=f"a model to time; repeat for several (default: {', '.join(defaults)})",
    )


def add_seconds(ap: argparse.ArgumentParser, default: float, help: str = "how long to run") -> None:
    """`--seconds S`: how long a timed run lasts."""
    ap.add_argument("--seconds", type=float, default=default, help=help)
