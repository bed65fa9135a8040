"""The said-again check: saying more never scores higher.

A reranker exists to demote the candidate a generator got stuck on, and a stuck generator says
things again: a sentence repeated right after itself, a paragraph said over, one sentence said
again and again. Every head must score such a text at or below the text said once, whatever
people's ratings of system output reward (few rated outputs repeat themselves).

From held-out real text (paragraphs of 2-4 consecutive sentences of Reuters test, one paragraph
a line, no sentence the GLEU stage was trained on), for each paragraph (`versions`):

- "sentence said again": one of its sentences repeated right after itself;
- "text twice" and "text four times": the paragraph said whole, two and four times;
- "sentence x2", "x4", "x8": one of its sentences alone, then said 2, 4 and 8 times.

A head passes where every kind scores at or below its original for at least `floor` of the
paragraphs (`SaidAgain.shares`). A head whose reading lets a repetition through (a token-weighted
mean rises when its better sentence is said again; a language model's states favour what it has
just read) carries a fixed negative weight on what the text says again (`scorer.readings.
SAID_AGAIN`, `features.redundancy`): the smallest that passes, with a margin, on paragraphs
kept apart from the check's own (`SaidAgain.penalty`), at most `MAX_PENALTY`. A head that needs
more (a sum over sentences of positive scores grows with every sentence) fails the check.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from scorer.readings import SAID_AGAIN

__all__ = ["KINDS", "MAX_PENALTY", "SaidAgain", "paragraphs", "said_again_check", "versions"]

KINDS = (
    "sentence said again",
    "text twice",
    "text four times",
    "sentence x2",
    "sentence x4",
    "sentence x8",
)
# The largest weight on the share of a text said again (in the head's units, standard deviations
# of people's ratings): a text said twice (share about one half) loses at most one.
MAX_PENALTY = 2.0
TIE = 1e-9  # "at or below": a version scoring the same as its original passes

Columns = Mapping[str, Mapping[str, np.ndarray]]  # {reading: {input: one value a text}}
Scores = Callable[[Columns], np.ndarray]  # a head's scores of texts from their columns


def paragraphs(corpus: str | Path, *, n: int, seed: int = 12345) -> list[list[str]]:
    """`n` paragraphs of 2-4 consecutive sentences of 5-40 words from `corpus` (one paragraph
    a line), each cut from a line at random, drawn with `seed`."""
    from features.segment import split_sentences

    rng = random.Random(seed)
    found = []
    with open(corpus, encoding="utf-8") as fh:
        for line in fh:
            line = line.strip()
            if not line:
                continue
            sentences = [s for s, _ in split_sentences(line)]
            ok = [5 <= len(s.split()) <= 40 and s[-1:] in ".!?" for s in sentences]
            size = rng.randint(2, 4)
            starts = [i for i in range(len(sentences) - size + 1) if all(ok[i : i + size])]
            if starts:
                i = rng.choice(starts)
                found.append(sentences[i : i + size])
            if len(found) >= 5 * n:
                break
    return rng.sample(found, min(n, len(found)))


def versions(paras: Sequence[Sequence[str]], *, seed: int = 12345) -> dict[str, tuple[list, list]]:
    """{kind: (originals, versions)}, one pair a paragraph, for each of `KINDS`."""
    rng = random.Random(seed)
    out: dict[str, tuple[list, list]] = {k: ([], []) for k in KINDS}

    def add(kind: str, original: str, version: str) -> None:
        out[kind][0].append(original)
        out[kind][1].append(version)

    for para in paras:
        text = " ".join(para)
        k = rng.randrange(len(para))
        add("sentence said again", text, " ".join([*para[: k + 1], para[k], *para[k + 1 :]]))
        add("text twice", text, " ".join([text] * 2))
        add("text four times", text, " ".join([text] * 4))
        one = para[rng.randrange(len(para))]
        for times in (2, 4, 8):
            add(f"sentence x{times}", one, " ".join([one] * times))
    return out


@dataclass(frozen=True)
class SaidAgain:
    """The check's texts as columns: {kind: (originals' columns, versions' columns)} for the
    paragraphs the weight is chosen on (`choosing`) and those the check is made on (`held`)."""

    choosing: Mapping[str, tuple[Columns, Columns]]
    held: Mapping[str, tuple[Columns, Columns]]
    floor: float = 0.95

    @property
    def choosing_share(self) -> float:
        """The share the weight is chosen to hold on the choosing paragraphs: halfway from
        `floor` to all of them, so that it holds `floor` on paragraphs it never saw (chosen at
        `floor` itself, a weight passes them about half the time)."""
        return (1.0 + self.floor) / 2

    def penalty(self, scores: Scores, reading: str) -> float:
        """The smallest weight on the share said again under which every kind of the choosing
        paragraphs scores at or below its original for `choosing_share` of them (0 where none
        is needed, inf where no weight does it)."""
        need = 0.0
        for original, version in self.choosing.values():
            gap = scores(version) - scores(original)
            more = version[reading][SAID_AGAIN] - original[reading][SAID_AGAIN]
            with np.errstate(divide="ignore", invalid="ignore"):
                each = np.where(gap <= TIE, 0.0, np.where(more > 0, gap / more, np.inf))
            k = max(math.ceil(self.choosing_share * len(each)) - 1, 0)
            need = max(need, float(np.sort(each)[k]))
        return need

    def shares(self, scores: Scores, reading: str, weight: float) -> dict[str, float]:
        """{kind: the share of the held paragraphs whose version scores at or below its
        original}, `weight` on the share said again taken off every score."""
        out = {}
        for kind, (original, version) in self.held.items():
            a = scores(original) - weight * original[reading][SAID_AGAIN]
            b = scores(version) - weight * version[reading][SAID_AGAIN]
            out[kind] = float(np.mean(b <= a + TIE))
        return out

    def passes(self, shares: Mapping[str, float], weight: float) -> bool:
        return weight <= MAX_PENALTY and all(v >= self.floor for v in shares.values())


def said_again_check(
    columns: Callable[[Sequence[str]], Columns],
    corpus: str | Path,
    *,
    n: int = 200,
    seed: int = 12345,
    floor: float = 0.95,
) -> SaidAgain:
    """The check on `n` paragraphs of `corpus`, its weight chosen on `n` others: `columns`
    turns texts into columns per reading (`training.heads.data.files.text_columns`)."""
    paras = paragraphs(corpus, n=2 * n, seed=seed)
    rng = random.Random(seed + 1)
    rng.shuffle(paras)
    sets = [versions(paras[:n], seed=seed), versions(paras[n:], seed=seed + 1)]
    texts = [t for made in sets for a, b in made.values() for t in (*a, *b)]
    cols = columns(texts)
    at = 0

    def take(size: int) -> Columns:
        nonlocal at
        part = {r: {k: v[at : at + size] for k, v in c.items()} for r, c in cols.items()}
        at += size
        return part

    held, choosing = (
        {kind: (take(len(a)), take(len(b))) for kind, (a, b) in made.items()} for made in sets
    )
    return SaidAgain(choosing, held, floor)
