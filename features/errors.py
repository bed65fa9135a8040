"""Errors a caller can act on. Imports nothing, so every layer (features, scorer, training) raises
the same classes; `scorer.errors` re-exports them."""

__all__ = ["FeatureError", "InputError", "ModelLoadError", "ScorerError"]


class ScorerError(Exception):
    """Something the caller did or can fix."""


class InputError(ScorerError, ValueError):
    """Text, references or request body not accepted."""


class FeatureError(ScorerError):
    """Unknown/duplicate feature, or missing annotation."""


class ModelLoadError(ScorerError):
    """Model folder missing, or its card doesn't match."""
