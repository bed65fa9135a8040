"""The errors a caller can act on, re-exported for users of `scorer` (defined in the lowest
layer, `features.errors`, so the parsers and extractors raise the same classes), and the one
that only the scorer raises: a genre its bundle has no head for, and a bundle's held-out tables
that cannot be read."""

from collections.abc import Sequence

from features.errors import FeatureError, InputError, ModelLoadError, ScorerError

__all__ = [
    "FeatureError",
    "GenreError",
    "InputError",
    "ModelLoadError",
    "ReportUnavailableError",
    "ScorerError",
]


class GenreError(InputError):
    """A genre the model has no head for: `genres` are those it has, `reason` why the asked
    one is missing (a genre no model knows, or one whose head did not beat its baselines)."""

    def __init__(self, model: str, genre: str, genres: Sequence[str], reason: str = ""):
        self.model, self.genre, self.genres = model, genre, list(genres)
        why = f" ({reason})" if reason else ""
        super().__init__(
            f"model {model} has no head for genre {genre!r}{why}; its genres: "
            f"{', '.join(self.genres) or 'none'}"
        )


class ReportUnavailableError(ModelLoadError):
    """A bundle's `heads_report.json` (`scorer.heads_report`) is missing, corrupt or not the
    file its card names. The model still scores: only its held-out tables are unavailable."""
