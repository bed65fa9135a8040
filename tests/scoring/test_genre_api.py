"""`genre=` in the Python API: `rerank` and `explain_texts` score with the bundle's head for that
genre (`FluencyScorer.for_genre`), "general" is the same as no genre, and a genre the bundle has
no head for raises `GenreError` saying why, with the genres it has.

Run over `heads` (the shipped default with heads added to its card: `tests/genre_bundles.py`)
and every shipped bundle, over each of its genres (`scorer.genres`): the shipped cards' own
heads are tested here as soon as they ship."""

from __future__ import annotations

import inspect
import math

import pytest
from genre_bundles import NOT_SHIPPED, shipped_bundles, with_heads

from features.resources import MODELS_DIR
from scorer import GenreError
from scorer.explain import as_dict, explain_texts
from scorer.head_features import reads_head_features_only
from scorer.rerank import rerank
from scorer.scoring import FluencyScorer, load_scorer

REFERENCE = "The company said profits rose in the first quarter."
TEXTS = [
    "The company said profits rose in the first quarter. Its shares fell all the same.",
    "The company said profits rose the in first quarter.",
    "quarter rose The profits first company the said in.",
]
_LOADED: dict[str, FluencyScorer] = {}


@pytest.fixture(scope="module")
def heads(tmp_path_factory) -> FluencyScorer:
    root = tmp_path_factory.mktemp("genre-api")
    with_heads(MODELS_DIR / "default", root / "heads", "heads")
    return load_scorer("heads", models_dir=root)


@pytest.fixture(params=[pytest.param("heads", id="heads"), *shipped_bundles()])
def bundle(request, heads) -> FluencyScorer:
    if request.param == "heads":
        return heads
    if request.param not in _LOADED:
        _LOADED[request.param] = load_scorer(request.param)
    return _LOADED[request.param]


def _fluency(ranked) -> list[float]:
    return [r.fluency for r in sorted(ranked, key=lambda r: r.index)]


def test_rerank_scores_with_the_head_of_the_genre(bundle):
    for genre in bundle.genres:
        expected = [s.score for s in bundle.for_genre(genre).score_texts(TEXTS)]
        assert _fluency(rerank(bundle, TEXTS, genre=genre)) == pytest.approx(expected, abs=1e-9)
        # With references the candidates are parsed in one batch with them: the last bits move.
        ranked = rerank(bundle, TEXTS, [REFERENCE], genre=genre)
        assert _fluency(ranked) == pytest.approx(expected, abs=1e-5), genre
    if "general" in bundle.genres:
        assert rerank(bundle, TEXTS, genre="general") == rerank(bundle, TEXTS)


def test_explanations_score_with_the_head_and_add_up_to_its_score(bundle):
    for genre in bundle.genres:
        explained = explain_texts(bundle, TEXTS, genre=genre)
        head = bundle.for_genre(genre)
        expected = head.score_texts(TEXTS)
        # A head reading only SmolLM2's states is served by the cut pass, no GLEU stage run
        # (scorer/head_features.py); an explanation runs the GLEU stage all the same.
        cut = reads_head_features_only(head, head.aggregate_for())
        for e, s in zip(explained, expected, strict=True):
            assert e.fluency == pytest.approx(s.score, abs=1e-9), genre
            if cut:
                assert math.isnan(s.gleu) and math.isfinite(e.gleu), genre
            else:
                assert e.gleu == pytest.approx(s.gleu, abs=1e-9)
            c = as_dict(e, top=len(e.contributions.features))["contributions"]
            total = c["intercept"] + sum(f["contribution"] for f in c["features"])
            total += c["rest"] + c["residual"]
            onto = e.fluency if e.explains == "fluency" else e.gleu
            assert total == pytest.approx(onto, abs=1e-6), genre
    if "general" in bundle.genres:
        assert explain_texts(bundle, TEXTS, genre="general") == explain_texts(bundle, TEXTS)


def test_the_heads_written_here_differ_from_the_general_one(heads):
    assert heads.genres == ["general", "mt", "dialogue"]
    general = _fluency(rerank(heads, TEXTS))
    for genre in ("mt", "dialogue"):
        for a, b in zip(_fluency(rerank(heads, TEXTS, genre=genre)), general, strict=True):
            assert abs(a - b) > 1e-6, genre
        assert all(e.explains == "fluency" for e in explain_texts(heads, TEXTS, genre=genre))


@pytest.mark.parametrize(
    ("genre", "why"),
    [("poetry", "not a genre this project knows"), ("summaries", NOT_SHIPPED)],
)
def test_a_genre_without_a_head_raises_saying_why(heads, genre, why):
    for call in (
        lambda: rerank(heads, TEXTS, genre=genre),
        lambda: explain_texts(heads, TEXTS, genre=genre),
    ):
        with pytest.raises(GenreError) as raised:
            call()
        exc = raised.value
        assert (exc.model, exc.genre, exc.genres) == ("heads", genre, heads.genres)
        assert f"{genre!r}" in str(exc) and why in str(exc)


def _takes_genre(method) -> bool:
    return "genre" in inspect.signature(method).parameters


@pytest.mark.skipif(
    not _takes_genre(FluencyScorer.score),
    reason="FluencyScorer.score, score_texts and score_detailed take no genre= yet",
)
def test_the_scorers_own_methods_take_a_genre(bundle):
    for genre in bundle.genres:
        head = bundle.for_genre(genre)
        expected = [s.score for s in head.score_texts(TEXTS)]
        assert bundle.score(TEXTS, genre=genre) == pytest.approx(expected, abs=1e-9)
        got = bundle.score_texts(TEXTS, genre=genre)
        assert [s.score for s in got] == pytest.approx(expected, abs=1e-9)
        detailed = bundle.score_detailed(TEXTS, genre=genre)
        assert [s.score for s in detailed] == pytest.approx(expected, abs=1e-9)
    if "general" in bundle.genres:
        assert bundle.score(TEXTS, genre="general") == bundle.score(TEXTS)
