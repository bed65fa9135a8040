"""The said-again check (`training.heads.data.said_again`) on tables of numbers: the smallest fixed
weight on what a text says again that passes, the shares a head keeps, the rule failing a head
that needs more, and the versions made of real paragraphs."""

from __future__ import annotations

import numpy as np
import pytest

from scorer.readings import SAID_AGAIN
from training.heads.data.checks import ScrambleCheck
from training.heads.data.said_again import KINDS, MAX_PENALTY, SaidAgain, versions
from training.heads.estimators.select import Fitted, LinearKind
from training.heads.metrics.figures import Judgement
from training.heads.selection.ship_rule import ships


def _cols(score, said) -> dict:
    return {"weighted": {"x": np.asarray(score, float), SAID_AGAIN: np.asarray(said, float)}}


def _check(pairs: dict, floor: float = 0.95) -> SaidAgain:
    """{kind: ((original scores, shares), (version scores, shares))} as both sets."""
    made = {k: (_cols(*a), _cols(*b)) for k, (a, b) in pairs.items()}
    return SaidAgain(made, made, floor)


def _x(cols):
    return cols["weighted"]["x"]


def test_no_weight_where_every_version_scores_at_or_below_its_original():
    check = _check({"text twice": (([1.0, 2.0], [0, 0]), ([1.0, 1.5], [0.5, 0.5]))})
    assert check.penalty(_x, "weighted") == 0.0
    assert check.shares(_x, "weighted", 0.0) == {"text twice": 1.0}


def test_the_weight_is_the_smallest_that_brings_enough_versions_down():
    # Gaps 0.1, 0.2, 0.4 over shares said again 0.5: weights 0.2, 0.4, 0.8 each bring one down;
    pairs = {"sentence said again": (([0, 0, 0], [0, 0, 0]), ([0.1, 0.2, 0.4], [0.5] * 3))}
    # Chosen to hold halfway from the floor to all of them: 0.6 of three (floor 0.2), then all.
    assert _check(pairs, floor=0.2).penalty(_x, "weighted") == pytest.approx(0.4)
    assert _check(pairs, floor=1.0).penalty(_x, "weighted") == pytest.approx(0.8)
    shares = _check(pairs).shares(_x, "weighted", 0.4)
    assert shares == {"sentence said again": pytest.approx(2 / 3)}


def test_a_version_above_its_original_with_nothing_said_again_cannot_be_brought_down():
    pairs = {"text twice": (([0.0], [0.2]), ([0.5], [0.2]))}
    assert _check(pairs).penalty(_x, "weighted") == np.inf


def test_a_head_is_settled_with_its_weight_and_checked_with_it():
    pairs = {"sentence x2": (([0.0, 0.0], [0, 0]), ([0.3, 0.3], [0.5, 0.5]))}
    again = _check(pairs)
    check = ScrambleCheck(_cols([1.0], [0]), _cols([0.0], [0]), 0.95, {}, again)
    head = Fitted("weighted", ("x",), np.array([1.0]), 0.0, (1.0,))
    settled = check.settle(head)
    assert settled.penalty == pytest.approx(0.6)
    assert check.accuracy(head) == 1.0  # settled inside: shuffles and every kind pass
    assert check.said_again_shares(head) == {"sentence x2": 0.0}  # unsettled: both above
    assert settled.scores(_cols([0.3], [0.5])) == pytest.approx([0.0])


def test_a_head_that_needs_more_than_the_largest_weight_fails_the_check():
    big = 2 * MAX_PENALTY
    again = _check({"text four times": (([0.0], [0.0]), ([big * 0.75], [0.75]))})
    check = ScrambleCheck(_cols([1.0], [0]), _cols([0.0], [0]), 0.95, {}, again)
    head = Fitted("weighted", ("x",), np.array([1.0]), 0.0, (1.0,))
    assert check.settle(head).penalty == MAX_PENALTY
    assert check.accuracy(head) == 0.0


def test_a_linear_kind_fitted_with_the_check_predicts_with_its_weight():
    from training.heads.data.judged import HeadFile

    rng = np.random.default_rng(0)
    x = rng.normal(size=40)
    said = np.where(np.arange(40) % 4 == 0, 0.5, 0.0)
    file = HeadFile(
        "f",
        "g",
        x + rng.normal(scale=0.1, size=40),
        [str(i) for i in range(40)],
        {"weighted": {"x": x, SAID_AGAIN: said}},
        {},
        [],
    )
    again = _check({"sentence x2": (([0.0], [0.0]), ([0.2], [0.5]))})
    check = ScrambleCheck(_cols([1.0], [0]), _cols([0.0], [0]), 0.95, {}, again)
    kind = LinearKind("weighted", ("x",), check).fit([file])
    assert kind.head_.penalty == pytest.approx(0.4)
    assert kind.predict(file) == pytest.approx(x - 0.4 * said)
    assert LinearKind("weighted", ("x",)).fit([file]).predict(file) == pytest.approx(x)


def test_the_rule_fails_a_head_whose_versions_score_above_it():
    j = Judgement({"a": (0.4, 0.3)}, 0.4, 0.3)
    minus = Judgement({"a": (0.1, 0.05)}, 0.1, 0.05)
    shares = {"text twice": 0.90, "sentence x8": 1.0}
    ruling = ships(j, minus=minus, floor=0.95, said_again=shares)
    assert not ruling.ok and ruling.failed == ("said again",)
    assert "90.0% (text twice)" in ruling.why
    ok = ships(j, minus=minus, floor=0.95, said_again={"text twice": 0.96})
    assert ok.ok and "said-again versions at or below the text" in ok.why


def test_versions_say_the_paragraph_and_its_sentences_again():
    paras = [["A b c d e.", "F g h i j.", "K l m n o."], ["P q r s t.", "U v w x y."]]
    made = versions(paras, seed=3)
    assert set(made) == set(KINDS)
    originals, twice = made["text twice"]
    assert originals[0] == "A b c d e. F g h i j. K l m n o."
    assert twice[0] == " ".join([originals[0]] * 2)
    assert made["text four times"][1][1] == " ".join([originals[1]] * 4)
    _, repeated = made["sentence said again"]
    words = repeated[0].split(". ")
    assert len(words) == 4 and any(words[i] == words[i + 1] for i in range(3))
    one, eight = made["sentence x8"]
    assert one[0] in paras[0] and eight[0] == " ".join([one[0]] * 8)


def test_without_a_general_head_the_gleu_stage_serves_with_the_weight_it_needs():
    """No general head ships: the GLEU score alone, read by sentence as the stage serves it,
    carries the weight on what is said again its check needs, and the report says so."""
    from scorer.heads import GLEU_INPUT
    from training.heads.data.judged import HeadFile
    from training.heads.tier import gleu_alone

    rng = np.random.default_rng(3)
    files = []
    for name, genre in (("a", "x"), ("b", "x"), ("c", "y"), ("d", "y")):
        gleu = rng.normal(size=40)
        cols = {GLEU_INPUT: gleu, SAID_AGAIN: np.zeros(40)}
        files.append(
            HeadFile(name, genre, gleu + rng.normal(size=40), [f"g{i // 4}" for i in range(40)],
                     {"weighted": cols}, {"minus length": rng.normal(size=40)}, [])
        )  # fmt: skip

    def cols(score, said):
        return {"weighted": {GLEU_INPUT: np.asarray(score, float), SAID_AGAIN: np.asarray(said)}}

    made = {"sentence said again": (cols([0.0] * 4, [0] * 4), cols([0.2] * 4, [0.25] * 4))}
    check = ScrambleCheck(cols([1.0], [0]), cols([0.0], [0]), 0.95, {}, SaidAgain(made, made, 0.95))
    decision = {"ship": False, "decision": "not shipped: below its best single input"}
    section = gleu_alone(files, check, decision, held="one genre out", command="c")
    assert section["aggregate"] == "weighted"
    assert section["inputs"] == [GLEU_INPUT, SAID_AGAIN]
    assert section["linear"]["coef"] == pytest.approx([1.0, -0.8])
    served = section["selection"]
    assert served["decision"].startswith("not shipped: below its best single input; served:")
    assert served["served"] == {"reading": "weighted", "inputs": [GLEU_INPUT]}
    assert served["said_again"]["shares"] == {"sentence said again": 1.0}
    cost = served["said_again"]["held_out"]
    assert cost["with"] == cost["without"]  # no development text says anything again
    # a stage that needs no weight is left as it is
    flat = {"text twice": (cols([0.0], [0]), cols([0.0], [0.5]))}
    calm = ScrambleCheck(cols([1.0], [0]), cols([0.0], [0]), 0.95, {}, SaidAgain(flat, flat, 0.95))
    assert gleu_alone(files, calm, decision, held="one genre out", command="c") is None


def test_the_report_line_says_the_weight_and_its_cost_where_a_figure_is_missing():
    from training.heads.report.tables import said_again_line

    entry = {"weight": 0.3129, "shares": {"text twice": 1.0, "sentence x8": 0.96}}
    entry["held_out"] = {
        "with": {"rho": 0.1957, "tau": None, "systems": None},
        "without": {"rho": 0.1964, "tau": None, "systems": None},
    }
    line = said_again_line(entry)
    assert line.startswith("said again: weight 0.313, lowest share at or below the text 0.960")
    assert "(sentence x8)" in line and "with it 0.196 / –, systems –" in line
