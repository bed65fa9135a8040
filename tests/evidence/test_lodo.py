"""`fluency benchmark --protocol lodo` with the real default model on small judgement files: each
file's head is chosen and fitted as `fluency calibrate` does on the other files of its genre only
(a file's own judgements never reach its scores), a genre of one file is held out by folds and
says so, and the report has the per-genre table."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from scorer.cli import main
from scorer.evidence.benchmark_report import markdown
from scorer.evidence.benchmark_run import LODO_LABEL, run_benchmark
from scorer.evidence.genres import GENRES, genre_of
from training.heads.selection.held_out import benchmark_stage

SENTENCES = [
    "The company said profits rose in the first quarter.",
    "Shares of the bank fell after it reported a loss.",
    "The hotel is near the station and has a pool.",
    "Our restaurant serves Italian food in the city centre.",
    "She has lived in London for ten years.",
    "Analysts expect the dollar to strengthen against the yen.",
    "The board approved a new dividend payable in June.",
    "Traders said the market was quiet ahead of the meeting.",
    "The museum opens at nine and closes at five.",
    "He bought a red car from his neighbour last week.",
]


def _file(path, seed: int, flip: bool = False):
    rng = random.Random(seed)
    lines = []
    for i, text in enumerate(SENTENCES):
        words = text.rstrip(".").split()
        rng.shuffle(words)
        for system, out, score in (("good", text, 3.0), ("bad", " ".join(words), 1.0)):
            score = (score + rng.random() * 0.1) * (-1.0 if flip else 1.0)
            lines.append(
                {"text": out, "score": score, "scores": {}, "refs": [], "group": str(i),
                 "system": system}
            )  # fmt: skip
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


@pytest.fixture(scope="module")
def default():
    from scorer.scoring import load_scorer

    return load_scorer("default")


def test_every_dev_file_has_its_genre():
    assert genre_of("e2e2017") == genre_of("novikova2017_bagel") == "data-to-text"
    assert genre_of("mqm_newstest2020_zhen") == genre_of("mqm_newstest2021_zhen") == "mt"
    assert genre_of("my_own_file") == "my_own_file"  # a file not listed is a genre of its own
    assert genre_of("usr2020_topicalchat") == genre_of("ji2022_dialogue") == "dialogue"
    assert genre_of("dialsummeval2022") == "summaries"
    assert set(GENRES.values()) == {"data-to-text", "mt", "summaries", "acceptability", "dialogue"}


@pytest.mark.slow  # a head chosen per file and per fold: over a minute
def test_a_file_is_scored_by_a_stage_fitted_on_the_other_files_of_its_genre(tmp_path, default):
    paths = [_file(tmp_path / "alpha.jsonl", 1), _file(tmp_path / "beta.jsonl", 2)]
    paths.append(_file(tmp_path / "gamma.jsonl", 3))
    genres = {"alpha": "g", "beta": "g", "gamma": "alone"}
    kwargs = {
        "aggregates": ["whole"],
        "cache_dir": tmp_path / "rows",
        "n_samples": 100,
        "protocol": "lodo",
        "second_stage": benchmark_stage(),
        "genres": genres,
    }
    (run,) = run_benchmark([default], paths, **kwargs)
    # The default has a second stage of its own: the held-out one is fitted on its GLEU stage.
    assert run.models == ["default GLEU", "default", LODO_LABEL]
    assert run.held_out == {
        "alpha": "dataset",
        "beta": "dataset",
        "gamma": "5 folds of inputs",
    }
    assert run.second_stage["alpha"]["trained_on"] == ["beta"]
    alpha = next(f for f in run.files if f.name == "alpha")
    assert alpha.table[LODO_LABEL].spearman > 0.5  # people prefer the real sentences
    assert set(alpha.differences[LODO_LABEL]) == {"spearman", "kendall"}

    # Alpha's own judgements turned upside down: its scores do not move (they come from beta),
    # while beta's, fitted on the new alpha, do.
    _file(tmp_path / "alpha.jsonl", 1, flip=True)
    (again,) = run_benchmark([default], paths, **kwargs)
    a0, a1 = (next(f for f in r.files if f.name == "alpha") for r in (run, again))
    assert a1.table[LODO_LABEL].spearman == pytest.approx(-a0.table[LODO_LABEL].spearman)
    b0, b1 = (next(f for f in r.files if f.name == "beta") for r in (run, again))
    assert b1.table[LODO_LABEL].spearman < b0.table[LODO_LABEL].spearman

    text = markdown(again, full=False)
    assert "Per genre" in text and "not measurable by LODO: 5 folds of inputs" in text
    assert "| alpha | g | dataset | beta |" in text


def _two_files_lodo(folder) -> list[str]:
    """Two small judgement files of no listed genre in `folder`, and the benchmark's arguments
    for them under --protocol lodo."""
    for name, seed in (("alpha", 1), ("beta", 2)):
        _file(folder / f"{name}.jsonl", seed)
    argv = ["benchmark", "--dev", str(folder), "--protocol", "lodo", "--samples", "100"]
    argv += ["--cache", str(folder / "rows")]
    return [*argv, "--no-robustness", "--format", "json"]


@pytest.mark.slow  # a head chosen per file and per fold: over a minute
def test_the_command_runs_lodo_and_fits_on_the_gleu_stage_of_a_calibrated_model(tmp_path, capsys):
    argv = _two_files_lodo(tmp_path)
    assert main(argv) == 0
    (run,) = json.loads(capsys.readouterr().out)["runs"]
    assert run["protocol"] == "lodo" and run["models"][-1] == LODO_LABEL
    # Two files of no listed genre are two genres of one file each: folds, said so.
    assert set(run["held_out"].values()) == {"5 folds of inputs"}
    assert np.isfinite(run["files"][0]["columns"][LODO_LABEL]["spearman"])
    # A bundle with a second stage of its own: the held-out stage is fitted on its GLEU stage,
    # shown first, and the bundle's own score stands beside it as it is served.
    assert main([*argv, "--model", "data-to-text"]) == 0
    (cal,) = json.loads(capsys.readouterr().out)["runs"]
    assert cal["models"] == ["data-to-text GLEU", "data-to-text", LODO_LABEL]
    first = cal["files"][0]["columns"]
    assert np.isfinite(first["data-to-text GLEU"]["spearman"])
    assert np.isfinite(first["data-to-text"]["spearman"])


def _three_files_across(folder, flag: str) -> list[str]:
    """Alpha and beta (genre g) rank the real sentence first, gamma (a genre of its own) last;
    the benchmark's arguments for them held out with `flag`."""
    for name, seed, flip in (("alpha", 1, False), ("beta", 2, False), ("gamma", 3, True)):
        _file(folder / f"{name}.jsonl", seed, flip=flip)
    argv = ["benchmark", "--dev", str(folder), "--protocol", "lodo", flag, "--samples", "100"]
    argv += ["--cache", str(folder / "r"), "--no-robustness"]
    return [*argv, "--format", "json", "--genre", "alpha=g", "--genre", "beta=g"]


def test_across_genres_a_genre_is_scored_by_a_stage_that_never_saw_it(tmp_path, capsys):
    # Alpha and beta (one genre) rank the real sentence first; gamma (another genre) ranks it
    # last. Held out by genre, gamma is scored by what alpha and beta taught, so backwards, and
    # alpha and beta by what gamma taught. Fitted on genre g only, g itself has nothing to fit.
    argv = _three_files_across(tmp_path, "--across-genres")
    assert main(argv) == 0
    (run,) = json.loads(capsys.readouterr().out)["runs"]
    assert set(run["held_out"].values()) == {"genre"}
    assert run["second_stage"]["gamma"]["trained_on"] == ["alpha", "beta"]
    assert run["second_stage"]["alpha"]["trained_on"] == ["gamma"]
    rho = {f["file"]: f["columns"][LODO_LABEL]["spearman"] for f in run["files"]}
    assert rho["gamma"] < -0.5 and rho["alpha"] < -0.5 and rho["beta"] < -0.5

    assert main([*argv, "--fit-genre", "g"]) == 0
    (only,) = json.loads(capsys.readouterr().out)["runs"]
    assert only["second_stage"]["alpha"]["choice"] == "nothing to fit"
    rho = {f["file"]: f["columns"][LODO_LABEL]["spearman"] for f in only["files"]}
    assert rho["gamma"] < -0.5 and rho["alpha"] is None


def test_a_file_can_be_judged_on_a_score_field_of_its_own(tmp_path, capsys):
    argv = _two_files_lodo(tmp_path)
    assert main([*argv, "--human-field", "alpha=scores.fluency"]) == 2
    assert "scores.fluency" in capsys.readouterr().err  # alpha has no such field
    assert main([*argv, "--human-field", "gamma=score"]) == 2
    assert "no judgement file 'gamma'" in capsys.readouterr().err


def test_files_of_ones_own_join_a_genre_by_name(tmp_path, capsys):
    # Judgement files from elsewhere (not in scorer/evidence/genres.py) put in one genre: each
    # is then held out by dataset, fitted on the other; a name that is not a file is refused.
    argv = _two_files_lodo(tmp_path)
    genre = ["--genre", "alpha=data-to-text", "--genre", "beta.jsonl=data-to-text"]
    assert main([*argv, *genre]) == 0
    (run,) = json.loads(capsys.readouterr().out)["runs"]
    assert run["genres"] == {"alpha": "data-to-text", "beta": "data-to-text"}
    assert set(run["held_out"].values()) == {"dataset"}
    assert run["second_stage"]["alpha"]["trained_on"] == ["beta"]
    assert main([*argv, "--genre", "gamma=mt"]) == 2
    assert "no judgement file 'gamma'" in capsys.readouterr().err
    assert main([*argv, "--genre", "alpha"]) == 2
    assert "FILE=GENRE" in capsys.readouterr().err


def test_across_datasets_each_file_is_scored_by_a_fit_on_every_other_one(tmp_path, capsys):
    # A general head on a new dataset of a genre it knows: alpha's is chosen and fitted on beta
    # and gamma (another genre too, so by genres); restricted to genre g, on beta alone.
    argv = _three_files_across(tmp_path, "--across-datasets")
    assert main(argv) == 0
    (run,) = json.loads(capsys.readouterr().out)["runs"]
    assert set(run["held_out"].values()) == {"dataset"}
    assert run["second_stage"]["alpha"]["trained_on"] == ["beta", "gamma"]
    assert run["second_stage"]["alpha"]["chosen_by"] == "one genre out"
    assert main([*argv, "--fit-genre", "g"]) == 0
    (only,) = json.loads(capsys.readouterr().out)["runs"]
    assert only["second_stage"]["alpha"]["trained_on"] == ["beta"]
    assert only["second_stage"]["gamma"]["trained_on"] == ["alpha", "beta"]
    rho = {f["file"]: f["columns"][LODO_LABEL]["spearman"] for f in only["files"]}
    assert rho["alpha"] > 0.5 and rho["gamma"] < -0.5


def test_with_gleu_puts_each_bundles_gleu_stage_beside_it(tmp_path, capsys):
    for name, seed in (("alpha", 1), ("beta", 2)):
        _file(tmp_path / f"{name}.jsonl", seed)
    argv = ["benchmark", "--dev", str(tmp_path), "--samples", "100", "--no-robustness"]
    argv += ["--cache", str(tmp_path / "rows"), "--format", "json", "--with-gleu"]
    assert main([*argv, "--model", "data-to-text", "--model", "default"]) == 0
    (run,) = json.loads(capsys.readouterr().out)["runs"]
    # Each bundle with a second stage is followed by its GLEU stage alone.
    assert run["models"] == ["data-to-text", "data-to-text GLEU", "default", "default GLEU"]
    columns = run["files"][0]["columns"]
    assert all(np.isfinite(columns[m]["spearman"]) for m in run["models"])


def test_the_benchmark_cuts_files_by_whole_inputs_on_the_command_line(tmp_path, capsys):
    for name, seed in (("alpha", 1), ("beta", 2)):
        _file(tmp_path / f"{name}.jsonl", seed)
    argv = ["benchmark", "--dev", str(tmp_path), "--samples", "100", "--no-robustness"]
    argv += ["--cache", str(tmp_path / "rows"), "--format", "json", "--max-outputs", "6"]
    assert main(argv) == 0
    (run,) = json.loads(capsys.readouterr().out)["runs"]
    for f in run["files"]:  # two outputs an input: three whole inputs of each file
        assert f["counts"]["n_kept"] == 6
        assert f["counts"]["n_cut"] == 2 * len(SENTENCES) - 6
