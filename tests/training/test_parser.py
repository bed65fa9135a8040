"""Training the benepar parser: reading the treebank, bracket F1, and a tiny real run."""

from __future__ import annotations

import json
import zipfile

import nltk
import pytest

from features.constituency import ParserInput, load_parser
from scorer.cli import main
from scorer.errors import InputError
from training.parser import bracket_score, clean_tree, read_treebank, split_treebank


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
