"""Seconds per paired test: 10,000 AR shuffles / 1,000 bootstrap resamples of N rows.

Per-sentence score (one column, mean): 10,000 randomizations of 2,000 sentences should take
well under a second. BLEU (9 statistics per row, sacrebleu's score per trial) is
timed beside it, with sacrebleu's own AR test on the same rows as the baseline.
Usage: python -m bench.significance [--rows 2000] [--repeat 3]
"""

from __future__ import annotations

import random

import numpy as np

from bench._args import parser
from bench._data import perturb, sentences
from bench._timing import best_of
from features.accuracy import Bleu
from scorer.evidence.significance import (
    paired_approximate_randomization,
    paired_bootstrap,
    sacrebleu_paired,
)


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--rows", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--bleu-trials", type=int, default=1000, help="AR trials for the BLEU timing")
    args = ap.parse_args()
    rng = np.random.default_rng(12345)
    a = rng.normal(size=args.rows)
    b = a + rng.normal(scale=0.5, size=args.rows)
    rows = [
        (
            "sentence score, AR, 10000",
            lambda: paired_approximate_randomization(a, b, n_trials=10_000, seed=1),
        ),
        ("sentence score, bootstrap, 1000", lambda: paired_bootstrap(a, b, n_trials=1_000, seed=1)),
        (
            "sentence score, bootstrap, 10000",
            lambda: paired_bootstrap(a, b, n_trials=10_000, seed=1),
        ),
    ]
    refs = sentences(args.rows)
    prng = random.Random(1)
    hyp_a = [perturb(r, prng) for r in refs]
    hyp_b = [perturb(r, prng) for r in refs]
    ref_lists = [[r] for r in refs]
    bleu = Bleu()
    sa, sb = bleu.corpus_stats(hyp_a, ref_lists), bleu.corpus_stats(hyp_b, ref_lists)
    n = args.bleu_trials
    rows += [
        (
            f"BLEU rows, AR, {n}",
            lambda: paired_approximate_randomization(sa, sb, bleu.from_stats, n_trials=n, seed=1),
        ),
        (
            f"BLEU sacrebleu PairedTest, AR, {n}",
            lambda: sacrebleu_paired(hyp_a, hyp_b, ref_lists, n_trials=n, seed=1),
        ),
    ]
    print(f"rows {args.rows}; best of {args.repeat}; numpy {np.__version__}")
    for name, fn in rows:
        print(f"{name:40s} {best_of(fn, args.repeat):8.3f} s")


if __name__ == "__main__":
    main()
