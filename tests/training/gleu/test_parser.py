"""Training the benepar parser: reading the treebank, bracket F1, and a tiny real run."""

from __future__ import annotations

import json
import zipfile

import nltk
import pytest

from features.constituency import ParserInput, load_parser
from scorer.cli import main
from scorer.errors import InputError
from training.gleu.treebank import bracket_score, clean_tree, read_treebank, split_treebank


def _tree(text: str):
    return nltk.Tree.fromstring(text)


def test_clean_tree_drops_empty_elements_and_function_tags():
    raw = _tree(
        "( (S (NP-SBJ-1 (NNP John)) (VP (VBD tried) (S (NP-SBJ (-NONE- *-1)) "
        "(VP (TO to) (VP (VB leave))))) (. .)) )"
    )
    tree = clean_tree(raw)
    assert tree.label() == "TOP"
    assert tree.leaves() == ["John", "tried", "to", "leave", "."]
    assert str(tree) == str(
        _tree("(TOP (S (NP (NNP John)) (VP (VBD tried) (S (VP (TO to) (VP (VB leave))))) (. .)))")
    )


def test_bracket_score_counts_labelled_brackets_evalb_style():
    gold = _tree("(TOP (S (NP (DT The) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (PRP it)))) (. .)))")
    same = gold.copy(deep=True)
    assert bracket_score([gold], [same]).f1 == 100.0
    # PP attached too high and relabelled: gold S NP VP PP NP(it); predicted S NP VP NP(it) ADVP
    pred = _tree(
        "(TOP (S (NP (DT The) (NN cat)) (VP (VBD sat)) (ADVP (IN on) (NP (PRP it))) (. .)))"
    )
    score = bracket_score([gold], [pred])
    # Punctuation is deleted, so S spans the same 5 words in both: matched S, NP, NP(it).
    assert (score.n_matched, score.n_gold, score.n_predicted) == (3, 5, 5)
    assert score.f1 == pytest.approx(60.0)


def test_split_refuses_impossible_dev_sizes():
    trees = [_tree("(TOP (NP (NN a)))")] * 3
    assert [len(x) for x in split_treebank(trees, 1)] == [2, 1]
    with pytest.raises(InputError):
        split_treebank(trees, 3)


@pytest.fixture
def small_treebank(shared_dir, tmp_path):
    """The first 3 files of NLTK's WSJ sample (33 trees) as a folder of .mrg files."""
    folder = tmp_path / "mrg"
    folder.mkdir()
    with zipfile.ZipFile(shared_dir / "nltk_data" / "corpora" / "treebank.zip") as archive:
        for i in range(1, 4):
            name = f"treebank/combined/wsj_{i:04d}.mrg"
            (folder / name.rsplit("/", 1)[1]).write_bytes(archive.read(name))
    return folder


def test_tiny_training_run_writes_a_loadable_checkpoint_and_card(small_treebank, tmp_path):
    trees = read_treebank(str(small_treebank))
    assert len(trees) == 33
    out = tmp_path / "model"
    argv = ["train-parser", "--treebank", str(small_treebank), "--out", str(out)]
    argv += ["--max-steps", "3", "--n-dev", "5", "--max-train", "20", "--minutes", "1"]
    assert main(argv) == 0

    card = json.loads((out / "card.json").read_text())
    assert card["n_train"] == 20 and card["n_dev"] == 5 and card["steps"] == 3
    assert 0.0 <= card["dev_f1"] <= 100.0
    assert card["command"].startswith("fluency train-parser")
    assert len(card["treebank_sha256"]) == 64
    assert card["hparams"]["use_chars_lstm"] and not card["hparams"]["use_pretrained"]
    assert card["checkpoint_bytes"] == (out / "parser.pt").stat().st_size < 20_000_000

    parser = load_parser(out / "parser.pt")
    words = ("The", "market", "closed", "higher", ".")
    (tree,) = parser.parse([ParserInput(words)])
    assert tree.label() == "TOP" and tuple(tree.leaves()) == words


def test_unknown_treebank_is_a_clear_error(tmp_path):
    with pytest.raises(InputError, match="no treebank"):
        read_treebank(str(tmp_path / "nowhere"))


def test_training_goes_on_from_a_checkpoint_with_overridden_hparams(small_treebank, tmp_path):
    """`--init` starts from a checkpoint's weights (so the first dev check is already the old
    model's F1, not a fresh model's); `--hparam` overrides one setting and the card records
    both in the command that repeats the run."""
    first, second = tmp_path / "first", tmp_path / "second"
    common = ["--treebank", str(small_treebank), "--n-dev", "5", "--max-train", "20"]
    assert main(["train-parser", *common, "--out", str(first), "--max-steps", "30"]) == 0
    before = json.loads((first / "card.json").read_text())["dev_f1"]
    argv = ["train-parser", *common, "--out", str(second), "--max-steps", "1"]
    argv += ["--init", str(first / "parser.pt"), "--hparam", "learning_rate=0.0"]
    assert main(argv) == 0
    card = json.loads((second / "card.json").read_text())
    assert card["hparams"]["learning_rate"] == 0.0
    assert "--init" in card["command"] and "learning_rate=0.0" in card["command"]
    assert card["dev_f1"] == pytest.approx(before, abs=0.01)  # lr 0: the same weights


def test_bad_hparams_and_mismatched_checkpoints_are_clear_errors(small_treebank, tmp_path, capsys):
    common = ["train-parser", "--treebank", str(small_treebank), "--n-dev", "5"]
    common += ["--max-train", "20", "--max-steps", "1"]
    assert main([*common, "--out", str(tmp_path / "a"), "--hparam", "no_such_thing=1"]) == 2
    assert "KEY=VALUE" in capsys.readouterr().err
    assert main([*common, "--out", str(tmp_path / "a"), "--hparam", "d_model=wide"]) == 2
    assert "d_model is a int" in capsys.readouterr().err
    assert main([*common, "--out", str(tmp_path / "small")]) == 0
    argv = [*common, "--out", str(tmp_path / "b"), "--init", str(tmp_path / "small" / "parser.pt")]
    assert main([*argv, "--hparam", "d_model=64"]) == 2
    assert "does not match these hyperparameters" in capsys.readouterr().err
