"""Every head each tier ships: each weight keeps the sign of its input's own correlation with
people on the files the head was fitted on, and held out it beats minus the length and the
tier's best single input on both means (or is that input). The bundle's heads_report.json
records what its choice measured; the test marked slow measures the signs again from the
development files."""

from __future__ import annotations

import math
import shlex

import numpy as np
import pytest

from features.resources import MODELS_DIR
from scorer.heads_report import read_heads_report
from scorer.readings import SAID_AGAIN
from scorer.scoring import load_scorer

TIERS = ("default", "fast", "full", "neural")


def _card(tier: str) -> dict:
    """The card as a bundle loads it: a learned head's weights joined from beside it."""
    from scorer.bundle import read_card

    return read_card(tier, MODELS_DIR)[1]


def _heads(card: dict) -> dict[str, dict]:
    assert "calibration" not in card  # every head is under `heads`, the general one too
    return card["heads"]


@pytest.mark.parametrize("tier", TIERS)
def test_every_head_keeps_each_inputs_own_sign(tier):
    """A few inputs combined: each keeps the sign it has alone. A learned head's hundreds of
    state columns (training/heads/learned/ridge.py) are one ridge, read as a whole: its card says
    how; one added to a starting head keeps that head's signs (training/heads/learned/residual.py),
    one averaged with SmolLM2's summed log-probability reads it as a fluent text's."""
    from scorer.contributions import group_of

    for name, head in _heads(_card(tier)).items():
        learned = any(group_of(c) for c in head["inputs"])
        signs = head.get("alone") or {}
        if learned:
            assert {"layer", "pooling", "alpha"} <= set(head["states"]), (tier, name)
            base = head["states"].get("base")
            if base:
                signs = dict(zip(base["inputs"], base["coef"], strict=True))
            if head["states"]["variant"] == "states + logprob":  # more likely, more fluent
                signs = {"neural.v2/logprob_sum": 1.0}
        for c, w in zip(head["inputs"], head["linear"]["coef"], strict=True):
            if c == SAID_AGAIN:  # a fixed weight, never fitted: what is said again costs
                assert w < 0, (tier, name, w)
            elif w != 0 and not group_of(c):
                assert np.sign(w) == np.sign(signs[c]), (tier, name, c, w)


@pytest.mark.parametrize("tier", TIERS)
def test_every_shipped_head_beats_length_and_its_best_input_held_out(tier):
    card = _card(tier)
    report = read_heads_report(MODELS_DIR / tier, card)
    for name in _heads(card):
        if "served" in report[name]:  # no head shipped: the GLEU stage serves, said-again safe
            assert report[name]["served"]["inputs"] == ["gleu"], (tier, name)
            assert report[name]["decision"].startswith("not shipped"), (tier, name)
            continue
        head, minus, best = report[name]["table"][:3]
        assert head["label"] == "head" and minus["label"] == "minus length"
        assert head["rho"] > minus["rho"], (tier, name)
        if head["tau"] is not None and minus["tau"] is not None:
            assert head["tau"] > minus["tau"], (tier, name)
        is_best = (
            best["label"].endswith(f"{report[name]['inputs'][0]} ({report[name]['reading']})")
            and len(report[name]["inputs"]) == 1
        )
        beats_best = head["rho"] > best["rho"] and (
            head["tau"] is None or best["tau"] is None or head["tau"] > best["tau"]
        )
        assert is_best or beats_best, (tier, name)
    for name, r in report.items():  # a genre without a head says why
        if name not in _heads(card):
            assert r["decision"].startswith("not shipped"), (tier, name)


@pytest.mark.parametrize("tier", TIERS)
def test_every_head_loads_and_scores_and_orders_real_text_above_its_scramble(tier):
    scorer = load_scorer(tier)
    texts = [
        "The bank cut its interest rates on Tuesday.",
        "rates The its Tuesday on cut interest bank.",
    ]
    assert scorer.genres[0] == "general"
    for genre in scorer.genres:
        real, scrambled = scorer.for_genre(genre).score(texts)
        assert math.isfinite(real) and math.isfinite(scrambled)
        assert real > scrambled, (tier, genre)


@pytest.mark.slow
@pytest.mark.shared
@pytest.mark.parametrize("tier", TIERS)
def test_the_recorded_signs_are_the_dev_files_own(tier, shared_dir):
    """Recompute each input's own correlation on the files each head was fitted on (the same
    sample of them, from the card's command), parsing what the row cache lacks."""
    from features.rows import default_cache_dir
    from scorer.contributions import group_of
    from scorer.evidence.genres import GENRES
    from training.heads.data.files import head_files
    from training.heads.metrics.figures import alone_rho

    card = _card(tier)
    scorer = load_scorer(tier)
    for name, head in _heads(card).items():
        if any(group_of(c) for c in head["inputs"]):  # a learned head: no per-input signs
            continue
        args = shlex.split(head["command"])
        opt = {a: args[i + 1] for i, a in enumerate(args[:-1]) if a.startswith("--")}
        paths = [shared_dir / "dev" / f"{f}.jsonl" for f in head["files"]]
        files = head_files(
            scorer,
            paths,
            GENRES,
            [head["aggregate"]],
            max_outputs=int(opt.get("--max-outputs", 1500)),
            max_words=int(opt.get("--max-words", 40000)),
            seed=int(opt.get("--seed", 12345)),
            cache_dir=default_cache_dir(),
            n_jobs=2,
        )
        for c, w in zip(head["inputs"], head["linear"]["coef"], strict=True):
            if w != 0 and c != SAID_AGAIN:
                rho = alone_rho(files, head["aggregate"], c)
                assert np.sign(w) == np.sign(rho), (tier, name, c, w, rho)


def test_a_bundle_and_genre_load_as_one_name_for_every_command_that_takes_a_model():
    default = load_scorer("default")
    texts = ["The bank cut its interest rates on Tuesday.", "The the bank bank cut."]
    for genre in default.heads:
        named = load_scorer(f"default:{genre}")
        assert named.name == f"default:{genre}" and named.genre == genre
        assert named.score(texts) == default.score(texts, genre=genre)
