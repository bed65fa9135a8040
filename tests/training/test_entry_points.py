"""Every `python -m training...` command answers `--help`."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

import pytest

COMMANDS = (
    "training.heads",
    "training.calibration.learning_curve",
    "training.heads.learned",
    "training.heads.said_again_bundle",
    "training.gleu.train",
)
TRAINING = Path(__file__).resolve().parents[2] / "training"
# names the commands had before `training/` was made packages by job, gone since
GONE = ("learning_curve", "state_head", "train")


def _help(module: str, monkeypatch) -> int | str | None:
    monkeypatch.setattr(sys, "argv", [module, "--help"])
    with pytest.raises(SystemExit) as exit_:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    return exit_.value.code


@pytest.mark.parametrize("module", COMMANDS)
def test_command_answers_help(module, monkeypatch, capsys):
    assert _help(module, monkeypatch) == 0
    assert "usage:" in capsys.readouterr().out


@pytest.mark.parametrize("old", GONE)
def test_old_names_are_gone(old):
    assert not (TRAINING / f"{old}.py").exists()
