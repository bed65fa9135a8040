"""What explaining costs against scoring: n-best lists of 10 candidates of ~20 words.

Each round makes a fresh list (a real sentence and 9 shuffles of it, as bench/load.py sends),
then times `FluencyScorer.score_texts`, `explain_texts` and `explain_texts(locate_nulls=True)`
on that same list, in an order that rotates from round to round. Nothing is kept between the
calls (the feature cache is off; spaCy, Link Grammar and benepar keep no parse), so each parses
the list anew, and the three see the same texts. Torch runs one thread. It prints the median
time per list of each, wall clock and this process's CPU time, and their ratios to scoring. On a
machine others are using, the CPU time is the fair comparison: the wall clock then measures
the neighbours as much as the work.

Usage: python -m bench.explain [--rounds 20] [--candidates 10] [--model models/default]
"""

from __future__ import annotations

import statistics
import sys
import time

from bench._args import add_model, parser
from bench._data import nbest, sentences
from features.resources import one_thread_per_process
from scorer.explain import explain_texts
from scorer.scoring import load_scorer


def main(argv=None) -> int:
    ap = parser(__doc__)
    add_model(ap, "models/default")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--candidates", type=int, default=10)
    args = ap.parse_args(argv)

    one_thread_per_process()
    scorer = load_scorer(args.model, cache_size=0)
    pool = sentences(args.rounds + 2, seed=3)
    # Warm-up: every parser and the LM loaded, torch's first pass done.
    explain_texts(scorer, nbest(pool[-1], args.candidates, 0))
    scorer.score_texts(nbest(pool[-2], args.candidates, 0))

    jobs = {
        "score": lambda texts: scorer.score_texts(texts),
        "explain": lambda texts: explain_texts(scorer, texts),
        "explain, locate_nulls": lambda texts: explain_texts(scorer, texts, locate_nulls=True),
    }
    wall: dict[str, list[float]] = {name: [] for name in jobs}
    cpu: dict[str, list[float]] = {name: [] for name in jobs}
    names = list(jobs)
    for r in range(args.rounds):
        order = names[r % 3 :] + names[: r % 3]
        texts = nbest(pool[r], args.candidates, seed=r)
        for name in order:
            start, start_cpu = time.perf_counter(), time.process_time()
            jobs[name](texts)
            wall[name].append(time.perf_counter() - start)
            cpu[name].append(time.process_time() - start_cpu)

    n_words = statistics.mean(len(s.split()) for s in pool[: args.rounds])
    print(
        f"{args.rounds} rounds, {args.candidates} candidates x ~{n_words:.0f} words, "
        f"model {scorer.name}, feature cache off"
    )
    medians = {name: (statistics.median(wall[name]), statistics.median(cpu[name])) for name in jobs}
    score_wall, score_cpu = medians["score"]
    for name, (w, c) in medians.items():
        print(
            f"{name:22} median wall {w * 1000:7.1f} ms ({w / score_wall:.2f} x score), "
            f"cpu {c * 1000:7.1f} ms ({c / score_cpu:.2f} x score) per list"
        )
    w, c = medians["explain"]
    print(f"ratio explain/score: cpu {c / score_cpu:.2f}, wall {w / score_wall:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
