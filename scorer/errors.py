"""The errors a caller can act on, re-exported for users of `scorer` (defined in the lowest
layer, `features.errors`, so the parsers and extractors raise the same classes)."""

from features.errors import FeatureError, InputError, ModelLoadError, ScorerError

__all__ = ["FeatureError", "InputError", "ModelLoadError", "ScorerError"]
