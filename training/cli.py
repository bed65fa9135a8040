"""The model-making commands (`split-corpus`, `train`, `train-lm`, `train-neural-unigrams`,
`export-neural`, `train-parser`, `glue-test`, `calibrate`, `import-judgements`), gathered for
`scorer.cli`. Each module adds its own subcommands."""

from __future__ import annotations

from training.calibration import calibrate
from training.gleu import corpus, glue, lm, neural_export, neural_unigrams, parser, train
from training.judged import imports

__all__ = ["add_commands"]


def add_commands(sub) -> None:
    modules = (corpus, train, glue, calibrate, parser, lm, neural_unigrams, neural_export, imports)
    for module in modules:
        module.add_commands(sub)
