"""One call extracts every requested feature for a batch: parse once, run each extractor once."""

from __future__ import annotations

import math
from collections.abc import Sequence

from features import registry
from features.errors import FeatureError
from features.resources import Resources
from features.sentence import Sentence

__all__ = ["extract"]


def extract(
    sentences: Sequence[Sentence],
    features: Sequence[str] | None = None,
    resources: Resources | None = None,
) -> list[dict[str, float]]:
    """`{"<extractor>/<name>": value}` per sentence, the same keys for every sentence.

    Every value is a finite float: an extractor that returns NaN or infinity, or a key it did not
    declare, is a bug caught here, not a model silently trained on garbage.
    """
    specs = registry.all_specs() if features is None else [registry.get(n) for n in features]
    resources = resources or Resources()
    rows: list[dict[str, float]] = [{} for _ in sentences]
    for spec in specs:
        values = spec.func(list(sentences), resources)
        if len(values) != len(sentences):
            raise FeatureError(f"{spec.name} gave {len(values)} rows for {len(sentences)} texts")
        for row, got in zip(rows, values, strict=True):
            if set(got) != set(spec.names):
                raise FeatureError(
                    f"{spec.name} yielded {sorted(got)}, but declared {sorted(spec.names)}"
                )
            for key, value in got.items():
                value = float(value)
                if not math.isfinite(value):
                    raise FeatureError(f"{spec.name}/{key} is {value}: extractors must be finite")
                row[f"{spec.name}/{key}"] = value
    return rows
