"""`training.ceiling`: the in-sample fits a held-out figure is read against: one a file, one a
genre, one over every file, each file judged by the fit that saw it."""

from __future__ import annotations

from examples import judged_following

from training.ceiling import ceilings, main
from training.recipes import table

GENRES = {"a1": "A", "a2": "A", "b": "B", "c": "C"}


def test_each_fit_judges_the_files_it_saw_and_a_genre_read_backwards_shows_only_when_pooled():
    signs = {"a1": 1.0, "a2": 1.0, "b": 1.0, "c": -1.0}
    files = [
        judged_following(name, sign, n=90, seed=k, noise=0.3)
        for k, (name, sign) in enumerate(signs.items(), 1)
    ]
    out = ceilings(files, GENRES, "ridge(alpha=1)")
    alone = out["ridge(alpha=1), each file alone"]
    genre = out["ridge(alpha=1), each genre pooled"]
    pooled = out["ridge(alpha=1), every file pooled"]
    assert list(alone) == list(genre) == list(pooled) == list(signs)
    # Fitted on its own file or genre, every file is read the way its people read it...
    assert min(r["spearman"] for r in alone.values()) > 0.9
    assert min(r["spearman"] for r in genre.values()) > 0.9
    # ...but one fit over every file reads C the way the three others do: backwards for C.
    assert pooled["c"]["spearman"] < -0.9 < 0.9 < pooled["a1"]["spearman"]
    lines = table(out, GENRES)
    assert len(lines) == 2 + 3 and "each genre pooled" in lines[3]


def test_the_command_refuses_a_folder_without_judgement_files(tmp_path, capsys):
    assert main(["--dev", str(tmp_path), "--model", "fast"]) == 2
    assert "holds no *.jsonl judgement files" in capsys.readouterr().err
