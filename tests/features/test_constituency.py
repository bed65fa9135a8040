"""The constituency features, read from the shipped benepar checkpoint (models/benepar)."""

from __future__ import annotations

import math
import random

import pytest

from features import registry
from features.constituency import (
    DEFAULT_PATH,
    MAX_TOKENS,
    NAMES,
    ParserInput,
    load_parser,
    parser_words,
    score_parses,
)
from features.resources import Resources
from features.sentence import Sentence
from scorer.errors import ModelLoadError

# Tokenised as spaCy would, punctuation split off.
GRAMMATICAL = [
    "The company said its profits would rise next year .",
    "Shares of the bank fell sharply on Monday .",
    "The government plans to cut taxes for small businesses .",
    "Analysts expect the merger to be completed by March .",
    "He said the talks had made good progress .",
    "The central bank raised interest rates by half a point .",
    "Oil prices rose after the producers agreed to limit output .",
    "The board approved a plan to buy back its own shares .",
    "Exports to Japan increased in the first quarter .",
    "The new factory will employ about 500 workers .",
]


def _sentence(tokens) -> Sentence:
    tokens = tuple(tokens)
    return Sentence.from_heads(tokens, list(range(len(tokens))))


@pytest.fixture(scope="module")
def resources() -> Resources:
    return Resources(benepar_path=DEFAULT_PATH)


@pytest.fixture(scope="module")
def extractor():
    return registry.get("constituency.v1").func


def test_real_sentences_are_more_probable_than_their_shuffles(extractor, resources):
    rng = random.Random(0)
    real = [_sentence(s.split()) for s in GRAMMATICAL]
    shuffled = []
    for s in GRAMMATICAL:
        words = s.split()
        for _ in range(3):
            rng.shuffle(words)
            shuffled.append(_sentence(words))
    real_rows = extractor(real, resources)
    shuffled_rows = extractor(shuffled, resources)

    def mean(rows, key):
        return sum(r[key] for r in rows) / len(rows)

    for key in ("logprob_per_word", "score_per_word"):
        assert mean(real_rows, key) > mean(shuffled_rows, key), key
    # and sentence by sentence: most beat the mean of their own three shuffles (10/10 now)
    wins = sum(
        row["logprob_per_word"] > mean(shuffled_rows[3 * i : 3 * i + 3], "logprob_per_word")
        for i, row in enumerate(real_rows)
    )
    assert wins >= 8
    # a log-probability, so at most 0
    assert all(r["logprob_per_word"] <= 1e-6 for r in real_rows + shuffled_rows)


@pytest.mark.parametrize(
    "tokens",
    [
        [],
        ["Hello"],
        ["the"] * 500,
        ["The", "cat\x07", "\x01\x02", "sat", "\u200b", "on\x00", "mats", "\x7f", "."],
        ["Москва", "—", "столица", "России", "."],
        ["北京", "是", "中国", "的", "首都", "。"],
        ["(", "-LRB-", "``", "''", "“", "”", "--", ")"],
        [" ", "\n", "\t"],
    ],
    ids=["empty", "one", "500", "control", "russian", "chinese", "brackets", "spaces"],
)
def test_bad_inputs_give_finite_values(extractor, resources, tokens):
    (row,) = extractor([_sentence(tokens)], resources)
    assert set(row) == set(NAMES)
    assert all(math.isfinite(v) for v in row.values()), row
    if not any(t.strip() for t in tokens):
        assert row == dict.fromkeys(NAMES, 0.0)


def test_batch_gives_the_same_values_as_one_by_one(extractor, resources):
    sents = [_sentence(s.split()) for s in GRAMMATICAL[:4]] + [_sentence(["Hello"])]
    batch = extractor(sents, resources)
    for sent, row in zip(sents, batch, strict=True):
        (alone,) = extractor([sent], resources)
        assert alone == pytest.approx(row, abs=1e-4)


def test_log_partition_is_the_sum_over_all_trees():
    # Three words have two binary trees: ((a b) c) and (a (b c)). Every span of a tree takes
    # one label (the empty label scoring 0), the root a non-empty one. So
    # Z = root * leaves * (Z(0,2) + Z(1,3)), each factor a sum of exp(score) over labels.
    parser = load_parser(DEFAULT_PATH)
    words = ("Markets", "fell", "sharply")
    (scores,) = parser.parse([ParserInput(words)], return_scores=True)
    import torch

    s = torch.as_tensor(scores, dtype=torch.float64)
    s = s - s[..., :1]
    z_span = torch.logsumexp(s, -1)  # [start, end-1]
    root = torch.logsumexp(s[0, 2, 1:], -1)
    leaves = z_span[0, 0] + z_span[1, 1] + z_span[2, 2]
    expected = root + leaves + torch.logaddexp(z_span[0, 1], z_span[1, 2])
    (stats,) = score_parses(parser, [words])
    assert stats.log_z == pytest.approx(float(expected), abs=1e-3)
    # and the best tree is benepar's own parse, with its score
    tree = parser.parse([ParserInput(words)])[0]
    assert stats.labels[0] == tree[0].label()
    assert stats.best_score <= stats.log_z


def test_parser_words_normalise_as_for_training():
    assert parser_words(["-LRB-", "“", "a\x01b", " ", "x"]) == ("(", '"', "a\x00b", "x")
    assert len(parser_words(["w"] * (MAX_TOKENS + 10))) == MAX_TOKENS


def test_missing_checkpoint_raises_a_clear_error(extractor, tmp_path):
    resources = Resources(benepar_path=tmp_path / "parser.pt")
    with pytest.raises(ModelLoadError, match="fluency train-parser"):
        extractor([_sentence(["Hello", "."])], resources)
    # nothing is loaded for texts with no words either way: the error comes on first use
    with pytest.raises(ModelLoadError):
        load_parser(tmp_path / "parser.pt")


def test_a_file_that_is_not_a_checkpoint_raises_model_load_error(tmp_path):
    path = tmp_path / "parser.pt"
    path.write_bytes(b"not a checkpoint")
    with pytest.raises(ModelLoadError, match="not a benepar checkpoint"):
        load_parser(path)
