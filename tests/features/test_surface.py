"""surface.v2 (it reads only tokens): symbol debris, and finite values on bad input."""

from __future__ import annotations

import math

import pytest
from examples import sentence

from features.extract import extract
from features.resources import Resources


def rows(texts):
    out = extract([sentence(t) for t in texts], ["surface.v2"], Resources())
    return [{k.split("/")[1]: v for k, v in row.items()} for row in out]


def test_junk_ratio_counts_symbols_and_emoji_not_numbers_or_punctuation():
    clean, prices, debris, only = rows(
        [
            "The company said profits rose .",
            "Prices rose 5 % to $ 10 < GS.N > .",
            "The company ★ said profits 🙂 rose .",
            "🙂 ★ ☃ ∑",
        ]
    )
    assert clean["junk_ratio"] == 0.0 and prices["junk_ratio"] == 0.0
    assert debris["junk_ratio"] == pytest.approx(2 / 8)
    assert only["junk_ratio"] == 1.0 and only["non_alpha_ratio"] == 1.0
    assert prices["non_alpha_ratio"] > 0.5  # non-alphabetic, but not debris


def test_surface_values_are_finite_on_bad_input():
    for row in rows(["", "   ", "a", "\x00 \x07", "日本語のテキストです", "word " * 600]):
        assert all(math.isfinite(v) for v in row.values())
