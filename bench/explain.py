"""What explaining costs against scoring: n-best lists of 10 candidates of ~20 words.

Each round makes a fresh list (a real sentence and 9 shuffles of it, as bench/http.py sends,
so no parse is shared between rounds), then times `FluencyScorer.score_texts` on it and
`explain_texts` on another fresh list, alternating which goes first; the feature cache is off.
It prints the median seconds per list of each and their ratio (explain / score).

Usage: python bench/explain.py [--rounds 20] [--candidates 10] [--model models/default]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

# bench/ holds http.py, whose name would hide the standard library's `http`: take bench/ off
# the path, import helpers as `bench._data`.
HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
sys.path.insert(0, str(HERE.parent))

from bench._data import sentences
from scorer.explain import explain_texts
from scorer.scoring import load_scorer


def nbest(base: str, n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    words, out = base.split(), [base]
    while len(out) < n:
        out.append(" ".join(rng.sample(words, len(words))))
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="models/default")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--candidates", type=int, default=10)
    args = parser.parse_args(argv)

    scorer = load_scorer(args.model, cache_size=0)
    pool = sentences(2 * args.rounds + 2, seed=3)
    # Warm-up: every parser and the LM loaded, torch's first pass done.
    explain_texts(scorer, nbest(pool[-1], args.candidates, 0))
    scorer.score_texts(nbest(pool[-2], args.candidates, 0))

    timings: dict[str, list[float]] = {"score": [], "explain": []}
    jobs = {
        "score": lambda texts: scorer.score_texts(texts),
        "explain": lambda texts: explain_texts(scorer, texts),
    }
    for r in range(args.rounds):
        order = ["score", "explain"] if r % 2 == 0 else ["explain", "score"]
        for k, name in enumerate(order):
            texts = nbest(pool[2 * r + k], args.candidates, seed=r)
            start = time.perf_counter()
            jobs[name](texts)
            timings[name].append(time.perf_counter() - start)

    n_words = statistics.mean(len(s.split()) for s in pool[: 2 * args.rounds])
    score, explain = (statistics.median(timings[k]) for k in ("score", "explain"))
    print(
        f"{args.rounds} rounds, {args.candidates} candidates x ~{n_words:.0f} words, "
        f"model {scorer.name}, feature cache off"
    )
    print(f"score   median {score * 1000:8.1f} ms per list")
    print(f"explain median {explain * 1000:8.1f} ms per list")
    print(f"ratio explain/score {explain / score:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
