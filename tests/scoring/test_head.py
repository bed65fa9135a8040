"""One head type (`scorer.heads.Head`): every shipped card section reads and writes back as it was,
a head scores the same from columns by reading as from a text's row, a fixed weight goes on and
off, and the old names still answer for one release, with a warning."""

from __future__ import annotations

import importlib
import sys

import numpy as np
import pytest

from features.errors import ModelLoadError
from features.resources import MODELS_DIR
from scorer.bundle import read_card
from scorer.heads import GLEU_INPUT, Head, card_heads
from scorer.readings import SAID_AGAIN

SECTIONS = [
    (tier, genre, section)
    for tier in ("default", "fast", "full", "neural")
    for genre, section in card_heads(read_card(tier, MODELS_DIR)[1]).items()
]


@pytest.mark.parametrize(
    ("tier", "genre", "section"), SECTIONS, ids=[f"{t}-{g}" for t, g, _ in SECTIONS]
)
def test_every_shipped_section_reads_and_writes_back_as_it_was(tier, genre, section):
    head = Head.from_section(section)
    assert head.to_section() == dict(section)  # every number exactly, key order aside
    assert head.reading == section["aggregate"] and head.inputs[0] == GLEU_INPUT


def test_a_head_scores_columns_by_reading_as_it_scores_a_texts_row():
    head = Head(
        (GLEU_INPUT, "x", SAID_AGAIN),
        [0.5, -1.0, -0.3],
        0.1,
        "whole",
        ([-np.inf, -2.0, -np.inf], [np.inf, 2.0, np.inf]),
    )
    gleu, x, said = (
        np.array([0.2, -1.0, 3.0]),
        np.array([-5.0, 0.5, 1.0]),
        np.array([0.0, 0.5, 1.0]),
    )
    by_reading = head.predict({"whole": {GLEU_INPUT: gleu, "x": x, SAID_AGAIN: said}})
    served = head.apply(gleu, [{"x": v} for v in x], {SAID_AGAIN: said})
    assert np.array_equal(by_reading, served)
    expected = 0.5 * gleu - np.clip(x, -2, 2) - 0.3 * said + 0.1
    assert np.allclose(served, expected)


def test_a_fixed_weight_goes_last_and_open_and_comes_off():
    head = Head((GLEU_INPUT, "x"), [1.0, 2.0], 0.0, "sum", ([-np.inf, 0.0], [np.inf, 1.0]))
    carried = head.with_weight(SAID_AGAIN, -0.25)
    section = carried.to_section("mt")
    assert section["inputs"] == [GLEU_INPUT, "x", SAID_AGAIN]
    assert section["linear"]["coef"] == [1.0, 2.0, -0.25]
    assert section["clip"] == {"low": [None, 0.0, None], "high": [None, 1.0, None]}
    assert carried.weight(SAID_AGAIN) == -0.25 and head.weight(SAID_AGAIN) == 0.0
    assert carried.with_weight(SAID_AGAIN, 0.0).to_section("mt") == head.to_section("mt")


def test_a_section_without_weights_is_refused():
    with pytest.raises(ModelLoadError, match="no linear weights"):
        Head.from_section({"inputs": [GLEU_INPUT], "aggregate": "whole"})
    with pytest.raises(ModelLoadError, match="2 weights for 1 inputs"):
        Head.from_section({"inputs": [GLEU_INPUT], "linear": {"coef": [1.0, 2.0], "intercept": 0}})


def test_the_old_names_are_gone():
    """`scorer.calibration` and `FluencyScorer.calibration`, deprecated in 0.18.0, are gone."""
    from scorer.scoring import FluencyScorer

    sys.modules.pop("scorer.calibration", None)
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("scorer.calibration")
    assert not hasattr(FluencyScorer, "calibration")
