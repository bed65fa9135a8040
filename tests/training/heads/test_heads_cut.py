"""The choice of heads on a small cut of four development files gives the tables it gave before
`training.heads` was set out by role (`tests/data/heads_cut.json`): `python -m training.heads`,
the selection on folds of one file and the learning curve, its shipped heads refitted.

The expectations were written by `write_expected()` below at commit d67526b (0.17.0), the last
commit before the rooms, with the default model and the row cache of `features.rows`:

    .venv/bin/python -c \
        "from tests.training.heads.test_heads_cut import write_expected; write_expected()"

Run again after a change that is meant to change a choice, and say so in the commit.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[2] / "data" / "heads_cut.json"
SHARED = Path(__file__).resolve().parents[4] / "shared"
FILES = ("newsroom2018", "novikova2017_bagel", "novikova2017_sfhot", "usr2020_topicalchat")
CUT = {"max_outputs": 60, "max_words": 40000, "seed": 12345}
N_SAMPLES = 50


def _found(dev: Path, tmp: Path) -> dict:
    """Every figure the three paths print, on the cut: `python -m training.heads` (general and
    genre heads, one genre and one dataset out), `training.heads.selection.choose.choose` (folds of
    one file) and `training.calibration.curves.curves` (one file, one size, one draw)."""
    from features.rows import default_cache_dir
    from scorer.evidence.genres import GENRES
    from scorer.scoring import load_scorer
    from training.calibration.curves import curves
    from training.heads.data.files import READING_MODES, head_files
    from training.heads.selection.choose import choose
    from training.heads.tier import main

    out = tmp / "heads.json"
    argv = ["--model", "default", "--dev", str(dev), "--files", *[f"{f}.jsonl" for f in FILES]]
    argv += ["--max-outputs", str(CUT["max_outputs"]), "--samples", str(N_SAMPLES)]
    argv += ["--jobs", "1", "--scrambles", "", "--json", str(out)]
    main(argv)
    heads = json.loads(out.read_text())
    scorer = load_scorer("default")
    paths = [dev / f"{f}.jsonl" for f in FILES]
    files = head_files(
        scorer, paths, GENRES, READING_MODES, cache_dir=default_cache_dir(), n_jobs=1, **CUT
    )
    sfhot = next(f for f in files if f.name == "novikova2017_sfhot")
    folds = choose([sfhot], READING_MODES, folds=3, n_samples=N_SAMPLES).decision
    found = curves(
        files, scorer.card, READING_MODES, only=[sfhot.name], sizes=(25,), draws=1, n_samples=20,
        min_held=20,
    )  # fmt: skip
    curve = json.loads(json.dumps([asdict(c) for c in found]))
    return {"heads": heads, "folds": json.loads(json.dumps(folds)), "curve": curve}


def write_expected() -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        found = _found(SHARED / "dev", Path(tmp))
    DATA.write_text(json.dumps(found, sort_keys=True, separators=(",", ":")) + "\n")


@pytest.mark.slow
@pytest.mark.shared
def test_the_cut_gives_the_tables_it_gave(shared_dir, tmp_path):
    expected = json.loads(DATA.read_text())
    found = json.loads(json.dumps(_found(shared_dir / "dev", tmp_path), sort_keys=True))
    for part in ("heads", "folds", "curve"):
        assert found[part] == expected[part], part
