"""Every `python -m training...` command answers `--help`, under its name and, for one release,
under the old name it had before `training/` was made packages by job."""

from __future__ import annotations

import runpy
import sys

import pytest

# old name -> the command it runs now
OLD_NAMES = {
    "training.learning_curve": "training.calibration.learning_curve",
    "training.state_head": "training.heads.learned",
    "training.train": "training.gleu.train",
}
COMMANDS = ("training.heads", *OLD_NAMES.values())


def _help(module: str, monkeypatch) -> int | str | None:
    monkeypatch.setattr(sys, "argv", [module, "--help"])
    with pytest.raises(SystemExit) as exit_:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    return exit_.value.code


@pytest.mark.parametrize("module", [*COMMANDS, *OLD_NAMES])
def test_command_answers_help(module, monkeypatch, capsys):
    assert _help(module, monkeypatch) == 0
    assert "usage:" in capsys.readouterr().out


@pytest.mark.parametrize("old", OLD_NAMES)
def test_old_name_says_what_it_runs(old):
    module = __import__(old, fromlist=["main"])
    new = __import__(OLD_NAMES[old], fromlist=["main"])
    assert module.main is new.main
    assert OLD_NAMES[old] in " ".join(module.__doc__.split())
