"""The lm.v1 features against real KenLM models: one trained here by `train_lm` from a corpus
this test writes (needs lmplz, built by training/gleu/build_lmplz.sh), and the shipped default."""

from __future__ import annotations

import itertools
import json
import math

import pytest
from examples import sentence, shuffled

from features.extract import extract
from features.lm import DEFAULT_LM
from features.resources import Resources
from scorer.errors import ModelLoadError

SUBJECTS = ("The company", "The bank", "The government", "Shareholders", "The board")
VERBS = ("reported", "expected", "announced", "forecast", "approved")
OBJECTS = ("higher profits", "a new dividend", "lower sales", "strong demand", "a loss")
PERIODS = ("the first quarter", "the second quarter", "the year", "March")


BAD_INPUTS = (
    "",
    "   ",
    "word",
    "\x00\x07 control \x1b characters",
    "<s> </s> <unk>",
    "Ceci n'est pas une phrase anglaise du tout .",
    "日本語のテキストです",
    " ".join(["the"] * 500),
)


def lm_rows(texts, resources):
    return [
        {k.split("/")[1]: v for k, v in row.items()}
        for row in extract([sentence(t) for t in texts], ["lm.v1"], resources)
    ]


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory):
    from scorer.cli import main
    from training.gleu.lm import find_tool

    try:
        find_tool("lmplz")
        find_tool("build_binary")
    except ModelLoadError as exc:
        pytest.skip(f"KenLM's estimation tools are not built: {exc}")
    folder = tmp_path_factory.mktemp("lm")
    corpus = folder / "corpus.txt"
    lines = [
        f"{s} {v} {o} in {p}."
        for s, v, o, p in itertools.product(SUBJECTS, VERBS, OBJECTS, PERIODS)
    ]
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = folder / "model"
    # Through the command line, as a user runs it: `fluency train-lm`.
    assert (
        main(["train-lm", "--corpus", str(corpus), "--out", str(out), "--order", "3", "--prune"])
        == 0
    )
    return out, json.loads((out / "card.json").read_text())


def test_train_lm_writes_model_unigrams_and_card(tiny_lm):
    folder, card = tiny_lm
    assert card["n_sentences"] == len(SUBJECTS) * len(VERBS) * len(OBJECTS) * len(PERIODS)
    assert card["order"] == 3 and card["lowercase"] is True
    assert card["prune"] == [] and card["command"].startswith("fluency train-lm --corpus")
    assert (folder / "lm.binary").stat().st_size == card["binary_bytes"] > 0
    unigrams = dict(
        line.rsplit("\t", 1) for line in (folder / "unigrams.tsv").read_text().splitlines()
    )
    assert {"<unk>", "</s>", "company", "dividend", "."} <= set(unigrams)
    assert all(float(v) <= 0 for k, v in unigrams.items() if k != "<s>")


def test_real_sentence_beats_its_shuffle(tiny_lm):
    resources = Resources(lm_path=tiny_lm[0] / "lm.binary")
    real = "The bank reported higher profits in the first quarter ."
    fluent, scrambled = lm_rows([real, shuffled(real)], resources)
    assert fluent["mean_logprob"] > scrambled["mean_logprob"] + 0.5
    assert fluent["slor"] > scrambled["slor"]
    assert fluent["ngram_ratio"] > scrambled["ngram_ratio"]
    assert fluent["oov_rate"] == scrambled["oov_rate"] == 0.0


def test_oov_rate_counts_unseen_tokens(tiny_lm):
    resources = Resources(lm_path=tiny_lm[0] / "lm.binary")
    (row,) = lm_rows(["The bank reported zorglub profits in Quixotia ."], resources)
    assert row["oov_rate"] == pytest.approx(2 / 8)
    (case,) = lm_rows(["THE BANK reported higher PROFITS in the year ."], resources)
    assert case["oov_rate"] == 0.0  # a lower-cased model (the default) lower-cases queries


def test_bad_inputs_give_finite_values(tiny_lm):
    resources = Resources(lm_path=tiny_lm[0] / "lm.binary")
    rows = lm_rows(BAD_INPUTS, resources)
    assert all(math.isfinite(v) for row in rows for v in row.values())
    assert rows[0]["oov_rate"] == 0.0  # no tokens: nothing unseen


def test_missing_model_names_the_command(tmp_path):
    resources = Resources(lm_path=tmp_path / "absent" / "lm.binary")
    with pytest.raises(ModelLoadError, match="train-lm"):
        lm_rows(["A sentence ."], resources)


REAL = (
    "The company said its net profit rose 12 pct in the first quarter .",
    "Shares of the bank fell sharply after it reported a loss for the year .",
    "The government expects inflation to slow to about four pct next year .",
    "Analysts said the agreement would strengthen the dollar against the yen .",
    "The board approved a stock split and raised the quarterly dividend .",
)


def test_shipped_default_lm_prefers_real_sentences():
    if not DEFAULT_LM.is_file():
        pytest.skip(f"no default language model at {DEFAULT_LM} (fluency train-lm makes it)")
    resources = Resources()
    real = lm_rows(REAL, resources)
    scrambled = lm_rows([shuffled(t, i) for i, t in enumerate(REAL)], resources)
    for fluent, bad in zip(real, scrambled, strict=True):
        assert fluent["mean_logprob"] > bad["mean_logprob"]
        assert fluent["slor"] > bad["slor"]
    assert all(row["oov_rate"] == 0.0 for row in real)
    assert all(math.isfinite(v) for row in lm_rows(BAD_INPUTS, resources) for v in row.values())


def test_cased_model_keeps_case(tiny_lm, tmp_path):
    from scorer.cli import main

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("The Bank reported higher profits in March.\n", encoding="utf-8")
    out = tmp_path / "cased"
    args = ["--corpus", str(corpus), "--out", str(out), "--order", "2", "--prune"]
    assert main(["train-lm", *args, "--no-lowercase"]) == 0
    assert json.loads((out / "card.json").read_text())["lowercase"] is False
    (row,) = lm_rows(["the Bank reported higher PROFITS ."], Resources(lm_path=out / "lm.binary"))
    assert row["oov_rate"] == pytest.approx(2 / 6)  # "the" and "PROFITS" unseen as spelled
