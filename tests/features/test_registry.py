"""Contract over every registered extractor: a new feature file is covered here for free."""

from __future__ import annotations

import math

import pytest

from features.extract import extract
from features.parsing import parse
from features.registry import all_specs
from features.resources import Resources

AWKWARD = [
    "The company said profits rose in the first quarter.",
    "Profits.",
    "quarter the rose profits in said first company the",
    "Die Firma meldete am Dienstag höhere Gewinne.",
    "\u200bThe\u0007 bank\ufeff said\u00a0so.",
    "😀 ∑ ∫ → ★",
    " ".join(["the market rose and"] * 8) + ".",  # repetitive; 500-token input: per-extractor tests
]
SPECS = [spec.name for spec in all_specs()]


@pytest.fixture(scope="module")
def resources():
    return Resources()


@pytest.fixture(scope="module")
def parsed():
    return parse(AWKWARD, lemmas=False)


@pytest.mark.parametrize("name", SPECS)
def test_finite_values_and_the_same_keys_for_every_input(name, resources, parsed):
    rows = extract(parsed, [name], resources)
    keys = set(rows[0])
    assert keys and all(k.startswith(name + "/") for k in keys)
    for text, row in zip(AWKWARD, rows, strict=True):
        assert set(row) == keys, text
        assert all(isinstance(v, float) and math.isfinite(v) for v in row.values()), (text, row)


@pytest.mark.parametrize("name", SPECS)
def test_no_extractor_reads_lemmas_or_coarse_pos(name, resources, parsed):
    """The scorer parses without the attribute ruler and lemmatizer (40% of spaCy's time):
    safe only while every extractor gives the same values without them."""
    with_lemmas = parse(AWKWARD, lemmas=True)
    assert any(s.lemmas for s in with_lemmas) and not any(s.lemmas for s in parsed)
    assert extract(with_lemmas, [name], resources) == extract(parsed, [name], resources)
