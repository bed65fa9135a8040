"""What a `fluency score` process imports: the scorer's own stack, not the training commands'.

The command line builds a parser of the command modules, so it imports them; a module that
imports SciPy's statistics, scikit-learn, pandas or PyTorch at its top would make every scoring
process pay for them (SciPy's statistics alone are about a second of start-up), and the
model-making commands (`training`) are left out when another command runs.
"""

from __future__ import annotations

import math
import subprocess
import sys

import pytest


@pytest.mark.parametrize("model", ["default", "fast"])
def test_fluency_score_imports_no_training_library(model, tmp_path):
    path = tmp_path / "in.txt"
    path.write_text("The bank said that profits would rise.\n")
    code = (
        "import sys\n"
        "from scorer.cli import main\n"
        f"main(['score', '--model', {model!r}, {str(path)!r}])\n"
        "heavy = ('scipy.stats', 'sklearn', 'pandas', 'torch', 'training')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    score, imported = out.stdout.strip().splitlines()
    assert math.isfinite(float(score))
    assert imported == "[]"


def test_every_command_is_listed_and_a_training_command_still_runs(capsys):
    from scorer.cli import build_parser, main

    listed = build_parser().format_help()
    assert "score" in listed and "train-lm" in listed and "calibrate" in listed
    with pytest.raises(SystemExit) as stop:
        main(["--placeholders", "score", "train-lm", "--help"])
    assert stop.value.code == 0
    assert "--corpus" in capsys.readouterr().out
