"""The rule that picks a head, on tables of held-out numbers alone."""

from __future__ import annotations

import math

from training.heads_select import Judgement
from training.ship_rule import FITTED, Candidate, best_single, pick, wins


def _j(rho: float, tau: float, per_file: dict | None = None) -> Judgement:
    return Judgement(per_file or {"a": (rho, tau), "b": (rho, tau)}, rho, tau)


def _single(name: str, rho: float, tau: float, **kw) -> Candidate:
    return Candidate("whole", (name,), _j(rho, tau), **kw)


MINUS = _j(0.10, 0.05)


def test_a_fitted_head_above_length_and_its_best_input_ships():
    fitted = Candidate("whole", ("gleu", "x2"), _j(0.40, 0.30))
    singles = {"gleu (whole)": _single("gleu", 0.30, 0.20), "x2 (whole)": _single("x2", 0.2, 0.1)}
    v = pick(fitted, singles, MINUS)
    assert (v.head, v.ship, v.decision, v.is_best) == (FITTED, True, "shipped", False)


def test_a_single_input_above_the_fitted_head_on_both_means_becomes_the_head():
    fitted = Candidate("whole", ("x2", "x3"), _j(0.30, 0.20))
    singles = {"gleu (whole)": _single("gleu", 0.35, 0.25), "x2 (whole)": _single("x2", 0.2, 0.1)}
    v = pick(fitted, singles, MINUS)
    assert v.head == "gleu (whole)" and v.ship and v.is_best
    assert "lost to gleu (whole) on both means" in v.decision


def test_a_head_that_wins_on_few_files_is_fragile_and_ships_its_input():
    per = {"a": (0.9, 0.5), "b": (0.1, 0.1), "c": (0.1, 0.1)}
    fitted = Candidate("whole", ("gleu", "x2"), _j(0.40, 0.25, per))
    best = Candidate("whole", ("gleu",), _j(0.35, 0.20, {k: (0.3, 0.2) for k in per}))
    v = pick(fitted, {"gleu (whole)": best}, _j(0.1, 0.05, {k: (0.1, 0.05) for k in per}))
    assert v.head == "gleu (whole)" and v.ship
    assert "on only 1 of 3 held-out files (fragile)" in v.decision


def test_a_head_that_orders_systems_worse_ships_its_input():
    gain = (-0.08, -0.01)
    fitted = Candidate("whole", ("gleu", "x2"), _j(0.40, 0.30), system_gain=gain)
    v = pick(fitted, {"gleu (whole)": _single("gleu", 0.30, 0.20)}, MINUS)
    assert v.head == "gleu (whole)" and v.ship
    assert "orders systems worse" in v.decision and "[-0.080, -0.010]" in v.decision
    ungated = Candidate("whole", ("gleu", "x2"), _j(0.40, 0.30), system_gain=(-0.08, 0.02))
    assert pick(ungated, {"gleu (whole)": _single("gleu", 0.30, 0.20)}, MINUS).head == FITTED


def test_nothing_ships_below_minus_the_length_and_says_what_it_lost_to():
    fitted = Candidate("whole", ("gleu",), _j(0.08, 0.20))
    v = pick(fitted, {"gleu (whole)": _single("gleu", 0.08, 0.20)}, MINUS)
    assert not v.ship and v.is_best
    assert v.decision == "not shipped: held out, it does not beat minus length on both means"


def test_an_input_that_reads_shuffles_as_real_is_never_taken_and_is_named():
    fitted = Candidate("whole", ("x2",), _j(0.20, 0.10))
    singles = {
        "len (whole)": _single("len", 0.50, 0.40, robust=False),
        "x2 (whole)": _single("x2", 0.20, 0.10),
    }
    v = pick(fitted, singles, MINUS)
    assert v.head == FITTED and not v.ship
    assert v.decision.endswith("(that input scores shuffled sentences as high as real ones)")


def test_no_head_when_no_input_passes_the_scramble_check():
    v = pick(None, {"x (whole)": _single("x", 0.2, 0.1)}, MINUS, floor=0.95)
    assert v.head is None and not v.ship and "95%" in v.decision


def test_the_best_single_input_and_wins_read_nan_as_worst():
    singles = {"a (whole)": _single("a", math.nan, 0.9), "b (whole)": _single("b", 0.1, 0.0)}
    assert best_single(singles) == "b (whole)"
    a = _j(0.3, 0.1, {"f": (0.3, math.nan), "g": (math.nan, 0.2)})
    b = _j(0.2, 0.1, {"f": (0.2, 0.05), "g": (0.1, 0.0)})  # f: 0.3 > 0.25; g: nan loses
    assert wins(a, b) == 1
