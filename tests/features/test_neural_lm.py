"""The neural language-model extractor on the real SmolLM2 weights, run by ONNX Runtime on the
graph `fluency export-neural` made from them: fluent text scores above its scramble, a text's
scores are the same to 1e-6 alone and packed with texts of other lengths, long and empty texts
are scored, and missing or corrupt weights, graphs and unigram tables are refused clearly."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from features import registry
from features.errors import ModelLoadError
from features.neural_lm import CONTEXT, _graph, load_neural, score_tokens, token_logprobs
from features.resources import ARTEFACTS, NEURAL_ONNX_DIR, Resources
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
    return FeatureRows(("neural.v2",), Resources())


def test_it_is_registered_with_its_artefacts():
    spec = registry.get("neural.v2")
    assert spec.names == ("logprob_sum", "logprob_mean", "logprob_min", "slor")
    assert [a.key for a in spec.artefacts] == ["neural", "neural_unigrams"]
    assert GGUF.is_file() and GGUF.stat().st_size > 90e6, "make install-neural puts it here"


def test_a_scrambled_sentence_scores_lower(neural):
    rows = neural.rows([t for pair in PAIRS for t in pair])
    for real, scrambled in zip(rows[::2], rows[1::2], strict=True):
        # Same tokens, other order: the sum alone tells them apart, by more than 10 nats here.
        assert real["neural.v2/logprob_sum"] > scrambled["neural.v2/logprob_sum"] + 10
        for name in ("logprob_mean", "slor"):
            assert real[f"neural.v2/{name}"] > scrambled[f"neural.v2/{name}"]


def test_scores_do_not_depend_on_the_batch(neural):
    texts = [t for pair in PAIRS for t in pair]
    together = FeatureRows(("neural.v2",)).extract(FeatureRows(("neural.v2",)).annotate(texts))
    for text, row in zip(texts, together, strict=True):
        fresh = FeatureRows(("neural.v2",))
        alone = fresh.extract(fresh.annotate([text]))[0]
        assert max(abs(row[k] - alone[k]) for k in row) <= 1e-6
    reversed_ = FeatureRows(("neural.v2",))
    backwards = reversed_.extract(reversed_.annotate(texts[::-1]))[::-1]
    pairs = zip(together, backwards, strict=True)
    assert max(abs(a[k] - b[k]) for a, b in pairs for k in a) <= 1e-6


def test_a_text_packed_with_texts_of_other_lengths_scores_as_alone():
    """Texts of 3 to 80 tokens, packed several to a pass (right-padded to the longest) in
    different company and order, against each in a pass of its own: the same to 1e-6."""
    lm = load_neural(Resources())
    sentence = "Traders said the market was quiet ahead of the meeting on Tuesday."
    texts = [
        "Yes.",
        PAIRS[0][0],
        "The bank fell.",
        PAIRS[2][0],
        sentence * 5,
        "The the the of the.",
        "Hi",
    ]
    tokens = [lm.tokenize(t) for t in texts]
    assert len({len(t) for t in tokens}) == len(texts)  # every length different
    alone = [score_tokens(lm, [t], budget=1)[0] for t in tokens]
    packed = score_tokens(lm, tokens, budget=4096)  # all in one pass
    shuffled_order = [3, 0, 6, 2, 5, 1, 4]
    shuffled = score_tokens(lm, [tokens[i] for i in shuffled_order], budget=200)
    for k, values in enumerate(alone):
        assert len(values) == len(tokens[k])
        assert np.abs(values - packed[k]).max() <= 1e-6
        assert np.abs(values - shuffled[shuffled_order.index(k)]).max() <= 1e-6
    # The packing is real: without the budget's cut each text would get a pass of its own.
    from features.neural_lm import pass_groups

    assert len(pass_groups([len(t) + 1 for t in tokens], 4096)) == 1


def test_the_sum_is_the_tokens_log_probabilities_and_a_prefix_keeps_them():
    lm = load_neural(Resources())
    text = "The committee will meet again next week to discuss the budget."
    tokens, logprobs = token_logprobs(lm, text)
    row = FeatureRows(("neural.v2",)).rows([text])[0]
    assert len(tokens) == len(logprobs) > 5 and (logprobs < 0).all()
    assert row["neural.v2/logprob_sum"] == pytest.approx(float(logprobs.sum()))
    assert row["neural.v2/logprob_mean"] == pytest.approx(float(logprobs.mean()))
    assert row["neural.v2/logprob_min"] == pytest.approx(float(logprobs.min()))
    unigram = float(lm.unigrams[tokens].sum())
    assert row["neural.v2/slor"] == pytest.approx((float(logprobs.sum()) - unigram) / len(tokens))
    # A causal model: the first tokens' probabilities do not see what follows them.
    _, prefix = token_logprobs(lm, "The committee will meet again")
    assert np.abs(prefix - logprobs[: len(prefix)]).max() <= 1e-4


def test_long_and_empty_texts_are_scored():
    lm = load_neural(Resources())
    sentence = "Traders said the market was quiet ahead of the meeting on Tuesday. "
    tokens, logprobs = token_logprobs(lm, sentence * 60)  # over CONTEXT tokens
    assert len(tokens) > CONTEXT and len(logprobs) == len(tokens)
    assert np.isfinite(logprobs).all()
    rows = FeatureRows(("neural.v2",)).rows(["", "   ", "\u200b"])
    assert rows[0] == dict.fromkeys(rows[0], 0.0) and rows[1] == rows[0]
    assert all(np.isfinite(v) for v in rows[2].values())


def test_corrupt_or_missing_weights_and_graphs_are_refused_clearly(tmp_path):
    garbage = tmp_path / "garbage.gguf"
    garbage.write_bytes(b"not a gguf file" * 1000)
    with pytest.raises(ModelLoadError, match=r"made from other weights .* fluency export-neural"):
        load_neural(Resources(neural_path=garbage))
    with pytest.raises(ModelLoadError, match=r"no SmolLM2 weights at .*make install-neural"):
        load_neural(Resources(neural_path=tmp_path / "absent.gguf"))
    with pytest.raises(ModelLoadError, match=r"no ONNX graph .* make install-neural"):
        load_neural(Resources(neural_onnx_dir=tmp_path / "absent"))
    broken = tmp_path / "broken"
    shutil.copytree(NEURAL_ONNX_DIR, broken, ignore=shutil.ignore_patterns("smollm2.onnx"))
    # The graph the CPU loads (its optimised form), cut short; then another ONNX Runtime's, with
    # no plain graph to fall back to (the export keeps it with --plain only).
    onnx_file = broken / "smollm2.cpu.onnx"
    onnx_file.write_bytes(onnx_file.read_bytes()[: 1 << 20])  # the first MiB
    with pytest.raises(ModelLoadError, match="cannot load the ONNX graph"):
        load_neural(Resources(neural_onnx_dir=broken))
    card = json.loads((broken / "export.json").read_text(encoding="utf-8"))
    card["cpu_graph"]["onnxruntime"] = "1.0.0"
    (broken / "export.json").write_text(json.dumps(card), encoding="utf-8")
    with pytest.raises(ModelLoadError, match="remake it with fluency export-neural --plain"):
        load_neural(Resources(neural_onnx_dir=broken))
    (broken / "export.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ModelLoadError, match=r"export\.json is not readable JSON"):
        load_neural(Resources(neural_onnx_dir=broken))
    onnx_file.unlink()
    with pytest.raises(ModelLoadError, match=r"no ONNX graph .* make install-neural"):
        load_neural(Resources(neural_onnx_dir=broken))


@pytest.fixture(scope="module")
def plain_export(tmp_path_factory):
    """An export that kept the plain graphs (`fluency export-neural --plain`)."""
    from training.gleu.neural_export import export_onnx

    folder = tmp_path_factory.mktemp("plain")
    export_onnx(GGUF, folder, plain=True)
    return folder


@pytest.mark.slow
def test_the_cpu_graph_scores_as_the_plain_graph(plain_export):
    """The export saved ONNX Runtime's CPU optimisations of the graph (`smollm2.cpu.onnx`); a CPU
    session loads it, optimising nothing, and every token gets the plain graph's log-probability.
    Another ONNX Runtime than the one that optimised it, or another device, loads the plain one."""
    import onnxruntime as ort

    card = json.loads((plain_export / "export.json").read_text(encoding="utf-8"))
    assert card["cpu_graph"]["max_abs_diff_vs_graph"] <= 1e-6 and card["plain_graphs"]
    options = ort.SessionOptions()
    assert _graph(ort, plain_export, card, "cpu", options).name == "smollm2.cpu.onnx"
    assert options.graph_optimization_level == ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    older = {**card, "cpu_graph": {**card["cpu_graph"], "onnxruntime": "1.0.0"}}
    for other, device in ((older, "cpu"), (card, "gpu")):
        options = ort.SessionOptions()
        assert _graph(ort, plain_export, other, device, options).name == "smollm2.onnx"
        assert options.graph_optimization_level == ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    plain = plain_export.parent / "as_made"
    plain.mkdir()
    for name in ("smollm2.onnx", "smollm2.states.onnx", "tokenizer.json"):
        (plain / name).symlink_to(plain_export / name)
    states = {k: v for k, v in card["states_graph"].items() if k != "cpu_graph"}
    without = {**{k: v for k, v in card.items() if k != "cpu_graph"}, "states_graph": states}
    (plain / "export.json").write_text(json.dumps(without), encoding="utf-8")
    optimised = load_neural(Resources(neural_onnx_dir=plain_export))
    as_made = load_neural(Resources(neural_onnx_dir=plain))
    for text in [t for pair in PAIRS for t in pair] + ["Yes.", "The market was quiet. " * 30]:
        a, b = token_logprobs(optimised, text)[1], token_logprobs(as_made, text)[1]
        assert a.shape == b.shape and np.abs(a - b).max() <= 1e-6


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
    moved = FeatureRows(("neural.v2",), Resources(neural_path=copy))
    assert moved.key.digest == FeatureRows(("neural.v2",)).key.digest
    assert moved.rows([PAIRS[0][0]]) == FeatureRows(("neural.v2",)).rows([PAIRS[0][0]])


def test_the_device_setting_is_checked(monkeypatch):
    import onnxruntime as ort

    monkeypatch.setenv("FLUENCY_DEVICE", "tpu")
    with pytest.raises(ModelLoadError, match="FLUENCY_DEVICE must be cpu, gpu or auto"):
        load_neural(Resources())
    monkeypatch.setenv("FLUENCY_DEVICE", "gpu")
    if "CUDAExecutionProvider" in ort.get_available_providers():
        assert load_neural(Resources()).device == "gpu"
    else:  # a CPU-only onnxruntime: asking for a GPU says so instead of silently using the CPU
        with pytest.raises(ModelLoadError, match="has no CUDA provider"):
            load_neural(Resources())
    monkeypatch.setenv("FLUENCY_DEVICE", "cpu")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    lm = load_neural(Resources())
    assert (lm.device, lm.threads) == ("cpu", 1)


def test_the_retired_llama_cpp_extractor_is_refused_with_the_way_out():
    from features.errors import FeatureError

    with pytest.raises(FeatureError, match=r"neural\.v1' is retired: .* retrain .* neural\.v2"):
        registry.get("neural.v1")


def _texts_of_1_to_150_tokens(lm):
    sentence = "Traders said the market was quiet ahead of the meeting on Tuesday."
    texts = ["Hi", "Yes.", PAIRS[0][0], PAIRS[2][0], "The bank fell.", sentence * 4, sentence * 10]
    lengths = [len(lm.tokenize(t)) for t in texts]
    assert lengths[0] == 1 and 140 <= max(lengths) <= 150 and len(set(lengths)) == len(texts)
    return texts


def test_the_pooled_states_of_a_text_are_the_same_alone_or_packed():
    """Texts of 1 to 150 tokens, every one's states pooled over its own tokens: alone, all in
    one right-padded pass, and in other company and order, the same to 1e-5."""
    from features.neural_lm import HIDDEN, POOLINGS, _passes

    lm = load_neural(Resources())
    tokens = [lm.tokenize(t) for t in _texts_of_1_to_150_tokens(lm)]
    alone = [_passes(lm, [t], budget=1)[0][1] for t in tokens]
    packed = [s for _, s in _passes(lm, tokens, budget=8192)]
    order = [4, 0, 6, 2, 5, 1, 3]
    shuffled = [s for _, s in _passes(lm, [tokens[i] for i in order], budget=400)]
    for k, states in enumerate(alone):
        assert states.shape == (len(lm.layers), len(POOLINGS), HIDDEN)
        assert np.abs(states - packed[k]).max() <= 1e-5
        assert np.abs(states - shuffled[order.index(k)]).max() <= 1e-5
    # Pooling is over the text's tokens: the mean and the last tokens differ where the text is
    # longer than LAST_TOKENS, and they are the same for a text of one token.
    assert np.abs(alone[0][:, 0] - alone[0][:, 1]).max() == 0
    assert np.abs(alone[-1][:, 0] - alone[-1][:, 1]).max() > 0.1


def test_the_states_family_reads_the_same_passes_as_the_log_probabilities(monkeypatch):
    """`neural.v2` and `neural_states.v1` over one batch: one pass a text, not two; the
    states are the pooled states `pooled_states` gives, zeros for an empty text."""
    import features.neural_lm as neural_lm
    import features.neural_states as neural_states

    texts = [PAIRS[0][0], PAIRS[0][1], ""]
    runs = []
    real = neural_lm._pass
    monkeypatch.setattr(
        neural_lm, "_pass", lambda lm, seqs: runs.append(len(seqs)) or real(lm, seqs)
    )
    rows = FeatureRows(("neural.v2", "neural_states.v1"), Resources())
    found = rows.extract(rows.annotate(texts))
    assert sum(runs) == 2  # the two texts with tokens, once each
    lm = rows.resources.get("neural", load_neural)
    states, sums, n_tokens = neural_states.pooled_states(lm, texts)
    at = (lm.layers.index(neural_lm.STATE_LAYER), neural_lm.POOLINGS.index(neural_lm.STATE_POOLING))
    for row, pooled, total in zip(found, states, sums, strict=True):
        values = np.array([row[f"neural_states.v1/{n}"] for n in neural_states.STATE_NAMES])
        assert np.abs(values - pooled[at]).max() <= 1e-6
        assert row["neural.v2/logprob_sum"] == pytest.approx(total, abs=1e-6)
    assert n_tokens[2] == 0 and not found[2]["neural_states.v1/h000"]
    assert np.abs(states[0] - states[1]).max() > 0.1  # a scramble is another state


def test_a_graph_without_states_is_refused_for_them_clearly(tmp_path):
    folder = tmp_path / "old"
    shutil.copytree(NEURAL_ONNX_DIR, folder)
    card = json.loads((folder / "export.json").read_text())
    card.pop("outputs")  # as `fluency export-neural` wrote it before the states
    card.pop("states_graph")
    (folder / "export.json").write_text(json.dumps(card))
    resources = Resources(neural_onnx_dir=folder)
    assert FeatureRows(("neural.v2",), resources).rows([PAIRS[0][0]])  # the old columns serve
    with pytest.raises(ModelLoadError, match="remake it with fluency export-neural"):
        FeatureRows(("neural_states.v1",), resources).rows([PAIRS[0][0]])
