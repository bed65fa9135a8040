"""`fluency calibrate` on a user's own table of judgements (CSV, TSV, JSONL, Parquet), read and
run whole with the real default model (the learning curve on made-up scores:
test_learning_curve.py)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from scorer.cli import main
from scorer.errors import InputError
from training.heads.data.files import text_columns
from training.judged.table import read_table

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
    assert one.systems == ["", "", "", ""]  # no system column: none named
    # A column named "group" is the input when none is named, and "system" the system.
    systems = ["A", "B", "", "A", "C"]
    named_rows = [{**r, "group": r["set"], "system": m} for r, m in zip(rows, systems, strict=True)]
    _csv(tmp_path / "g.csv", named_rows)
    (named,) = read_table(tmp_path / "g.csv")
    assert named.groups == ["x", "x", "y", "y"] and named.systems == ["B", "", "A", "C"]


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


# -- the whole command, with the real default model ---------------------------------------------


def test_calibrate_writes_a_bundle_that_serves_the_genre(tmp_path, capsys, monkeypatch):
    from scorer.scoring import load_scorer
    from scorer.web import create_app

    path = _csv(tmp_path / "mine.csv", _rows())
    models = tmp_path / "models"
    argv = ["calibrate", "--judgements", path, "--text-column", "output"]
    argv += ["--score-column", "rating", "--group-column", "input", "--genre", "reviews"]
    argv += ["--cache", str(tmp_path / "rows"), "--out", str(models / "mine")]
    assert main(argv) == 0
    out = capsys.readouterr().out
    # A genre the default lacks starts from its general head, which already scores each
    # sentence above its shuffle as these raters do: nothing beats it, and it is written.
    assert "started from default's general head (default has no head for reviews)" in out
    assert "### named readings, each whole, no fit: " in out
    assert "- named readings: none of " in out and "gained above zero at 95%" in out
    assert "nothing beat the starting head: reviews is head general, as the bundle has it" in out
    assert f"wrote {models / 'mine'}: genre reviews: " in out

    card = json.loads((models / "mine" / "card.json").read_text())
    head = card["heads"]["reviews"]
    general = load_scorer("default").card["heads"]["general"]
    assert head["inputs"] == general["inputs"] and head["linear"] == general["linear"]
    assert head["files"] == {"mine": 28}
    assert "--genre reviews" in head["command"] and "--score-column rating" in head["command"]
    assert card["heads_report"]["reviews"]["decision"].startswith(
        "shipped: kept the starting head, head general"
    )
    served = load_scorer(models / "mine", models_dir=models)
    texts = [r["output"] for r in _rows()]
    scores = served.score(texts, genre="reviews")
    real, shuffled = np.array(scores[::2]), np.array(scores[1::2])
    assert (real > shuffled).all()
    default = load_scorer("default").score(texts, genre="general")
    assert scores == pytest.approx(default)  # the head the user had, under the new name
    assert served.score(texts, genre="general") == pytest.approx(default)  # and still there

    # The genre is served by name, in the CLI and in the service.
    lines = tmp_path / "two.txt"
    lines.write_text(f"{texts[0]}\n{texts[1]}\n")
    monkeypatch.setenv("FLUENCY_MODELS_DIR", str(models))
    assert main(["score", "--model", "mine", "--genre", "reviews", str(lines)]) == 0
    printed = [float(x) for x in capsys.readouterr().out.split()]
    assert printed == pytest.approx(scores[:2], abs=1e-5)
    app = create_app({"TESTING": True, "MODELS_DIR": str(models), "MODEL_PATH": "mine"})
    body = {"sentences": texts[:2], "genre": "reviews"}
    answer = app.test_client().post("/v1/score", json=body).get_json()
    assert [s["fluency"] for s in answer["scores"]] == pytest.approx(scores[:2])


def test_raters_who_follow_the_length_get_minus_the_length(tmp_path, capsys):
    # People here rate the shorter output higher, whatever it reads like, by exactly the token
    # count: the starting head (the MT head, by --from) ranks each sentence above its shorter
    # shuffle, and minus the length, a named reading, is taken on the evidence.
    from scorer.scoring import load_scorer

    texts = [r["output"] for r in _rows()]
    length = text_columns(load_scorer("default"), texts, ["whole"])["length"]["n_tokens"]
    rows = [{**r, "rating": -n} for r, n in zip(_rows(), length, strict=True)]
    path = _csv(tmp_path / "short.csv", rows)
    out_dir = tmp_path / "models" / "short"
    argv = ["calibrate", "--judgements", path, "--text-column", "output", "--from", "mt"]
    argv += ["--score-column", "rating", "--group-column", "input", "--max-inputs", "0"]
    argv += ["--cache", str(tmp_path / "rows"), "--out", str(out_dir)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "started from the head --from names, mt: head mt" in out
    assert "| minus the length (taken) |" in out
    assert "- named readings: minus the length gained +" in out
    served = load_scorer(out_dir, models_dir=tmp_path / "models")
    scores = np.array(served.score(texts, genre="short"))
    assert np.corrcoef(scores, -length)[0, 1] == pytest.approx(1.0)
    assert served.card["heads"]["short"]["started_from"] == "the head --from names, mt"
    argv[argv.index("mt")] = "poetry"
    assert main(argv) == 2
    assert "--from 'poetry': default has no head of that name" in capsys.readouterr().err


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


@pytest.mark.slow
def test_three_hundred_ratings_of_one_system_with_a_learning_curve(shared_dir, tmp_path, capsys):
    n = _sfhot_csv(shared_dir, tmp_path / "hotels.csv", n_inputs=135)
    models, png = tmp_path / "models", tmp_path / "curve.png"
    argv = ["calibrate", "--judgements", str(tmp_path / "hotels.csv"), "--text-column", "output"]
    argv += ["--score-column", "naturalness", "--group-column", "input", "--genre", "data-to-text"]
    argv += ["--cache", str(tmp_path / "rows"), "--out", str(models / "hotels")]
    main([*argv, "--learning-curve", str(png), "--draws", "2"])
    out = capsys.readouterr().out
    rows = [r for r in out[out.index("| file |") :].splitlines() if r.startswith("| hotels")]
    # 300 ratings: 25, 50, 100 and 200 leave 50 or more to judge on; 400 and 800 do not.
    assert [r.split(" | ")[2] for r in rows] == ["25", "50", "100", "200"]
    # calibrated, the head it started from, two in-sample heads, minus the length, the gain
    assert all(len(r.split(" | ")) == 11 for r in rows)
    assert png.stat().st_size > 10_000
    assert 280 <= n <= 320
