"""The model-making commands (`split-corpus`, `train`, `train-lm`, `train-parser`, `glue-test`,
`compare-models`), gathered for `scorer.cli`. Each module adds its own subcommands."""

from __future__ import annotations

from training import corpus, glue, lm, parser, select, train

__all__ = ["add_commands"]


def add_commands(sub) -> None:
    for module in (corpus, train, glue, select, parser, lm):
        module.add_commands(sub)
