"""Reference-based accuracy: Bangalore et al. (2000) string and tree accuracies, BLEU, chrF,
NIST and dependency F-score."""

from features.accuracy.alignment import Alignment, EditCounts, align
from features.accuracy.bangalore import (
    Comparison,
    compare,
    quality_accuracy,
    understandability_accuracy,
)
from features.accuracy.dependency import DependencyF
from features.accuracy.ngram import Bleu, Chrf, Nist
from features.accuracy.report import METRICS, AccuracyReport, score_accuracy
from features.accuracy.tree import tree_counts, treelets

__all__ = [
    "METRICS",
    "AccuracyReport",
    "Alignment",
    "Bleu",
    "Chrf",
    "Comparison",
    "DependencyF",
    "EditCounts",
    "Nist",
    "align",
    "compare",
    "quality_accuracy",
    "score_accuracy",
    "tree_counts",
    "treelets",
    "understandability_accuracy",
]
