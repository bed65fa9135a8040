"""Train a small GLEU model end to end, through the CLI, on a corpus the test writes itself."""

from __future__ import annotations

import json
import random
import shutil

import pandas as pd
import pytest

from scorer.cli import main
from scorer.errors import ModelLoadError
from scorer.model import load_model
from scorer.scoring import load_scorer

SUBJECTS = ["The company", "The bank", "Our small team", "The minister", "A farmer", "The board"]
VERBS = ["said", "reported", "expected", "announced", "denied", "confirmed"]
OBJECTS = [
    "that profits would rise next year",
    "a sharp fall in exports",
    "new measures to support prices",
    "that the talks had failed",
    "an agreement with its lenders",
    "record sales in the first quarter",
]
TAILS = ["", " on Tuesday", " after the meeting", " in a statement", " last week"]
FEATURES = ["surface.v2", "spacy.v1"]


def _corpus(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [
        f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)}{rng.choice(TAILS)}."
        for _ in range(n)
    ]


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    root = tmp_path_factory.mktemp("train")
    corpus = root / "corpus.txt"
    corpus.write_text("\n".join(_corpus(600, 1)) + "\n")
    models = root / "models"
    argv = ["train", "--corpus", str(corpus), "--out", str(models / "small")]
    argv += ["--sentences", "150", "--seed", "7", "--jobs", "1", "--features", *FEATURES]
    assert main(argv) == 0
    return models


def test_bundle_has_a_complete_card(trained):
    card = json.loads((trained / "small" / "card.json").read_text())
    assert card["features"] == FEATURES
    assert card["training"]["n_real"] == 150
    assert card["training"]["seed"] == 7
    assert len(card["model_sha256"]) == 64
    assert 0.5 < card["metrics"]["held_out_accuracy"] <= 1.0
    assert {"scikit-learn", "spacy", "numpy"} <= set(card["libraries"])


def test_real_sentences_outscore_their_shuffles(trained):
    scorer = load_scorer("small", models_dir=trained)
    real = _corpus(20, 99)
    rng = random.Random(3)
    shuffled = []
    for text in real:
        words = text.rstrip(".").split()
        rng.shuffle(words)
        shuffled.append(" ".join(words) + ".")
    r, s = scorer.score(real), scorer.score(shuffled)
    assert sum(r) / len(r) > sum(s) / len(s)
    assert sum(a > b for a, b in zip(r, s, strict=True)) >= 14


def test_score_command_keeps_line_order(trained, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FLUENCY_MODELS_DIR", str(trained))
    lines = ["The bank said that the talks had failed.", "", "failed talks the bank that had"]
    path = tmp_path / "in.txt"
    path.write_text("\n".join(lines) + "\n")
    assert main(["score", str(path), "--model", "small"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 3 and out[1] == "nan"
    assert float(out[0]) > float(out[2])
    assert main(["score", str(path), "--model", "small", "--format", "json"]) == 0
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert rows[1] == {"score": None}
    assert set(rows[0]["features"]) >= {"spacy.v1/logprob_mean", "surface.v2/n_tokens"}


def test_corrupt_and_misplaced_models_are_refused(trained, tmp_path):
    bad = trained / "corrupt"
    shutil.copytree(trained / "small", bad)
    with open(bad / "model.joblib", "r+b") as fh:
        fh.seek(100)
        fh.write(b"\x00garbage\x00")
    with pytest.raises(ModelLoadError, match="SHA-256"):
        load_model("corrupt", trained)
    with pytest.raises(ModelLoadError, match="outside the models directory"):
        load_model(trained / "small", tmp_path)
    with pytest.raises(ModelLoadError, match="no model"):
        load_model("missing", trained)
    card = json.loads((trained / "small" / "card.json").read_text())
    card["feature_set_version"] = "0000"
    (bad / "card.json").write_text(json.dumps(card))
    shutil.copy(trained / "small" / "model.joblib", bad / "model.joblib")
    with pytest.raises(ModelLoadError, match="retrain"):
        load_model("corrupt", trained)


def test_cli_reports_a_missing_model(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("FLUENCY_MODELS_DIR", str(tmp_path))
    (tmp_path / "in.txt").write_text("A sentence.\n")
    assert main(["score", str(tmp_path / "in.txt"), "--model", "nothing"]) == 2
    assert "no model" in capsys.readouterr().err


def test_ranking_objective_and_glue_test(trained, tmp_path, monkeypatch, capsys):
    """`--objective rank` trains a RankSVM whose score still reads > 0 as real; `glue-test`
    scores real sentences above word salad glued from the same corpus."""
    from collections import Counter

    from training.gleu.corpus import read_corpus
    from training.gleu.glue import glue_evaluation

    corpus = trained.parent / "corpus.txt"
    argv = ["train", "--corpus", str(corpus), "--out", str(trained / "ranked"), "--objective"]
    argv += ["rank", "--sentences", "150", "--seed", "7", "--jobs", "1", "--features", *FEATURES]
    assert main(argv) == 0
    card = json.loads((trained / "ranked" / "card.json").read_text())
    assert card["metrics"]["objective"] == "rank" and card["metrics"]["held_out_spearman"] > 0
    scorer = load_scorer("ranked", models_dir=trained)
    held_out = tmp_path / "held_out.txt"
    held_out.write_text("\n".join(_corpus(400, 123)) + "\n")
    lengths = Counter(len(s) for s in read_corpus([str(held_out)], progress=False).sentences)
    n = lengths.most_common(1)[0][0]
    result = glue_evaluation(scorer, [str(held_out)], n=n, sizes=(1, 2), per_size=8, seed=3)
    assert set(result.accuracy) == {n, 1, 2}
    assert all(0 <= a <= 1 for a in result.accuracy.values())
    assert result.auc[1] > 0.7
    assert result.mean_score[n] > result.mean_score[1]


def test_split_corpus_keeps_documents_whole(tmp_path, capsys):
    docs = [f"Document {i} first line.\nDocument {i} second line." for i in range(10)]
    source = tmp_path / "docs.txt"
    source.write_text("\n\n".join(docs) + "\n")
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    argv = ["split-corpus", "--corpus", str(source), "--out-a", str(a), "--out-b", str(b)]
    assert main([*argv, "--share-b", "0.3", "--seed", "1"]) == 0
    part_a = a.read_text().strip().split("\n\n")
    part_b = b.read_text().strip().split("\n\n")
    assert len(part_a) == 7 and len(part_b) == 3
    assert sorted(part_a + part_b) == sorted(docs)
    assert main([*argv, "--share-b", "1.5"]) == 2


def test_rank_svm_rbf_map_ranks_what_a_linear_ranker_cannot():
    """Levels that fall with |x| (the best sentences in the middle of a feature's range): the
    linear ranker can only order by x itself, the RBF map (Nystroem) recovers the order."""
    import numpy as np
    from scipy.stats import spearmanr

    from scorer.model import RankSVM

    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 2))
    y = np.round(-np.abs(X[:, 0]) * 3)  # 0 is the top level
    test = rng.normal(size=(300, 2))
    truth = -np.abs(test[:, 0])
    linear = RankSVM(C=1.0, max_pairs=5000).fit(X, y)
    rbf = RankSVM(C=1.0, max_pairs=5000, kernel="rbf", n_components=100).fit(X, y)
    rho_linear = spearmanr(truth, linear.decision_function(test)).statistic
    rho_rbf = spearmanr(truth, rbf.decision_function(test)).statistic
    assert abs(rho_linear) < 0.3 < 0.8 < rho_rbf
    with pytest.raises(ValueError, match="kernel"):
        RankSVM(kernel="poly").fit(X, y)


def test_a_linear_ranker_caps_an_input_only_where_it_would_raise_the_score():
    """Two inputs whose weights cancel within the training range (a length and a summed
    log-probability): past the range on the side that raises the score, the ranker reads the
    edge; past it on the side that lowers the score, it keeps extrapolating."""
    import numpy as np

    from scorer.model import RankSVM

    rng = np.random.default_rng(1)
    length = rng.uniform(5, 40, 800)
    total = -2.5 * length + rng.normal(0, 3, 800)  # longer is lower, as a summed log-prob
    y = (total + 2.5 * length > 0).astype(float)  # better than its length predicts
    X = np.column_stack([length, total])
    ranker = RankSVM(C=1.0, max_pairs=20000).fit(X, y)
    assert ranker.coef_[0] > 0 and ranker.coef_[1] > 0
    assert np.array_equal(ranker.cap(X), X)  # the training rows are inside their range
    edge = ranker.decision_function([[40.0, X[:, 1].max()]])[0]
    far_good = ranker.decision_function([[900.0, -100.0]])[0]  # a long run, summed "easily"
    assert far_good <= edge
    assert ranker.decision_function([[20.0, -1000.0]])[0] < ranker.decision_function(X).min()
    rbf = RankSVM(C=1.0, max_pairs=2000, kernel="rbf", n_components=50).fit(X, y)
    assert rbf.cap_low_ is None and np.array_equal(rbf.cap(X * 10), X * 10)


def test_a_model_refuses_an_artefact_it_was_not_trained_with(tmp_path):
    """The shipped model records the SHA-256 of the parser and LM it read in training; a
    replaced file (same feature names, other values) is refused, not silently used."""
    from features.resources import MODELS_DIR

    models = tmp_path / "models"
    shutil.copytree(MODELS_DIR / "full", models / "copy")
    card = json.loads((models / "copy" / "card.json").read_text())
    assert card["resources"]["benepar_sha256"]  # the full model reads our parser
    card["resources"]["benepar_sha256"] = "0" * 64
    (models / "copy" / "card.json").write_text(json.dumps(card))
    with pytest.raises(ModelLoadError, match=r"trained with another benepar/parser\.pt"):
        load_scorer("copy", models_dir=models)


def test_a_text_of_several_sentences_scores_as_their_token_weighted_mean(trained):
    """The model is sentence-level: two fluent sentences read whole would look like fragments
    (two dependency roots); scored one by one and averaged by length, they do not."""
    scorer = load_scorer("small", models_dir=trained)
    first, second = _corpus(2, 5)
    both = f"{first} {second}"
    a, b, whole = scorer.score_texts([first, second, both], with_features=True, by_sentence=True)
    assert (a.n_sentences, b.n_sentences, whole.n_sentences) == (1, 1, 2)
    n_a, n_b = len(scorer.annotate([first])[0].tokens), len(scorer.annotate([second])[0].tokens)
    assert whole.score == pytest.approx((n_a * a.score + n_b * b.score) / (n_a + n_b))
    assert whole.features["spacy.v1/extra_roots"] == 0.0  # each sentence parsed on its own
    unsplit = scorer.score_texts([both], with_features=True, aggregate="whole")[0]
    assert unsplit.n_sentences == 1 and unsplit.features["spacy.v1/extra_roots"] == 1.0
    assert whole.score > unsplit.score  # read whole, the pair looks like a fragment


def test_score_command_aggregate(trained, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FLUENCY_MODELS_DIR", str(trained))
    first, second = _corpus(2, 5)
    lines = tmp_path / "in.txt"
    lines.write_text(f"{first} {second}\n{first}\n")

    def scores(*flags: str) -> list[float]:
        assert main(["score", "--model", "small", *flags, str(lines)]) == 0
        return [float(x) for x in capsys.readouterr().out.split()]

    split, whole = scores(), scores("--aggregate", "whole")
    assert scores("--by-sentence") == split == scores("--aggregate", "weighted")
    assert split[1] == pytest.approx(whole[1])  # one sentence: the same either way
    assert split[0] > whole[0]  # read whole, the pair looks like a fragment


def test_passages_join_only_sentences_that_followed_each_other(tmp_path):
    """`read_corpus(passage_share=...)` keeps about that share of items as 2-3 sentences that
    were adjacent in one paragraph; a filtered-out sentence breaks a run; 0 changes nothing."""
    from training.gleu.corpus import read_corpus

    paragraphs = []
    for p in range(150):
        sents = [f"Paragraph {p} has sentence number {k} in it." for k in range(4)]
        sents[2] = "Too short."  # dropped by min_tokens=5: 1 and 3 must never be joined
        paragraphs.append(" ".join(sents))
    path = tmp_path / "paras.txt"
    path.write_text("\n".join(paragraphs) + "\n")
    plain = read_corpus([str(path)], progress=False, seed=4)
    joined = read_corpus([str(path)], progress=False, seed=4, passage_share=0.4)
    assert all("sentence number 2" not in t for t in plain.texts())
    assert sorted(plain.texts()) == sorted(read_corpus([str(path)], progress=False).texts())
    multi = [t for t in joined.texts() if t.count(".") > 1]
    # A run may start at sentence 0 (chance 0.4) only: 150 * 0.4 = 60 of about 390 items.
    assert 0.08 < len(multi) / len(joined.texts()) < 0.25
    for text in multi:
        assert text.count(".") == 2 and "number 0 in it. Paragraph" in text  # only 0+1 adjoin
        para = text.split()[1]
        assert text == f"Paragraph {para} has sentence number 0 in it. " + (
            f"Paragraph {para} has sentence number 1 in it."
        )
    # every sentence is still there once, whole or inside its passage
    assert sum(t.count(".") for t in joined.texts()) == len(plain.texts())
    with pytest.raises(Exception, match="passage share"):
        read_corpus([str(path)], progress=False, passage_share=1.5)


def test_placeholders_setting_reaches_the_score_command(trained, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FLUENCY_MODELS_DIR", str(trained))
    monkeypatch.setenv("FLUENCY_PLACEHOLDERS", "X")
    src = tmp_path / "in.txt"
    src.write_text("X is a restaurant in the X area .\nSmith is a restaurant in the Smith area .\n")
    assert main(["score", str(src), "--model", "small"]) == 0
    filled = capsys.readouterr().out.split()
    assert filled[0] == filled[1]
    assert main(["--placeholders", "", "score", str(src), "--model", "small"]) == 0
    kept = capsys.readouterr().out.split()
    assert kept[0] != kept[1] and kept[1] == filled[1]
    table = tmp_path / "features.csv"
    argv = ["features", "--in", str(src), "--out", str(table), "--features", "linkgrammar.v5"]
    assert main(argv) == 0
    rows = pd.read_csv(table)
    assert rows["text"][0].startswith("X is")  # the line as given
    assert rows["linkgrammar.v5/full_parse"].tolist() == [1.0, 1.0]


def test_features_with_worker_processes_equal_one_process(tmp_path):
    lines = [
        "The company said its profit rose sharply in the first quarter.",
        "profit the rose company quarter said",
        "X is a restaurant in the X area .",
        "Shares fell. Then they rose again!",
        "null",
    ] * 3
    src = tmp_path / "in.txt"
    src.write_text("\n".join(lines) + "\n")
    tables = []
    for jobs in ("1", "2"):
        out = tmp_path / f"features{jobs}.csv"
        argv = ["features", "--in", str(src), "--out", str(out), "--chunk", "4", "--jobs", jobs]
        assert main([*argv, "--features", "surface.v2", "spacy.v1", "linkgrammar.v5"]) == 0
        tables.append(pd.read_csv(out, keep_default_na=False))
    one, two = tables
    assert one["text"].tolist() == lines  # input order, chunks of 4 across 2 workers
    pd.testing.assert_frame_equal(one, two)
