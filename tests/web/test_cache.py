"""The feature cache: a repeated text is scored from its cached features, with no parse at all,
to exactly the score it gets without a cache; the cache is bounded and empties on reload."""

from __future__ import annotations

import pytest
from examples import shuffled

from scorer.scoring import load_scorer
from scorer.web import create_app

SENTENCES = [
    "The committee approved the new budget after a long debate on Monday.",
    "Shares of the company rose sharply when the results were published.",
    "She said that the bridge would reopen before the end of the month.",
    "Farmers expect a smaller harvest because the spring was unusually dry.",
]


def sentence(i: int) -> str:
    return SENTENCES[i]


def _texts(n: int) -> list[str]:
    # Shuffled without the full stop: a "." inside would make two sentences, two cache entries.
    return [sentence(i) for i in range(n)] + [shuffled(sentence(i).rstrip(".")) for i in range(n)]


def test_a_cached_text_is_not_parsed_again_and_scores_the_same(models_dir, monkeypatch):
    cached = load_scorer(models_dir / "tiny", models_dir=models_dir, cache_size=64)
    plain = load_scorer(models_dir / "tiny", models_dir=models_dir, cache_size=0)
    texts = _texts(3)
    first = cached.score_detailed(texts)
    assert len(cached.cache) == len(texts) and cached.cache.hits == 0
    assert len(plain.cache) == 0

    def no_parse(_texts):
        raise AssertionError("a cached text was parsed again")

    monkeypatch.setattr(cached, "annotate", no_parse)
    again = cached.score_detailed(texts)
    assert cached.cache.hits == len(texts)
    expected = plain.score_detailed(texts)
    for a, b, c in zip(first, again, expected, strict=True):
        assert a.score == b.score == c.score
        assert a.features == b.features == c.features
    # A caller changing the returned features must not change the cache.
    again[0].features.clear()
    assert cached.score_detailed(texts[:1])[0].features == first[0].features


def test_cache_mixes_hits_and_misses_in_input_order(models_dir):
    scorer = load_scorer(models_dir / "tiny", models_dir=models_dir, cache_size=64)
    plain = load_scorer(models_dir / "tiny", models_dir=models_dir)
    texts = _texts(4)
    scorer.score(texts[::2])  # half of them cached, interleaved with new ones below
    # The cached half was parsed in another batch: equal to the last bits OpenBLAS leaves
    # (features/parsing.py, `_matrix_ops`), far closer than any two of these texts' scores.
    assert scorer.score(texts) == pytest.approx(plain.score(texts), rel=1e-6, abs=1e-6)
    assert scorer.cache.hits == len(texts[::2])


def test_cache_is_bounded_least_recently_used_out(models_dir):
    scorer = load_scorer(models_dir / "tiny", models_dir=models_dir, cache_size=2)
    a, b, c = (sentence(i) for i in range(3))
    scorer.score([a, b])
    scorer.score([a])  # a is now the most recently used
    scorer.score([c])  # evicts b
    assert len(scorer.cache) == 2
    assert scorer.cache.get(a) is not None and scorer.cache.get(c) is not None
    assert scorer.cache.get(b) is None


@pytest.mark.parametrize("size", [0, 16])
def test_service_answers_the_same_with_and_without_the_cache(app_config, size):
    app = create_app({**app_config, "FEATURE_CACHE": size})
    client = app.test_client()
    body = {"candidates": _texts(3)}
    first = client.post("/v1/rerank", json=body).get_json()
    second = client.post("/v1/rerank", json=body).get_json()
    assert first == second
    scorer = app.extensions["fluency"].get().scorer
    assert len(scorer.cache) == (0 if size == 0 else min(size, len(body["candidates"]) + 1))
    # A reload loads a new scorer: its cache starts empty (then holds the warm-up sentence).
    app.extensions["fluency"].reload()
    assert len(app.extensions["fluency"].get().scorer.cache) == (0 if size == 0 else 1)
