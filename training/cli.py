"""The model-making commands (`split-corpus`, `train`, `train-lm`, `train-neural-unigrams`,
`train-parser`, `glue-test`, `calibrate`, `import-judgements`), gathered for `scorer.cli`. Each
module adds its own subcommands."""

from __future__ import annotations

from training import calibrate, corpus, glue, imports, lm, neural_unigrams, parser, train

__all__ = ["add_commands"]


def add_commands(sub) -> None:
    for module in (corpus, train, glue, calibrate, parser, lm, neural_unigrams, imports):
        module.add_commands(sub)
