"""The choice of heads on a small cut of four development files gives the tables it gave before
`training.heads` was set out by role (`tests/data/heads_cut.json`): `python -m training.heads`,
the selection on folds of one file and the learning curve, its shipped heads refitted.

The cut's feature rows are shipped beside them (`tests/data/heads_cut_rows`, the row cache of
`features.rows`): rows parsed afresh on another machine differ in a few single-input cells, so
the tables are a function of the code alone only on the same rows. The expectations were
written by `write_expected()` below at commit d67526b (0.17.0), the last commit before the
rooms, from those rows, and the code gave the same file byte for byte; then again in 0.20.0,
when a text's token-weighted mean of its sentences' rows became an exactly rounded sum
(`features.segment.Segmentation.mean_rows`): a BLAS dot product's last bit, which differs by
CPU, had broken ties between texts (nine cells of single inputs moved, no choice). The file is
now the same under OpenBLAS's Haswell and SkylakeX kernels (`OPENBLAS_CORETYPE`).

    FLUENCY_ROW_CACHE=tests/data/heads_cut_rows .venv/bin/python -c \
        "from tests.training.heads.test_heads_cut import write_expected; write_expected()"

Run again after a change that is meant to change a choice, and say so in the commit.
"""

from __future__ import annotations

import json
import math
import shutil
from dataclasses import asdict
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[2] / "data" / "heads_cut.json"
ROWS = DATA.parent / "heads_cut_rows"
SHARED = Path(__file__).resolve().parents[4] / "shared"
FILES = ("newsroom2018", "novikova2017_bagel", "novikova2017_sfhot", "usr2020_topicalchat")
CUT = {"max_outputs": 60, "max_words": 40000, "seed": 12345}
N_SAMPLES = 50


def _found(dev: Path, tmp: Path, cache: Path | None = None) -> dict:
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
    cache = cache or default_cache_dir()
    argv += ["--cache", str(cache)]
    main(argv)
    heads = json.loads(out.read_text())
    scorer = load_scorer("default")
    paths = [dev / f"{f}.jsonl" for f in FILES]
    files = head_files(scorer, paths, GENRES, READING_MODES, cache_dir=cache, n_jobs=1, **CUT)
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


def _differences(found, expected, where="") -> list[str]:
    """Where `found` differs from `expected`: numbers by more than 1e-6 (NaN equal to NaN),
    anything else at all."""
    if isinstance(expected, dict) and isinstance(found, dict):
        keys = sorted(set(found) | set(expected))
        return [
            d for k in keys for d in _differences(found.get(k), expected.get(k), f"{where}/{k}")
        ]
    if isinstance(expected, list) and isinstance(found, list) and len(found) == len(expected):
        return [
            d
            for i, (a, b) in enumerate(zip(found, expected, strict=True))
            for d in _differences(a, b, f"{where}/{i}")
        ]
    numbers = (int, float)
    pair = (found, expected)
    if all(isinstance(x, numbers) and not isinstance(x, bool) for x in pair):
        same = (math.isnan(found) and math.isnan(expected)) or abs(found - expected) <= 1e-6
        return [] if same else [f"{where}: {found!r} != {expected!r}"]
    return [] if found == expected else [f"{where}: {found!r} != {expected!r}"]


def test_differences_sees_numbers_beyond_1e6_and_nan_as_nan():
    nan = float("nan")
    assert _differences({"a": [1.0, nan]}, {"a": [1.0 + 1e-7, nan]}) == []
    assert _differences({"a": [1.0, nan]}, {"a": [1.001, nan]}) == ["/a/0: 1.0 != 1.001"]
    assert _differences({"a": nan}, {"a": 0.0}) and _differences({"a": "x"}, {"a": "y"})
    assert _differences({"a": [1]}, {"a": [1, 2]}) and _differences({}, {"b": 1})


@pytest.mark.shared
def test_the_cut_gives_the_tables_it_gave(shared_dir, tmp_path):
    cache = tmp_path / "rows"
    shutil.copytree(ROWS, cache)
    shipped = {p.relative_to(cache): p.read_bytes() for p in cache.rglob("*") if p.is_file()}
    expected = json.loads(DATA.read_text())
    found = json.loads(json.dumps(_found(shared_dir / "dev", tmp_path, cache), sort_keys=True))
    now = {p.relative_to(cache): p.read_bytes() for p in cache.rglob("*") if p.is_file()}
    assert now == shipped, "the cut was parsed afresh: the shipped rows' key no longer matches"
    for part in ("heads", "folds", "curve"):
        assert _differences(found[part], expected[part], part) == []
