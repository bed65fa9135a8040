"""The shipped models/default and models/full, loaded as the service loads them, on behaviours
their training aimed at: real text above its shuffle, stubs and punctuation-only text at the
bottom, a repeated run of words below the sentence without it. Needs nothing from ../shared
(every artefact ships)."""

from __future__ import annotations

import sys

import joblib
import pytest
from examples import shuffled
from sklearn.pipeline import Pipeline

from features.resources import MODELS_DIR
from scorer.model import MODEL_FILE, load_model
from scorer.scoring import load_scorer

REAL = (
    "The company said its profit rose sharply in the first quarter.",
    "Shares of the bank fell after it reported a loss.",
    "The government expects inflation to slow next year.",
    "Analysts said the agreement would strengthen the dollar.",
    "The board approved a new dividend of ten cents a share.",
)
REPEATED = (
    "The company said its profit rose sharply sharply in the first quarter.",
    "Shares of the bank fell after it reported after it reported a loss.",
    "The government expects inflation to slow to slow next year.",
    "Analysts said the agreement would strengthen the dollar the dollar.",
    "The board approved a new dividend of ten cents of ten cents a share.",
)


@pytest.fixture(scope="module", params=["default", "full"])
def default(request):
    return load_scorer(request.param)


def test_the_shipped_model_ranks_real_sentences_above_their_shuffles(default):
    real = default.score(list(REAL))
    scrambled = default.score([shuffled(t, i) for i, t in enumerate(REAL)])
    assert all(r > s for r, s in zip(real, scrambled, strict=True))
    # Real text reads as real at the GLEU stage's own threshold (gleu > 0: Mutton et al.'s
    # reading); the default's fluency is on people's scale instead, where > 0 means above the
    # average rated output, which real news sentences are too.
    assert sum(s.gleu > 0 for s in default.score_texts(list(REAL))) >= 4
    assert sum(r > 0 for r in real) >= 4


def test_stubs_and_symbols_score_below_every_real_sentence(default):
    # WebNLG 2017 systems emitted "null" 168 times: a stub must not read as fluent text.
    low = default.score(["null", ". . .", "the dollar", "?!"])
    assert max(low) < min(default.score(list(REAL)))


def test_a_repeated_run_of_words_lowers_the_score(default):
    real, repeated = default.score(list(REAL)), default.score(list(REPEATED))
    assert all(r > p for r, p in zip(real, repeated, strict=True))


def test_symbol_and_emoji_debris_scores_below_every_real_sentence(default):
    # Debris must not pass for text (surface.v2's junk_ratio and the "garbage" negatives are
    # there for it), while numbers and currency signs must not be taken for debris.
    debris = ["🙂 ★ ☃ ∑", "😀😀😀 ∑∫∂ ★★★", "The company ★ said its profit ☃ rose."]
    assert max(default.score(debris)) < min(default.score(list(REAL)))
    # On the GLEU stage's scale (distances to the SVM's hyperplane), as the margins were set.
    gleu = [s.gleu for s in default.score_texts(debris)]
    money = ["Prices rose 5% to $10.", "Prices rose to ten dollars."]
    prices, plain = (s.gleu for s in default.score_texts(money))
    assert prices > min(gleu) + 5
    assert prices > plain - 1.0


def test_a_delexicalised_placeholder_is_scored_as_the_name_it_stands_for():
    # BAGEL's outputs write every slot value as "X"; Link Grammar reads "the X area" only with
    # a null word, so read literally such outputs score as disfluent (features/placeholders.py).
    delex = ["X is a restaurant in the X area .", "X is an italian restaurant near X ."]
    named = [t.replace("X", "Smith") for t in delex]
    filled = load_scorer("default", placeholders=("X",))
    raw = load_scorer("default", placeholders=())
    scores = filled.score_texts(delex, with_features=True)
    assert [s.text for s in scores] == delex  # the caller's text comes back as sent
    assert [s.score for s in scores] == filled.score(named)
    assert scores[0].features["linkgrammar.v5/full_parse"] == 1.0
    assert (
        raw.score_texts(delex[:1], with_features=True)[0].features["linkgrammar.v5/full_parse"]
        == 0.0
    )
    assert scores[0].score > raw.score(delex[:1])[0]


# What a bundle may name when unpickled: libraries whose classes sklearn models are made of, and
# our estimator classes. A module of `features` named here would tie the bundle to where an
# extractor's code lives; the extractor keeps names and looks them up in the registry.
ALLOWED_MODULES = ("sklearn", "numpy", "scipy", "joblib", "builtins", "copyreg", "_codecs")
ALLOWED_EXACT = ("scorer.model",)


class ForeignGlobalError(Exception):
    pass


def test_the_shipped_bundle_pickles_only_data_and_stable_classes():
    named: list[tuple[str, str]] = []
    watching = [True]

    def refuse_foreign(event, args):
        # An audit hook cannot be removed: it stays inert once the load below has run.
        if event != "pickle.find_class" or not watching[0]:
            return
        module, name = args
        named.append((module, name))
        if module not in ALLOWED_EXACT and module.split(".")[0] not in ALLOWED_MODULES:
            # Raised before the unpickler imports the module, so nothing foreign runs.
            raise ForeignGlobalError(f"{module}.{name}")

    sys.addaudithook(refuse_foreign)
    try:
        joblib.load(MODELS_DIR / "default" / MODEL_FILE)
    finally:
        watching[0] = False
    assert ("scorer.model", "FeatureExtractor") in named  # the hook did see the load
    pipeline, card = load_model("default", MODELS_DIR)
    assert isinstance(pipeline, Pipeline)
    assert pipeline.named_steps["extract"].features_ == tuple(card["features"])
