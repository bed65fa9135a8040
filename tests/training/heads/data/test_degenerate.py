"""The runs and loops a learned head must score below their sentences, made from real ones."""

from __future__ import annotations

from training.heads.data.files import degenerate_texts

REAL = [
    "The company said its net profit rose 12 percent in the third quarter.",
    "Shares of the bank fell sharply on Monday after the report!",
]


def test_each_sentence_gets_a_run_and_a_loop_three_times_its_length_and_to_the_limit():
    made = degenerate_texts(REAL, chars=500)
    assert list(made) == ["run", "loop", "long run", "long loop"]
    for kind, texts in made.items():
        assert len(texts) == len(REAL)
        for sentence, text in zip(REAL, texts, strict=True):
            body = sentence[:-1].split()
            words = text[:-1].split()
            assert text[-1] == sentence[-1] and "." not in text[:-1] and "!" not in text[:-1]
            if kind in ("run", "loop"):
                assert len(words) == 3 * len(body)
            else:  # as long as the limit allows: one more word would pass it
                assert len(text) <= 500 < len(text) + len(words[0]) + 1
            if kind.endswith("run"):
                assert set(words) == {min(body, key=len)}
            else:
                assert words[:8] == body[:4] * 2
