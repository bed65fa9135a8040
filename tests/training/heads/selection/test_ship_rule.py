"""The rule that picks a head, on tables of held-out numbers alone."""

from __future__ import annotations

import math

from training.heads.metrics.figures import Judgement
from training.heads.selection.ship_rule import FITTED, Candidate, best_single, pick, ships, wins


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


def test_a_head_above_on_both_means_ships_whatever_its_per_file_wins_which_are_shown():
    per = {"a": (0.9, 0.5), "b": (0.1, 0.1), "c": (0.1, 0.1)}
    fitted = Candidate("whole", ("gleu", "x2"), _j(0.40, 0.25, per))
    best = Candidate("whole", ("gleu",), _j(0.35, 0.20, {k: (0.3, 0.2) for k in per}))
    v = pick(fitted, {"gleu (whole)": best}, _j(0.1, 0.05, {k: (0.1, 0.05) for k in per}))
    assert v.head == FITTED and v.ship and not v.is_best
    assert "on 1 of 3 held-out files (per-file wins: evidence, not a veto)" in v.decision


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


def _per(*crit: float, tau: float = 0.0) -> Judgement:
    """A judgement whose files have these rho (and `tau`) and whose means are their mean."""
    per = {f"f{k}": (c, tau) for k, c in enumerate(crit)}
    return Judgement(per, sum(crit) / len(crit), tau)


def test_the_rule_ships_a_head_above_the_current_one_on_the_criterion_even_on_few_files():
    head = _per(0.9, 0.1, 0.1, 0.1)  # mean 0.30, wins 1 of 4 against the current head
    current = _per(0.2, 0.2, 0.2, 0.2)
    r = ships(
        head, minus=_per(0.0, 0, 0, 0, tau=-0.1), current=current, evidence={"current": current}
    )
    assert r.ok and r.failed == ()
    assert "above the current head's criterion" in r.why and "1 of 4 vs current" in r.why


def test_the_rule_refuses_a_head_not_above_the_current_one_and_says_by_how_much():
    r = ships(_per(0.2, 0.2), minus=_per(0.0, 0.0, tau=-0.1), current=_per(0.25, 0.25))
    assert not r.ok and r.failed == ("current head",)
    assert "criterion 0.200 (mean rho + tau) is not above the current head's 0.250" in r.why


def test_the_rule_needs_both_means_above_minus_the_length_and_the_best_input():
    head = Judgement({"a": (0.3, 0.1)}, 0.3, 0.1)
    assert ships(head, minus=Judgement({"a": (0.2, 0.2)}, 0.2, 0.2)).failed == ("minus length",)
    lp = ("logprob sum", Judgement({"a": (0.31, 0.0)}, 0.31, 0.0))
    r = ships(head, minus=_per(0.0, tau=-0.1), best_input=lp)
    assert r.failed == ("best input",) and "logprob sum" in r.why
    no_tau = Judgement({"a": (0.3, math.nan)}, 0.3, math.nan)  # files of one output a group
    assert ships(no_tau, minus=Judgement({"a": (0.1, math.nan)}, 0.1, math.nan)).ok


def test_the_rule_refuses_a_head_that_orders_systems_worse_or_reads_shuffles_as_real():
    head, minus = _per(0.4, 0.4), _per(0.0, 0.0, tau=-0.1)
    assert ships(head, minus=minus, system_gap=(-0.05, 0.02)).ok  # interval across zero
    r = ships(head, minus=minus, system_gap=(-0.09, -0.01))
    assert r.failed == ("systems",) and "[-0.090, -0.010]" in r.why
    r = ships(head, minus=minus, scrambles=0.9, floor=0.95)
    assert r.failed == ("scrambles",) and "90.0%" in r.why
    assert ships(head, minus=minus, scrambles=0.99, floor=0.95).ok


def test_the_rule_refuses_a_head_that_scores_a_run_or_a_loop_above_its_sentence():
    head, minus = _per(0.4, 0.4), _per(0.0, 0.0, tau=-0.1)
    looped = {"run": 1.0, "loop": 0.98, "long run": 0.6, "long loop": 1.0}
    r = ships(head, minus=minus, scrambles=1.0, floor=0.95, degenerate=looped)
    assert not r.ok and r.failed == ("runs and loops",)
    assert "above their long runs for only 60.0%" in r.why and "loops for" not in r.why
    r = ships(head, minus=minus, scrambles=1.0, floor=0.95, degenerate={**looped, "long run": 1})
    assert r.ok and "above their runs and loops (at least 95%)" in r.why
    assert "98.0% of loops" in r.why
