"""Benchmark sentences (Reuters test sentences when ../shared is there, else made-up ones), and
the perturbed sentences and n-best lists made from them."""

from __future__ import annotations

import random
import re
import threading
from pathlib import Path

SHARED = Path(__file__).resolve().parent.parent.parent / "shared"
_WORDS = (
    "the market company shares said rose fell percent year quarter profit bank rates analysts "
    "expected government report new sales prices oil trade week group billion million dollar"
).split()


def sentences(n: int, *, min_words: int = 15, max_words: int = 25, seed: int = 1) -> list[str]:
    """`n` sentences of `min_words`..`max_words` whitespace words."""
    rng = random.Random(seed)
    path = SHARED / "corpora" / "reuters21578" / "test.txt"
    out: list[str] = []
    if path.is_file():
        for para in path.read_text(encoding="utf-8").splitlines():
            for sent in re.split(r"(?<=[.!?])\s+(?=[A-Z])", para.strip()):
                if min_words <= len(sent.split()) <= max_words:
                    out.append(sent)
        rng.shuffle(out)
    while len(out) < n:
        k = rng.randint(min_words, max_words)
        out.append(" ".join(rng.choice(_WORDS) for _ in range(k)).capitalize() + ".")
    return out[:n]


def perturb(sentence: str, rng: random.Random) -> str:
    """A generator-like error: one adjacent swap and one dropped word."""
    words = sentence.split()
    if len(words) > 3:
        i = rng.randrange(len(words) - 1)
        words[i], words[i + 1] = words[i + 1], words[i]
        del words[rng.randrange(len(words))]
    return " ".join(words)


def nbest(base: str, n: int, seed: int) -> list[str]:
    """An n-best list of `n` candidates: `base` and `n - 1` shuffles of its words."""
    rng = random.Random(seed)
    words, out = base.split(), [base]
    while len(out) < n:
        out.append(" ".join(rng.sample(words, len(words))))
    return out


class FreshLists:
    """A new n-best list for every call, as a `/v1/rerank` body: a real sentence and `n - 1`
    shuffles of it (the k-th call: sentence k of the pool, shuffled with seed k). Safe to call
    from several threads."""

    def __init__(self, n: int = 10, pool: int = 3000):
        self.n, self.pool, self.count = n, sentences(pool, seed=2), 0
        self.lock = threading.Lock()

    def __call__(self) -> dict:
        with self.lock:
            self.count += 1
            k = self.count
        return {"candidates": nbest(self.pool[k % len(self.pool)], self.n, seed=k)}
