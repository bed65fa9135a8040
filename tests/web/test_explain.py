"""Explanations: spans where the features react, and contributions that add up to the score.

The spans and sums are checked on the shipped models/full (every extractor, a linear
RankSVM); the service's answers on the small model the web fixtures train (conftest.py)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.feature_extraction import DictVectorizer
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from web.support import REAL, assert_problem

from features.extract import extract
from scorer.contributions import contributions
from scorer.explain import KINDS, explain_texts
from scorer.heads import Head
from scorer.scoring import load_scorer

MISPLACED = "The company said profits rose the in first quarter."
CORRECT = "The company said profits rose in the first quarter."
SALAD = "quarter rose The profits first company the said in."
AWKWARD = [
    MISPLACED,
    CORRECT,
    SALAD,
    "  X is a  restaurant in the X area. It serves 🙂 ★ food food.",  # placeholders, emoji
    "Café naïve 👍🏽 the the coöperation said X.",  # combining marks, a skin-tone modifier
    "Prices rose. Prices rose. Then they fell\tagain!",  # several sentences, a tab
    "The company  said   profits rose the in first \n quarter .",  # runs of spaces: space tokens
]


@pytest.fixture(scope="module")
def default():
    return load_scorer("full")


def _covered(text: str, spans, kinds=None) -> set[int]:
    return {i for s in spans if kinds is None or s.kind in kinds for i in range(s.start, s.end)}


@pytest.mark.parametrize("locate", [False, True])
def test_the_misplaced_words_are_marked_and_a_correct_sentence_has_no_null_word(default, locate):
    wrong, right = explain_texts(default, [MISPLACED, CORRECT], locate_nulls=locate)
    start = MISPLACED.index("the in")
    the, in_ = set(range(start, start + 3)), set(range(start + 4, start + 6))
    null_words = _covered(MISPLACED, wrong.spans, {"link_grammar_null"})
    assert the <= null_words, wrong.spans  # Link Grammar must skip the misplaced "the"
    assert the | in_ <= _covered(MISPLACED, wrong.spans), wrong.spans
    if locate:  # the words themselves, not the whole sentence
        assert len(null_words) < len(MISPLACED) / 2, wrong.spans
    else:  # more than one null word is needed: the whole sentence, saying so
        (span,) = [s for s in wrong.spans if s.kind == "link_grammar_null"]
        assert (span.start, span.end) == (0, len(MISPLACED))
        assert "at most one word" in span.detail
    assert not [s for s in right.spans if s.kind == "link_grammar_null"], right.spans
    assert wrong.fluency < right.fluency


@pytest.mark.parametrize("aggregate", [None, "whole", "weighted", "mean", "min"])
def test_scores_are_the_scorers_and_linear_contributions_sum_to_them(default, aggregate):
    explained = explain_texts(default, AWKWARD, aggregate=aggregate)
    scored = default.score_texts(AWKWARD, aggregate=aggregate)
    for e, s in zip(explained, scored, strict=True):
        c = e.contributions
        assert e.fluency == pytest.approx(s.score, abs=1e-9)
        assert e.gleu == pytest.approx(s.gleu, abs=1e-9)
        assert e.n_sentences == s.n_sentences
        # The shipped bundles' second stage is linear: the contributions are read back through
        # both stages onto the fluency served, and add up to it, under every reading.
        assert e.explains == "fluency" and (c.method, c.exact) == ("linear", True)
        total = c.intercept + sum(x.contribution for x in c.features)
        assert total == pytest.approx(e.fluency, abs=1e-6)
        assert abs(c.residual) < 1e-6
        # every GLEU feature, and what the head reads beside the GLEU score (what is said again)
        names = [x.feature for x in c.features]
        columns = set(default.card["feature_columns"])
        assert len(names) == len(set(names)) and columns <= set(names)
        assert set(names) - columns <= set(default.head.inputs)
        sizes = [abs(x.contribution) for x in c.features]
        assert sizes == sorted(sizes, reverse=True)


def test_a_head_gives_its_fluency_and_explains_it(default, monkeypatch):
    monkeypatch.setattr(default, "head", Head(("gleu",), [2.0], 1.0))  # 2 x GLEU + 1
    (e,) = explain_texts(default, [MISPLACED])
    (s,) = default.score_texts([MISPLACED])
    assert e.fluency == pytest.approx(s.score) and e.gleu == pytest.approx(s.gleu)
    assert e.fluency == pytest.approx(2 * e.gleu + 1)
    c = e.contributions
    total = c.intercept + sum(x.contribution for x in c.features) + c.residual
    assert total == pytest.approx(e.fluency)


def test_rows_are_what_extract_gives(default):
    """The explanation's own pass over the extractors yields the very rows scoring uses."""
    from scorer.explain import _rows_and_details

    parsed = default.annotate(AWKWARD)
    rows, details, _ = _rows_and_details(default, parsed)
    expected = extract(parsed, default.pipeline.named_steps["extract"].features_, default.resources)
    assert rows == expected
    assert set(details) == {"linkgrammar.v5", "constituency.v1", "lm.v1"}


def test_offsets_point_into_the_text_as_sent(default):
    explained = explain_texts(default, AWKWARD, aggregate="whole") + explain_texts(
        default, AWKWARD, aggregate="weighted", locate_nulls=True
    )
    for e in explained:
        for s in e.spans:
            assert 0 <= s.start < s.end <= len(e.text), s
            assert s.kind in KINDS and s.detail
            piece = e.text[s.start : s.end]
            assert piece == piece.strip() and "Smith" not in piece, (e.text, s)
    placeholders, unicode = explained[3], explained[4]
    marked = {(placeholders.text[s.start : s.end], s.kind) for s in placeholders.spans}
    assert ("🙂 ★", "symbol_debris") in marked
    assert ("food food", "repeated_ngram") in marked
    marked = {(unicode.text[s.start : s.end], s.kind) for s in unicode.spans}
    assert ("👍🏽", "symbol_debris") in marked
    assert ("the the", "repeated_ngram") in marked


def test_a_placeholder_in_a_span_maps_back_to_itself(default):
    (e,) = explain_texts(default, ["X X is a restaurant in the city centre."])
    repeats = [e.text[s.start : s.end] for s in e.spans if s.kind == "repeated_ngram"]
    assert repeats == ["X X"]


def test_a_second_sentence_is_explained_where_it_is(default):
    text = "The company said profits rose. The the dog barked loudly."
    (whole,) = explain_texts(default, [text], aggregate="whole")
    (split,) = explain_texts(default, [text], aggregate="weighted")
    second = text.index("The the")
    for e in (whole, split):
        repeats = [s for s in e.spans if s.kind == "repeated_ngram"]
        assert [(s.start, s.end) for s in repeats] == [(second, second + len("The the"))]
    assert split.n_sentences == 2 and whole.n_sentences == 1


def _toy_rows(n: int, seed: int) -> tuple[list[dict[str, float]], np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = (X[:, 0] * X[:, 1] + X[:, 2] > 0).astype(int)
    return [{"f/a": a, "f/b": b, "f/c": c} for a, b, c in X], y


@pytest.mark.parametrize("aggregate", ["whole", "weighted"])
def test_a_linear_second_stage_is_explained_onto_the_fluency_it_serves(aggregate):
    # models/data-to-text: the GLEU stage, then a linear ranker over its score and features.
    # The contributions are read back through both stages and add up to the served fluency;
    # each feature's share carries what it adds through GLEU and what it adds directly.
    from scorer.scoring import load_scorer

    bundle = load_scorer("data-to-text")
    explained = explain_texts(bundle, AWKWARD, aggregate=aggregate)
    scored = bundle.score_texts(AWKWARD, aggregate=aggregate)
    for e, s in zip(explained, scored, strict=True):
        c = e.contributions
        assert e.explains == "fluency" and e.fluency == pytest.approx(s.score, abs=1e-9)
        assert e.gleu == pytest.approx(s.gleu, abs=1e-9) and abs(e.gleu - e.fluency) > 1e-3
        total = c.intercept + sum(x.contribution for x in c.features) + c.residual
        assert total == pytest.approx(e.fluency, abs=1e-6)
        assert (c.method, c.exact) == ("linear", True)


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_contributions_say_whether_they_are_exact(kernel):
    rows, y = _toy_rows(80, seed=5)
    model = Pipeline(
        [
            ("vectorize", DictVectorizer(sparse=False)),
            ("scale", StandardScaler()),
            ("svm", SVC(kernel=kernel, random_state=5)),
        ]
    ).fit(rows, y)
    scores = model.decision_function(rows[:5])
    for c, score in zip(contributions(model, rows[:5]), scores, strict=True):
        total = c.intercept + sum(x.contribution for x in c.features) + c.residual
        assert total == pytest.approx(score, abs=1e-9)
        if kernel == "linear":
            assert (c.method, c.exact) == ("linear", True) and abs(c.residual) < 1e-9
        else:
            assert (c.method, c.exact) == ("occlusion", False)


def test_the_service_explains_with_its_scores(client):
    texts = [REAL, "factory the old the old of site.", "Homes 🙂 ★ ★."]
    body = {"sentences": texts, "top": 3, "locate_nulls": True}
    explained = client.post("/v1/explain", json=body).get_json()
    scored = client.post("/v1/score", json={"sentences": texts}).get_json()
    assert explained["model"] == scored["model"]
    assert explained["lm_threshold"]["value"] < 0 and explained["typical"]
    for e, s in zip(explained["explanations"], scored["scores"], strict=True):
        assert e["index"] == s["index"]
        assert e["fluency"] == pytest.approx(s["fluency"], abs=1e-9)
        c = e["contributions"]
        assert len(c["features"]) == 3
        total = c["intercept"] + sum(f["contribution"] for f in c["features"]) + c["rest"]
        assert total + c["residual"] == pytest.approx(e["gleu"], abs=1e-6)
    kinds = {s["kind"] for s in explained["explanations"][2]["spans"]}
    assert "symbol_debris" in kinds


@pytest.mark.parametrize(
    ("body", "status", "slug", "words"),
    [
        ({}, 400, "invalid-body", "sentences"),
        ({"sentences": "one"}, 400, "invalid-body", "sentences"),
        ({"sentences": [REAL], "top": "3"}, 400, "invalid-body", "top"),
        ({"sentences": [REAL], "locate_nulls": 1}, 400, "invalid-body", "locate_nulls"),
        ({"sentences": [REAL], "top": 0}, 422, "unsupported-input", "top"),
        ({"sentences": [REAL], "why": 1}, 400, "invalid-body", "why"),
        ({"sentences": []}, 422, "unsupported-input", "empty"),
        ({"sentences": [REAL] * 13}, 422, "unsupported-input", "at most 12"),
        ({"sentences": ["word " * 70]}, 422, "unsupported-input", "at most 300"),
    ],
)
def test_bad_requests_say_what_is_wrong(client, body, status, slug, words):
    problem = assert_problem(client.post("/v1/explain", json=body), status, slug)
    assert words in problem["detail"]
