"""`features.neural_lanes`: a batch's passes side by side, in the order given, and the setting
checked at load."""

from __future__ import annotations

import threading

import pytest

from features.errors import ModelLoadError
from features.neural_lanes import lanes_from_env, side_by_side


def test_two_lanes_run_two_items_at_once_and_keep_their_order():
    both = threading.Barrier(2, timeout=10)  # broken unless two calls wait at the same time

    def run(item: int) -> tuple[int, str]:
        if item < 2:
            both.wait()
        return item * 10, threading.current_thread().name

    found = side_by_side(run, [0, 1, 2, 3, 4], lanes=2)
    assert [value for value, _ in found] == [0, 10, 20, 30, 40]
    assert len({name for _, name in found[:2]}) == 2


def test_one_lane_runs_in_the_calling_thread():
    found = side_by_side(lambda item: threading.current_thread(), [1, 2, 3], lanes=1)
    assert found == [threading.current_thread()] * 3


def test_an_error_in_a_lane_is_raised_to_the_caller():
    def run(item: int) -> int:
        if item == 3:
            raise ValueError("pass 3 failed")
        return item

    with pytest.raises(ValueError, match="pass 3 failed"):
        side_by_side(run, [1, 2, 3, 4], lanes=2)


def test_the_setting_is_one_unless_given_and_is_checked(monkeypatch):
    monkeypatch.delenv("FLUENCY_NEURAL_LANES", raising=False)
    assert lanes_from_env() == 1
    monkeypatch.setenv("FLUENCY_NEURAL_LANES", " 2 ")
    assert lanes_from_env() == 2
    for bad in ("0", "-1", "two", "1.5"):
        monkeypatch.setenv("FLUENCY_NEURAL_LANES", bad)
        with pytest.raises(ModelLoadError, match="FLUENCY_NEURAL_LANES must be a whole number"):
            lanes_from_env()
