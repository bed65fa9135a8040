"""Saying more never scores higher, on the shipped bundles: every head of every tier, as the
bundle serves it, scores held-out Reuters paragraphs at or above their said-again versions (a
sentence repeated, the text twice and four times, a sentence said 2, 4 and 8 times) for at least
95% of them. The default run checks the core tiers on 20 paragraphs; every tier on 200 is slow."""

from __future__ import annotations

import pytest

from scorer import load_scorer
from training.heads.data.said_again import KINDS
from training.heads.said_again_bundle import check_heads

CORE = ["default", "fast"]
EVERY = ["default", "fast", "full", "neural"]


def _corpus(shared_dir):
    return shared_dir / "corpora" / "reuters21578" / "test.txt"


def _check(tier: str, shared_dir, n: int) -> None:
    scorer = load_scorer(tier, cache_size=200_000)
    found = check_heads(scorer, _corpus(shared_dir), n=n, as_served=True)
    assert set(found) == set(scorer.genres)
    failing = {
        g: {k: v for k, v in c.shares.items() if v < 0.95} for g, c in found.items() if not c.passes
    }
    assert failing == {}, f"{tier}: heads scoring said-again versions above the text: {failing}"
    for c in found.values():
        assert set(c.shares) == set(KINDS)


@pytest.mark.shared
@pytest.mark.parametrize("tier", CORE)
def test_core_heads_never_score_a_text_said_again_above_it(tier, shared_dir):
    _check(tier, shared_dir, 20)


@pytest.mark.slow
@pytest.mark.shared
@pytest.mark.parametrize("tier", EVERY)
def test_every_head_on_200_paragraphs(tier, shared_dir):
    _check(tier, shared_dir, 200)
