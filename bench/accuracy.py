"""Hypothesis-reference pairs per second for every accuracy metric together, parsing included.

Baseline in the same run: sacrebleu's BLEU alone (sentence BLEU for every pair, then corpus BLEU).
Usage: python -m bench.accuracy [--pairs 2000] [--jobs 2]
"""

from __future__ import annotations

import random
import time

import sacrebleu

from bench._args import add_jobs, parser
from bench._data import perturb, sentences
from features.accuracy import score_accuracy
from features.parsing import load_nlp


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--pairs", type=int, default=2000)
    add_jobs(ap, 2, help="spaCy processes")
    args = ap.parse_args()
    rng = random.Random(12345)
    refs = sentences(args.pairs)
    hyps = [perturb(r, rng) for r in refs]
    n_words = sum(len(r.split()) for r in refs) / len(refs)
    load_nlp()  # model loading is start-up cost, not per-pair cost

    t0 = time.perf_counter()
    for h, r in zip(hyps, refs, strict=True):
        sacrebleu.sentence_bleu(h, [r])
    sacrebleu.corpus_bleu(hyps, [refs])
    t_bleu = time.perf_counter() - t0

    t0 = time.perf_counter()
    report = score_accuracy(hyps, [[r] for r in refs], n_process=args.jobs)
    t_all = time.perf_counter() - t0

    print(f"pairs: {len(refs)}, mean reference length {n_words:.1f} words, spaCy jobs {args.jobs}")
    print(f"{'what':<38}{'seconds':>9}{'pairs/s':>10}")
    print(f"{'sacrebleu BLEU alone (baseline)':<38}{t_bleu:>9.2f}{len(refs) / t_bleu:>10.0f}")
    print(f"{'all metrics, parsing included':<38}{t_all:>9.2f}{len(refs) / t_all:>10.0f}")
    print(f"ratio all/baseline time: {t_all / t_bleu:.1f}x")
    c = report.corpus
    print(
        f"corpus: BLEU {c['bleu']:.2f}  chrF {c['chrf']:.2f}  NIST {c['nist']:.2f}  "
        f"mean SSA {c['mean_simple_string_accuracy']:.3f}  mean GTA "
        f"{c['mean_generation_tree_accuracy']:.3f}  depF {c['dependency_f']:.3f}"
    )


if __name__ == "__main__":
    main()
