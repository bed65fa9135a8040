"""What a `fluency score` process imports: the scorer's own stack, not the training commands'.

The command line builds one parser for every command, so it imports each command module; a
module that imports SciPy's statistics, scikit-learn, pandas or PyTorch at its top would make
every scoring process pay for them (SciPy's statistics alone are about a second of start-up).
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
        "heavy = ('scipy.stats', 'sklearn', 'pandas', 'torch')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    score, imported = out.stdout.strip().splitlines()
    assert math.isfinite(float(score))
    assert imported == "[]"
