"""The texts the taught heads learn from (`training.heads.taught.texts`): the GLEU stage's real
sentences and the generated ones its recipe makes of them, read with the real spaCy splitter;
the development outputs at the judged files' cut."""

from __future__ import annotations

import numpy as np

from training.heads.taught.texts import corpus_texts, dev_texts, set_digest

SENTENCES = [
    "The company said its profits rose sharply in the third quarter of the year.",
    "Shares of the bank fell after the central bank raised interest rates again.",
    "Analysts expect the merger to be approved by regulators early next month.",
    "The government announced new measures to support small farmers in the region.",
    "Oil prices climbed for a third day as supplies from the Gulf were cut.",
    "The board will meet on Tuesday to discuss the proposed dividend increase.",
    "Exports of coffee dropped by ten percent compared with the same period last year.",
    "A spokesman for the ministry declined to comment on the report.",
    "The union said its members would return to work on Monday morning.",
    "Trading was light ahead of the holiday weekend, dealers said.",
    "The airline plans to buy twelve new aircraft over the next five years.",
    "Investors remained cautious because of uncertainty over the budget talks.",
]


def test_the_corpus_gives_real_sentences_and_as_many_generated_ones(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n\n".join(" ".join(SENTENCES[i : i + 3]) for i in range(0, 12, 3)) + "\n")
    found = corpus_texts(corpus, 6, seed=1)
    real = [t for t, k in zip(found.texts, found.kinds, strict=True) if k == "real"]
    made = [t for t, k in zip(found.texts, found.kinds, strict=True) if k != "real"]
    assert len(real) == len(made) == 6
    assert set(real) <= set(SENTENCES)
    assert not set(made) & set(SENTENCES)  # glued pieces and injected errors: never a real one
    assert found.genre == "" and found.digest == set_digest(found.texts)
    assert corpus_texts(corpus, 6, seed=1) == found  # the same texts again


def test_the_development_outputs_are_the_judged_files_rows(shared_dir):
    """The same texts in the same order as the judged file's rows: the default tier's GLEU
    score of each, read whole, is the row's."""
    from scorer import load_scorer
    from scorer.evidence.genres import GENRES
    from training.heads.data.files import head_files, text_columns

    default = load_scorer("default")
    path = shared_dir / "dev" / "lau2020_acceptability.jsonl"
    cut = {"max_outputs": 60, "max_words": 3000, "seed": 7}
    [found] = dev_texts([path], GENRES, default.placeholders, **cut)
    [judged] = head_files(default, [path], GENRES, ["whole"], **cut)
    assert found.genre == judged.genre == "acceptability"
    assert found.name == judged.name and set(found.kinds) == {"output"}
    mine = text_columns(default, found.texts, ["whole"])["whole"]["gleu"]
    np.testing.assert_allclose(mine, judged.columns["whole"]["gleu"])
