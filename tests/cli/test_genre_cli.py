"""`--genre` on the commands that score with the fluency model (score, explain, compare,
evaluate): each head scores as the library's `for_genre` does, "general" is the same as no
genre, and a genre the model has no head for is an error (exit 2) that says why.

The model is the small test model with heads added to its card (`tests/genre_bundles.py`); the
shipped default's heads, once its card has them, are run through `fluency score` too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from genre_bundles import NOT_SHIPPED, with_heads

from scorer.cli import build_parser, main
from scorer.scoring import load_scorer

TEXTS = [
    "The bank said that profits would rise. A farmer denied a sharp fall in exports.",
    "exports fall sharp a denied farmer.",
    "Our small team announced new measures on prices.",
]
COMMANDS = ["score", "explain", "compare", "evaluate --judgements j.jsonl"]


@pytest.fixture(scope="module")
def genre_models(small_models, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("genre-cli")
    with_heads(small_models / "small", root / "heads", "heads")
    return root


@pytest.fixture
def heads(genre_models, monkeypatch) -> list[str]:
    """`--model heads` arguments, with the environment pointing at its folder."""
    monkeypatch.setenv("FLUENCY_MODELS_DIR", str(genre_models))
    return ["--model", "heads"]


@pytest.fixture(scope="module")
def scorer(genre_models):
    return load_scorer("heads", models_dir=genre_models)


@pytest.fixture
def texts(tmp_path) -> Path:
    path = tmp_path / "in.txt"
    path.write_text("\n".join(TEXTS) + "\n")
    return path


@pytest.mark.parametrize("command", COMMANDS)
def test_genre_is_one_name_or_none(command):
    parser = build_parser()
    assert parser.parse_args(command.split()).genre is None
    assert parser.parse_args([*command.split(), "--genre", "mt"]).genre == "mt"


def _json_scores(capsys) -> list[float]:
    return [json.loads(line)["score"] for line in capsys.readouterr().out.splitlines()]


def test_score_uses_the_head_of_the_genre(heads, scorer, texts, capsys):
    assert scorer.genres == ["general", "mt", "dialogue"]
    general = [s.score for s in scorer.score_texts(TEXTS)]
    for genre in scorer.genres:
        assert main(["score", str(texts), *heads, "--format", "json", "--genre", genre]) == 0
        got = _json_scores(capsys)
        expected = [s.score for s in scorer.for_genre(genre).score_texts(TEXTS)]
        assert got == pytest.approx(expected, abs=1e-9), genre
        if genre != "general":
            assert all(abs(g - s) > 1e-6 for g, s in zip(got, general, strict=True)), genre
    assert main(["score", str(texts), *heads]) == 0
    plain = capsys.readouterr().out
    assert main(["score", str(texts), *heads, "--genre", "general"]) == 0
    assert capsys.readouterr().out == plain


def test_score_in_worker_processes_uses_the_head_too(heads, scorer, texts, capsys):
    argv = ["score", str(texts), *heads, "--format", "json", "--genre", "dialogue"]
    assert main([*argv, "--jobs", "2", "--chunk", "1"]) == 0
    expected = [s.score for s in scorer.for_genre("dialogue").score_texts(TEXTS)]
    # A text parsed in a batch of its own may differ from the batch of three in the last bits.
    assert _json_scores(capsys) == pytest.approx(expected, abs=1e-5)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_genre_the_model_has_no_head_for_is_an_error_that_says_why(heads, texts, capsys, jobs):
    argv = ["score", str(texts), *heads, "--jobs", jobs]
    assert main([*argv, "--genre", "poetry"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "Traceback" not in err
    assert err.startswith("fluency: error: model heads has no head for genre 'poetry'")
    assert "not a genre this project knows" in err and "general, mt, dialogue" in err
    assert main([*argv, "--genre", "summaries"]) == 2
    assert NOT_SHIPPED in capsys.readouterr().err


def test_explain_uses_the_head_and_its_parts_add_up_to_its_score(heads, scorer, texts, capsys):
    for genre in scorer.genres:
        assert main(["explain", str(texts), *heads, "--genre", genre, "--top", "50"]) == 0
        rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
        expected = scorer.for_genre(genre).score_texts(TEXTS)
        for row, score in zip(rows, expected, strict=True):
            assert row["fluency"] == pytest.approx(score.score, abs=1e-9), genre
            c = row["contributions"]
            total = c["intercept"] + sum(f["contribution"] for f in c["features"])
            total += c["rest"] + c["residual"]
            onto = row["fluency"] if row["explains"] == "fluency" else row["gleu"]
            assert total == pytest.approx(onto, abs=1e-6), genre
    assert main(["explain", str(texts), *heads, "--genre", "poetry"]) == 2
    assert "no head for genre 'poetry'" in capsys.readouterr().err


def test_compare_and_evaluate_score_with_the_head(heads, scorer, tmp_path, capsys):
    good, bad = tmp_path / "good.txt", tmp_path / "bad.txt"
    good.write_text("\n".join(TEXTS) + "\n")
    bad.write_text("\n".join(reversed(TEXTS)) + "\n")
    argv = ["compare", "--system", str(good), "--system", str(bad), *heads]
    argv += ["--trials", "99", "--seed", "1", "--format", "json"]
    assert main([*argv, "--genre", "mt"]) == 0
    row = json.loads(capsys.readouterr().out)[0]
    mt = scorer.for_genre("mt").score(TEXTS)
    assert row["score_a"] == pytest.approx(sum(mt) / len(mt), abs=1e-9)
    assert main([*argv, "--genre", "poetry"]) == 2
    assert "no head for genre 'poetry'" in capsys.readouterr().err

    judged = tmp_path / "j.jsonl"
    lines = [
        {"text": t, "score": i, "scores": {}, "refs": [], "group": f"g{i % 3}", "system": "s"}
        for i, t in enumerate(TEXTS * 2)
    ]
    judged.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    argv = ["evaluate", "--judgements", str(judged), *heads, "--format", "json"]
    assert main([*argv, "--genre", "mt"]) == 0
    assert json.loads(capsys.readouterr().out)["metric"] == "fluency (heads, mt head)"
    assert main([*argv, "--genre", "summaries"]) == 2
    assert NOT_SHIPPED in capsys.readouterr().err


def test_every_head_of_the_shipped_default_scores_through_the_command(texts, capsys):
    shipped = load_scorer("default")
    for genre in shipped.genres:
        argv = ["score", str(texts), "--model", "default", "--format", "json"]
        assert main([*argv, "--genre", genre]) == 0
        expected = [s.score for s in shipped.for_genre(genre).score_texts(TEXTS)]
        assert _json_scores(capsys) == pytest.approx(expected, abs=1e-9), genre


def test_dask_workers_score_with_the_head_and_refuse_a_genre_the_model_lacks(
    heads, scorer, genre_models, texts, capsys
):
    pytest.importorskip("distributed", reason="the dask extra is not installed")
    from scorer.config import DEFAULTS
    from scorer.distributed import connect, register_scorer, score_chunks
    from scorer.errors import InputError

    argv = ["score", str(texts), *heads, "--format", "json", "--dask", "local:1"]
    assert main([*argv, "--genre", "mt"]) == 0
    expected = [s.score for s in scorer.for_genre("mt").score_texts(TEXTS)]
    assert _json_scores(capsys) == pytest.approx(expected, abs=1e-9)
    assert main([*argv, "--genre", "poetry"]) == 2  # before a cluster starts
    assert "no head for genre 'poetry'" in capsys.readouterr().err

    client = connect("local:1", quiet=True)
    try:
        register_scorer(client, "heads", {**DEFAULTS, "MODELS_DIR": str(genre_models)})
        rows = [[{"text": t} for t in TEXTS]]
        with pytest.raises(InputError, match="no head for genre 'summaries'"):
            list(score_chunks(client, rows, "text", window=1, genre="summaries"))
    finally:
        cluster = client.cluster
        client.close()
        cluster.close()
