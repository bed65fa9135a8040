"""Parsing, feature extractors and reference-based accuracy metrics."""

from features.parsing import load_nlp, parse
from features.sentence import Sentence

__all__ = ["Sentence", "load_nlp", "parse"]
