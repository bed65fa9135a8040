"""`fluency compare`, `evaluate`, `diversity` end to end through `main`: real parser and model."""

from __future__ import annotations

import json

import numpy as np
import pytest

from scorer.cli import main

REFS = [
    "The cat sat on the mat.",
    "A dog barked at the postman.",
    "She reads a book every night.",
    "The river flows to the sea.",
    "We walked home after the film.",
    "He plays the piano very well.",
    "The children built a sandcastle.",
    "Rain fell on the quiet town.",
]
GOOD = [r.replace("The", "A", 1) if i % 4 == 0 else r for i, r in enumerate(REFS)]
BAD = [" ".join(reversed(r.rstrip(".").split())) + "." for r in REFS]


@pytest.fixture
def files(tmp_path):
    paths = {}
    for name, lines in {"ref": REFS, "good": GOOD, "bad": BAD, "same": GOOD}.items():
        paths[name] = tmp_path / f"{name}.txt"
        paths[name].write_text("\n".join(lines) + "\n")
    return paths


def test_compare_json_has_every_pair_with_corrections(files, capsys):
    argv = ["compare", "--system", str(files["good"]), "--system", str(files["bad"])]
    argv += ["--system", str(files["same"]), "--ref", str(files["ref"]), "--metric", "bleu"]
    assert main([*argv, "--trials", "999", "--seed", "7", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["a"], r["b"]) for r in rows] == [("good", "bad"), ("good", "same"), ("bad", "same")]
    for row in rows:
        assert {"score_a", "score_b", "p_value", "p_holm", "p_bonferroni"} <= set(row)
        assert row["seed"] == 7 and row["n_trials"] == 999
    assert rows[1]["p_value"] == 1.0  # identical outputs
    assert rows[0]["score_a"] > rows[0]["score_b"]
    # 8 sentences: the smallest p AR can give with all 2^8 swaps equally likely is about 2/256.
    assert rows[0]["p_value"] < 0.05


def test_compare_table_prints_seed_and_experimentwise_error(files, capsys):
    argv = ["compare", "--system", str(files["good"]), "--system", str(files["bad"])]
    argv += [
        "--ref",
        str(files["ref"]),
        "--metric",
        "simple_string_accuracy",
        "--test",
        "bootstrap",
    ]
    assert main([*argv, "--trials", "200", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "seed 3" in out and "trials 200" in out and "experimentwise error" in out
    assert out.splitlines()[3].startswith("a\tb\tscore_a")


def test_compare_through_sacrebleu_engine(files, capsys):
    argv = ["compare", "--system", str(files["good"]), "--system", str(files["bad"])]
    argv += ["--ref", str(files["ref"]), "--metric", "chrf", "--trials", "500", "--seed", "5"]
    assert main([*argv, "--format", "json"]) == 0
    ours = json.loads(capsys.readouterr().out)[0]
    assert main([*argv, "--format", "json", "--engine", "sacrebleu"]) == 0
    theirs = json.loads(capsys.readouterr().out)[0]
    assert theirs["score_a"] == pytest.approx(ours["score_a"])
    # Same draws; on 8 rows some shuffles tie the observed difference exactly (swapping every
    # row, for one): we count ties (>=, the paper), sacrebleu does not, so ours is never smaller.
    assert ours["p_value"] >= theirs["p_value"]
    assert theirs["p_value"] < 0.05


def test_compare_errors_exit_2(files, capsys):
    assert main(["compare", "--system", str(files["good"]), "--metric", "bleu"]) == 2
    assert "at least two" in capsys.readouterr().err
    argv = ["compare", "--system", str(files["good"]), "--system", str(files["bad"])]
    assert main([*argv, "--metric", "bleu"]) == 2
    assert "--ref" in capsys.readouterr().err


def test_evaluate_scores_with_plots(tmp_path, capsys):
    rng = np.random.default_rng(0)
    lines, scores = [], []
    for i in range(30):
        human = float(rng.integers(1, 4))
        lines.append(
            json.dumps(
                {
                    "text": f"output {i}",
                    "score": human,
                    "scores": {"fluency": human},
                    "refs": ["r"],
                    "group": f"g{i // 3}",
                    "system": f"s{i % 3}",
                }
            )
        )
        scores.append(human + rng.normal(scale=0.3))
    (tmp_path / "j.jsonl").write_text("\n".join(lines) + "\n")
    (tmp_path / "m.txt").write_text("\n".join(map(str, scores)) + "\n")
    argv = [
        "evaluate",
        "--judgements",
        str(tmp_path / "j.jsonl"),
        "--scores",
        str(tmp_path / "m.txt"),
    ]
    argv += ["--plot", str(tmp_path / "fit.png"), "--plot-systems", str(tmp_path / "sys.png")]
    assert main([*argv, "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["n"] == 30 and report["pearson"] > 0.7 and report["n_groups"] >= 1
    assert report["pearson_ci_low"] < report["pearson"] < report["pearson_ci_high"]
    for png in ("fit.png", "sys.png"):
        assert (tmp_path / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_diversity_table(files, capsys):
    argv = ["diversity", "--system", str(files["good"]), "--system", str(files["bad"])]
    assert main([*argv, "--ref", str(files["ref"]), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["system"] for r in rows] == ["good", "bad"]
    # Reversed word order keeps every token: unigram reproduction is perfect.
    assert rows[1]["reproduction_precision"] == 1.0
    assert rows[1]["reproduction_recall"] == 1.0
    assert rows[0]["reproduction_f"] < 1.0  # "A" for "The" in two outputs


@pytest.fixture
def tiny_model(tmp_path, monkeypatch):
    """A real fluency model on surface features, fitted on hand-made sentences in a second."""
    from scorer.model import build_model, save_model

    real = [*REFS, "Prices rose sharply in the first quarter.", "The bank cut its rates again."]
    glued = [" ".join(r.lower().rstrip(".").split()[::-1]) + " the the ," for r in real]
    pipe = build_model(features=("surface.v2",)).fit(
        real + glued, [1] * len(real) + [0] * len(glued)
    )
    models = tmp_path / "models"
    save_model(pipe, models / "tiny", {"name": "tiny"})
    monkeypatch.setenv("FLUENCY_MODELS_DIR", str(models))
    return "tiny"


def test_compare_fluency_with_a_real_model_leaves_out_blank_outputs(
    files, tmp_path, tiny_model, capsys
):
    blanked = tmp_path / "blanked.txt"
    blanked.write_text("\n".join(["", *BAD[1:]]) + "\n")
    argv = ["compare", "--system", str(files["good"]), "--system", str(blanked)]
    argv += ["--system", str(files["same"]), "--metric", "fluency", "--model", tiny_model]
    assert main([*argv, "--trials", "999", "--seed", "2", "--format", "json"]) == 0
    rows = {(r["a"], r["b"]): r for r in json.loads(capsys.readouterr().out)}
    assert rows[("good", "blanked")]["n_rows"] == 7  # the blank line's row is left out...
    assert rows[("good", "same")]["n_rows"] == 8  # ...of its own pairs only
    assert rows[("good", "same")]["p_value"] == 1.0
    assert rows[("good", "blanked")]["score_a"] > rows[("good", "blanked")]["score_b"]


def test_compare_judgements_with_people_alongside(tmp_path, tiny_model, capsys):
    lines = []
    for i, ref in enumerate(REFS):
        for system, text, human in (("good", GOOD[i], 3.0), ("bad", BAD[i], 1.0 + (i % 2))):
            lines.append(
                json.dumps(
                    {
                        "text": text,
                        "score": human,
                        "scores": {"fluency": human},
                        "refs": [ref],
                        "group": f"g{i}",
                        "system": system,
                    }
                )
            )
    path = tmp_path / "j.jsonl"
    path.write_text("\n".join(lines) + "\n")
    argv = ["compare", "--judgements", str(path), "--metric", "fluency", "--model", tiny_model]
    assert main([*argv, "--human-field", "scores.fluency", "--trials", "500", "--seed", "4"]) == 0
    out = capsys.readouterr().out
    assert "ordered the same way by people" in out
    header = next(line for line in out.splitlines() if line.startswith("a\t"))
    assert header.split("\t")[-4:] == ["human_a", "human_b", "human_p_holm", "same_order"]
    assert (
        main(
            ["compare", "--judgements", str(path), "--field", "scores.fluency", "--format", "json"]
        )
        == 0
    )
    (row,) = json.loads(capsys.readouterr().out)
    assert (row["score_a"], row["score_b"]) == (3.0, 1.5)
