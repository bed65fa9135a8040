"""`fluency calibrate` on a user's own table of judgements (CSV, TSV, JSONL, Parquet), and the
learning curve that says how many judgements are worth collecting."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from scorer.cli import main
from scorer.errors import InputError
from training.judged_table import read_table
from training.learning_curve import _draw, _split, learning_curve, plot, table
from training.second_stage import CANDIDATES, JudgedFile

SENTENCES = [
    "The hotel is near the station.",
    "Our restaurant serves Italian food in the city centre.",
    "The cat sat on the mat.",
    "She has lived in London for ten years.",
    "The company said profits rose in the first quarter.",
    "There is a free parking space behind the building.",
    "He bought a new bicycle last week.",
    "The museum opens at nine in the morning.",
    "They walked along the river after dinner.",
    "This room has a view of the sea.",
    "The train to Paris leaves every hour.",
    "We found a cheap restaurant near the park.",
    "The children played in the garden all afternoon.",
    "Prices of oil fell sharply on Monday.",
]


def _shuffled(text: str, seed: int) -> str:
    words = text.rstrip(".").split()
    rng = np.random.default_rng(seed)
    while True:
        order = rng.permutation(len(words))
        if list(order) != list(range(len(words))):
            return " ".join(words[i] for i in order).lower()


def _rows() -> list[dict]:
    """Each sentence and a shuffle of it, the two outputs of one input, people scoring the
    sentence 4-5 and its shuffle 1-2."""
    rows = []
    for i, s in enumerate(SENTENCES):
        rows.append({"output": s, "rating": 4 + i % 2, "input": f"in{i}", "system": "A"})
        rows.append({"output": _shuffled(s, i), "rating": 1 + i % 2, "input": f"in{i}"})
        rows[-1]["system"] = "B"
    return rows


def _csv(path, rows) -> str:
    pd.DataFrame(rows).to_csv(path, index=False)
    return str(path)


# -- reading ----------------------------------------------------------------------------------


def test_every_format_reads_the_same_judgements(tmp_path):
    rows = [
        {"text": "The hotel is near the station.", "fluency": 4.5, "group": "a"},
        {"text": "hotel the near station is the", "fluency": 1.0, "group": "a"},
        {"text": "null", "fluency": 1.0, "group": "b"},  # a failed output: left out, counted
        {"text": "", "fluency": 2.0, "group": "b"},
        {"text": "The cat sat on the mat.", "fluency": 5.0, "group": "b"},
        {"text": "NA", "fluency": 2.0, "group": "b"},  # a text, not a missing value
    ]
    flat = [{"text": r["text"], "scores.fluency": r["fluency"], "group": r["group"]} for r in rows]
    nested = [
        {"text": r["text"], "scores": {"fluency": r["fluency"]}, "group": r["group"]} for r in rows
    ]
    _csv(tmp_path / "j.csv", flat)
    pd.DataFrame(flat).to_csv(tmp_path / "j.tsv", sep="\t", index=False)
    (tmp_path / "j.jsonl").write_text("".join(json.dumps(r) + "\n\n" for r in nested))
    pd.DataFrame(nested).to_parquet(tmp_path / "j.parquet")  # "scores" a struct column
    read = {
        ext: read_table(tmp_path / f"j.{ext}", score_column="scores.fluency")
        for ext in ("csv", "tsv", "jsonl", "parquet")
    }
    for ext, [f] in read.items():
        assert f.name == "j", ext
        assert f.texts == [rows[i]["text"] for i in (0, 1, 4, 5)], ext
        assert f.human.tolist() == [4.5, 1.0, 5.0, 2.0], ext
        assert f.groups == ["a", "a", "b", "b"], ext
        assert f.counts == {"n_lines": 6, "n_empty": 2, "n_references": 0, "n_kept": 4}, ext


def test_groups_references_and_datasets(tmp_path):
    rows = [
        {"text": "The cat sat on the mat.", "score": 5, "set": "x", "is_reference": "true"},
        {"text": "The cat sat on a mat.", "score": 4, "set": "x", "is_reference": "false"},
        {"text": "cat the mat on sat", "score": 1, "set": "x", "is_reference": ""},
        {"text": "The dog ran home.", "score": 3, "set": "y", "is_reference": "0"},
        {"text": "dog home ran the", "score": 2, "set": "y", "is_reference": "0"},
    ]
    path = _csv(tmp_path / "mine.csv", rows)
    [one] = read_table(path)
    # No group column: every output is an input of its own.
    assert len(set(one.groups)) == 4 and one.counts["n_references"] == 1
    assert one.texts == [r["text"] for r in rows[1:]]
    x, y = read_table(path, dataset_column="set", group_column="set")
    assert (x.name, y.name) == ("x", "y") and x.sha256 != y.sha256
    assert x.texts == [rows[1]["text"], rows[2]["text"]] and x.groups == ["x", "x"]
    assert x.counts == {"n_lines": 3, "n_empty": 0, "n_references": 1, "n_kept": 2}
    # A column named "group" is the input when none is named.
    _csv(tmp_path / "g.csv", [{**r, "group": r["set"]} for r in rows])
    assert read_table(tmp_path / "g.csv")[0].groups == ["x", "x", "y", "y"]


@pytest.mark.parametrize(
    ("rows", "args", "message"),
    [
        (
            [{"text": "A cat.", "rating": 1}, {"text": "A dog.", "rating": 2}],
            ["--score-column", "fluency"],
            "no score column 'fluency'; the file has: text, rating",
        ),
        (
            [{"text": "A cat.", "score": 1}, {"text": "A dog.", "score": "good"}],
            [],
            "line 3: the score column 'score' holds 'good', not a number",
        ),
        (
            [{"text": "A cat.", "score": 1}, {"text": "null", "score": 2}],
            [],
            "1 judgement(s) kept (1 empty, 0 references left out); a calibration needs at least 2",
        ),
        (
            [{"text": "A cat.", "score": 3}, {"text": "A dog.", "score": 3.0}],
            [],
            "every score is 3; people must have scored some outputs apart",
        ),
        (
            [{"text": "A cat.", "score": 3, "group": "g"}, {"text": "A dog.", "score": 4}],
            ["--group-column", "input"],
            "no group column 'input'; the file has: text, score, group",
        ),
    ],
    ids=["missing-column", "not-a-number", "one-judgement", "all-equal", "missing-group"],
)
def test_bad_tables_are_refused_with_a_clear_error(tmp_path, capsys, rows, args, message):
    path = _csv(tmp_path / "bad.csv", rows)
    argv = ["calibrate", "--judgements", path, "--out", str(tmp_path / "m"), *args]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("fluency: error: ") and message in err, err
    assert not (tmp_path / "m").exists()


def test_unreadable_files_are_refused_with_a_clear_error(tmp_path, capsys):
    out = str(tmp_path / "m")
    (tmp_path / "j.xlsx").write_bytes(b"PK\x03\x04")
    (tmp_path / "j.parquet").write_text("text,score\n")
    cases = {
        str(tmp_path / "j.xlsx"): "unknown kind of file '.xlsx'; give one of .jsonl",
        str(tmp_path / "absent.csv"): "no such file",
        str(tmp_path / "j.parquet"): "cannot read",
    }
    for path, message in cases.items():
        assert main(["calibrate", "--judgements", path, "--out", out]) == 2
        err = capsys.readouterr().err
        assert err.startswith("fluency: error: ") and message in err, err
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    rows = [{"text": "A cat.", "score": 1}, {"text": "A dog.", "score": 2}]
    argv = ["calibrate", "--judgements", _csv(a / "j.csv", rows), _csv(b / "j.csv", rows)]
    assert main([*argv, "--out", out]) == 2
    assert "two datasets are named 'j'" in capsys.readouterr().err
    with pytest.raises(InputError, match="text column 'output'"):
        read_table(a / "j.csv", text_column="output")


# -- the learning curve, on made-up scores -------------------------------------------------------


def _judged(n: int, seed: int, per_input: int = 3) -> JudgedFile:
    """People follow the feature `f`, not the GLEU score."""
    rng = np.random.default_rng(seed)
    f = rng.normal(size=n)
    return JudgedFile(
        name=f"d{seed}",
        texts=[f"t{i}" for i in range(n)],
        groups=[f"g{i // per_input}" for i in range(n)],
        human=f + 0.3 * rng.normal(size=n),
        gleu=rng.normal(size=n),
        features=[{"f": float(v)} for v in f],
        n_left_out=0,
    )


def test_held_out_inputs_are_never_drawn_and_draws_take_whole_inputs():
    files = [_judged(300, 1), _judged(90, 2, per_input=1)]
    held, pool = _split(files, np.random.default_rng(0), 0.3)
    assert [len(set(h.groups)) for h in held] == [30, 27]  # 30% of 100 and of 90 inputs
    assert sum(len(rows) for _, rows in pool) + sum(len(h.texts) for h in held) == 390
    previous: set = set()
    for n in (50, 100, 200):
        drawn = _draw(files, pool, n)
        size = sum(len(d.texts) for d in drawn)
        assert n <= size < n + 3  # whole inputs of at most 3 outputs
        held_by_name = {h.name: h for h in held}
        for d in drawn:
            assert not set(d.groups) & set(held_by_name[d.name].groups)
        keys = {(d.name, t) for d in drawn for t in d.texts}
        assert previous <= keys  # a larger draw holds the smaller one
        previous = keys
        for d in drawn:  # every drawn input whole
            whole = next(f for f in files if f.name == d.name)
            for g in set(d.groups):
                assert d.groups.count(g) == whole.groups.count(g)


def test_learning_curve_beats_a_gleu_score_people_ignore(tmp_path):
    curve = learning_curve(
        [_judged(420, 3)], ["f"], regressor="ridge(alpha=1)", input_set="features", draws=3
    )
    # 70% of 140 inputs of 3 left to draw from: 50, 100, 200, then all 294 (not 400).
    assert [p.n for p in curve.points] == [50, 100, 200, 294]
    assert curve.n_held == (126, 126, 126) and curve.n_available == 294
    assert all(len(p.rho) == 3 and min(p.rho) > 0.85 for p in curve.points)
    assert max(curve.reference.rho) < 0.3  # GLEU here is noise
    text = table(curve)
    cells = text.splitlines()[2].split(" | ")
    assert cells[0] == "| 50" and cells[1].startswith("0.9")
    # The paired difference from GLEU alone on the same held-out part: signed, large here.
    assert cells[2].startswith("+") and float(cells[2].split()[0]) > 0.6
    assert text.splitlines()[-1].startswith("| GLEU alone | ")
    plot(curve, tmp_path / "c.png", title="made up")
    assert (tmp_path / "c.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# -- the whole command, with the real default model ---------------------------------------------


def test_calibrate_a_csv_of_sentences_and_their_shuffles(tmp_path, capsys):
    import matplotlib.image

    from scorer.scoring import load_scorer

    path = _csv(tmp_path / "mine.csv", _rows())
    models, png = tmp_path / "models", tmp_path / "curve.png"
    argv = ["calibrate", "--judgements", path, "--text-column", "output"]
    argv += ["--score-column", "rating", "--group-column", "input", "--out", str(models / "mine")]
    argv += ["--regressor", "ridge(alpha=10)", "--cache", str(tmp_path / "rows")]
    assert main([*argv, "--learning-curve", str(png)]) == 0
    out, err = capsys.readouterr()
    assert "fluency: warning: one dataset: the second stage is chosen by 5 folds" in err
    assert "| ridge(alpha=10) [features] (chosen) |" in out or "[features+readings] (chosen)" in out
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| judgements |"))
    # 14 inputs of 2, 30% held out: 10 inputs, 20 judgements left to learn from.
    assert lines[start + 2].startswith("| 20 | ")
    assert lines[start + 3].startswith("| GLEU alone | ")
    assert matplotlib.image.imread(png).shape[2] in (3, 4)

    card = json.loads((models / "mine" / "card.json").read_text())
    section = card["calibration"]
    assert section["regressor"] == "ridge(alpha=10)"
    assert section["files"] == {"mine": {"n": 28, "n_left_out": 0}}
    assert section["target"].startswith("rating")
    assert "--text-column output --score-column rating" in section["command"]
    served = load_scorer(models / "mine", models_dir=models)
    scores = served.score_texts([r["output"] for r in _rows()])
    real, shuffled = [s.score for s in scores[::2]], [s.score for s in scores[1::2]]
    assert np.mean(real) > np.mean(shuffled)
    assert np.mean(real) - np.mean(shuffled) > 1.0  # on the human scale, z-normalised

    # The same rows as two datasets, and as JSONL read by --human-field: datasets held out whole.
    rows = [{**r, "set": "first" if i < 14 else "second"} for i, r in enumerate(_rows())]
    lines = "".join(json.dumps({**r, "scores": {"r": r["rating"]}}) + "\n" for r in rows)
    (tmp_path / "mine.jsonl").write_text(lines)
    argv = ["calibrate", "--judgements", str(tmp_path / "mine.jsonl"), "--dataset-column", "set"]
    argv += ["--text-column", "output", "--human-field", "scores.r", "--group-column", "input"]
    argv += ["--regressor", "ridge(alpha=10)", "--cache", str(tmp_path / "rows")]
    argv += ["--genre", "reviews", "--summary", "For my reviews; not for news."]
    assert main([*argv, "--out", str(models / "two")]) == 0
    out, err = capsys.readouterr()
    assert "warning" not in err
    assert "| regressor [inputs] | first | second | mean rho | mean tau |" in out
    card = json.loads((models / "two" / "card.json").read_text())
    assert card["summary"] == "For my reviews; not for news."
    assert "--summary 'For my reviews; not for news.'" in card["calibration"]["command"]
    section = card["calibration"]
    assert section["genre"] == "reviews"
    assert section["selection"].startswith("held out: datasets")
    assert set(section["files"]) == {"first", "second"}


def _sfhot_csv(shared_dir, path, n_inputs: int | None = None) -> int:
    """The SF hotels judgements (Novikova et al. 2017) as a user's CSV: the output, its
    naturalness rating, its input; `n_inputs` inputs drawn at random, else all."""
    rows = [json.loads(line) for line in (shared_dir / "dev/novikova2017_sfhot.jsonl").open()]
    inputs = list(dict.fromkeys(r["group"] for r in rows))
    if n_inputs:
        keep = set(np.random.default_rng(0).permutation(inputs)[:n_inputs])
        rows = [r for r in rows if r["group"] in keep]
    table = [
        {"output": r["text"], "naturalness": r["scores"]["naturalness"], "input": r["group"]}
        for r in rows
    ]
    _csv(path, table)
    return len(table)


def test_three_hundred_ratings_of_one_system(shared_dir, tmp_path, capsys):
    from scorer.scoring import load_scorer

    n = _sfhot_csv(shared_dir, tmp_path / "hotels.csv", n_inputs=135)
    models, png = tmp_path / "models", tmp_path / "curve.png"
    argv = ["calibrate", "--judgements", str(tmp_path / "hotels.csv"), "--text-column", "output"]
    argv += ["--score-column", "naturalness", "--group-column", "input"]
    argv += ["--regressor", "ridge(alpha=100)", "--cache", str(tmp_path / "rows")]
    argv += ["--out", str(models / "hotels"), "--learning-curve", str(png)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    rows = [r for r in out[out.index("| judgements |") :].splitlines() if r.startswith("|")]
    assert [r.split(" | ")[0] for r in rows[2:]] == ["| 50", "| 100", "| 200", "| GLEU alone"]
    assert png.stat().st_size > 10_000
    section = json.loads((models / "hotels" / "card.json").read_text())["calibration"]
    assert section["files"]["hotels"]["n"] == n and 280 <= n <= 320
    scores = load_scorer(models / "hotels", models_dir=models).score_texts(
        ["There are 2 hotels near the marina.", "hotels near there 2 marina the are."]
    )
    assert scores[0].score > scores[1].score


@pytest.mark.slow
def test_a_dev_file_as_csv_every_candidate(shared_dir, tmp_path, capsys):
    from scorer.scoring import load_scorer

    n = _sfhot_csv(shared_dir, tmp_path / "sfhot.csv")
    models, png = tmp_path / "models", tmp_path / "curve.png"
    argv = ["calibrate", "--judgements", str(tmp_path / "sfhot.csv"), "--text-column", "output"]
    argv += ["--score-column", "naturalness", "--group-column", "input"]
    argv += ["--cache", str(tmp_path / "rows"), "--out", str(models / "sfhot")]
    assert main([*argv, "--learning-curve", str(png)]) == 0
    out = capsys.readouterr().out
    rows = [r for r in out[out.index("| judgements |") :].splitlines() if r.startswith("|")]
    sizes = [r.split(" | ")[0] for r in rows[2:]]
    assert sizes[:4] == ["| 50", "| 100", "| 200", "| 400"] and sizes[-1] == "| GLEU alone"
    assert png.stat().st_size > 10_000
    section = json.loads((models / "sfhot" / "card.json").read_text())["calibration"]
    assert section["files"] == {"sfhot": {"n": n, "n_left_out": 0}}
    assert len(section["leave_one_file_out"]) == 2 * len(CANDIDATES)  # each on both input sets
    served = load_scorer(models / "sfhot", models_dir=models)
    assert len(served.score_texts(["The hotel is near the station."])) == 1
