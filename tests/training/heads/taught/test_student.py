"""The student (`training.heads.taught.student`): a ridge on the tier's columns fitted to a
teacher's scores, its alpha chosen by how well it reproduces the teacher on a whole set of texts
left out, served as an ordinary clipped linear head."""

from __future__ import annotations

import numpy as np

from scorer.heads import Head
from training.heads.taught.student import ALPHAS, fit_student, student_inputs


def _sets(rng, n_sets=4, n=300, noise=0.0):
    """Text sets whose teacher scores are 2 a - b (+ noise); c is noise, d constant."""
    cols, targets = [], []
    for _ in range(n_sets):
        c = {k: rng.normal(size=n) for k in "abc"} | {"d": np.ones(n)}
        cols.append(c)
        targets.append(2 * c["a"] - c["b"] + noise * rng.normal(size=n))
    return cols, targets


def test_it_reproduces_a_teacher_its_columns_can_express():
    rng = np.random.default_rng(0)
    cols, targets = _sets(rng)
    student = fit_student(cols, targets, [1.0] * 4, ["a", "b", "c", "d"])
    assert student.fidelity > 0.99
    assert student.n_texts == 1200
    new = {k: rng.normal(size=50) for k in "abc"} | {"d": np.ones(50)}
    np.testing.assert_allclose(student.predict({"whole": new}), 2 * new["a"] - new["b"], atol=0.1)
    assert student.head.weight("d") == 0.0  # a constant column weighs nothing


def test_its_alpha_is_the_strongest_within_one_error_of_the_best():
    rng = np.random.default_rng(1)
    cols, _ = _sets(rng)
    noise = [rng.normal(size=300) for _ in cols]  # nothing to learn: the strongest alpha
    student = fit_student(cols, noise, [1.0] * 4, ["a", "b", "c"])
    assert student.alpha == max(ALPHAS)
    assert student.fidelity < 0.05
    cols, targets = _sets(rng)
    clean = fit_student(cols, targets, [1.0] * 4, ["a", "b", "c"])
    assert clean.alpha < max(ALPHAS)


def test_each_input_is_clipped_to_the_range_it_learned_from():
    rng = np.random.default_rng(2)
    cols, targets = _sets(rng)
    student = fit_student(cols, targets, [1.0] * 4, ["a", "b"])
    top = max(c["a"].max() for c in cols)
    far = {"a": np.array([top, top + 100.0]), "b": np.zeros(2)}
    first, second = student.predict({"whole": far})
    assert second == first  # beyond the range it saw, a column gives no more


def test_the_section_serves_the_same_scores():
    rng = np.random.default_rng(3)
    cols, targets = _sets(rng)
    student = fit_student(cols, targets, [1.0, 1.0, 0.5, 0.5], ["a", "b", "c"])
    served = Head.from_section(student.head.to_section("general"))
    new = {"whole": {"gleu": rng.normal(size=20)} | {k: rng.normal(size=20) for k in "abc"}}
    np.testing.assert_allclose(served.predict(new), student.head.predict(new), rtol=1e-12)
    assert served.reading == "whole"


def test_set_weights_are_shared_by_their_texts():
    """A set of many texts weighs what a set of few weighs: two sets that disagree, one 10
    times larger, pull the student to their middle where their weights are equal."""
    rng = np.random.default_rng(4)
    big = {"a": rng.normal(size=3000)}
    small = {"a": rng.normal(size=300)}
    targets = [big["a"], -small["a"]]
    student = fit_student([big, small], targets, [1.0, 1.0], ["a"], alphas=(0.1,))
    assert abs(student.head.weight("a")) < 0.1
    leaning = fit_student([big, small], targets, [3000.0, 300.0], ["a"], alphas=(0.1,))
    assert leaning.head.weight("a") > 0.7


def test_its_inputs_leave_out_the_states_and_what_is_said_again():
    from scorer.readings import SAID_AGAIN

    cols = {"gleu": 0, "spacy.v1/n_tokens": 0, "neural_states.v1/h000": 0, SAID_AGAIN: 0}
    assert student_inputs(cols) == ["gleu", "spacy.v1/n_tokens"]
