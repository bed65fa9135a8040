"""Link Grammar's options: what each costs, and whether it finds what `linkgrammar.v5` reads.

Link Grammar is most of the default model's time (docs/benchmarks.md, "Scoring"). An option
that parses faster while giving every sentence the same null count, linkage counts (found,
valid, post-processed) and best linkage's costs would be a saving with the same features; one
that changes them changes the features (a new extractor version and new heads). The last two
variants are of that kind: what a `linkgrammar.v6` could save. The "floor" variants find the
least Link Grammar can cost and still link a sentence: no null search and no linkage built
(`linkage_limit` 0; only the count), with short links of 4, 3, then 2; "linked" is the share of
real sentences that still find a linkage with no null word.

The same run times spaCy's bare parse of the real sentences in this process (tok2vec, tagger
and parser, `nlp.pipe`, the model loaded beforehand), and prints each variant's time over it:
what Link Grammar adds to a parse, in parses.

Sentences: `--sentences` Reuters test sentences of 15-25 words, the same with one adjacent swap
and one dropped word, and shuffled, parsed by spaCy once (outside the timing) and given to Link
Grammar as `linkgrammar.v5` gives them. The baseline, `linkgrammar.v5`'s own options (one call
for null counts 0..1), runs in the same rounds as every variant, alternating; each variant's
values are compared with the baseline's sentence by sentence.

Usage: python -m bench.linkgrammar_options [--sentences 300] [--rounds 2]
"""

from __future__ import annotations

import random
import time

from bench._args import add_sentences, parser
from bench._data import perturb, sentences
from features.linkgrammar import _MAX_NULLS, _SHORT_LENGTH, _load, _words
from features.parsing import parse
from features.resources import Resources


def _options(lg, parsed, **changes):
    base = parsed.options
    opts = {
        "verbosity": 0,
        "min_null_count": 0,
        "max_null_count": _MAX_NULLS,
        "linkage_limit": base.linkage_limit,
        "max_parse_time": base.max_parse_time,
        "short_length": _SHORT_LENGTH,
    }
    return lg.ParseOptions(**{**opts, **changes})


def _values(lg, sentence, opts) -> tuple:
    """What the features read: null count, linkages found, valid and post-processed, and the
    cheapest linkage's disjunct and link costs."""
    clg, handle = lg.Clinkgrammar, sentence._obj
    valid = clg.sentence_num_valid_linkages(handle)
    out = (
        sentence.null_count(),
        clg.sentence_num_linkages_found(handle),
        valid,
        clg.sentence_num_linkages_post_processed(handle),
    )
    if not valid:
        return out
    best = lg.Linkage(0, sentence, opts._obj)
    return (*out, best.disjunct_cost(), best.link_cost())


def _one_call(lg, dictionary, parsed, **changes):
    """A pass over texts with one call a sentence; its options are made when the pass starts:
    Link Grammar keeps `test` in a global, which the next options made set again."""

    def run(texts: list[str]) -> list[tuple]:
        opts = _options(lg, parsed, **changes)
        out = []
        for text in texts:
            sentence = lg.Sentence(text, dictionary, opts)
            sentence.split()
            try:
                sentence.parse(opts)
            except lg.LG_TimerExhausted:
                out.append(("timeout",))
                continue
            out.append(_values(lg, sentence, opts))
        return out

    return run


def _strict_then_null(lg, dictionary, parsed):
    """A pass with a strict call a sentence, and a call for one null where nothing linked."""

    def run(texts: list[str]) -> list[tuple]:
        strict = _options(lg, parsed, max_null_count=0)
        null = _options(lg, parsed, min_null_count=1)
        out = []
        for text in texts:
            sentence = lg.Sentence(text, dictionary, strict)
            sentence.split()
            try:
                sentence.parse(strict)
                if lg.Clinkgrammar.sentence_num_valid_linkages(sentence._obj) == 0:
                    sentence.parse(null)
            except lg.LG_TimerExhausted:
                out.append(("timeout",))
                continue
            out.append(_values(lg, sentence, null))
        return out

    return run


def main() -> None:
    ap = parser(__doc__)
    add_sentences(ap, 300)
    ap.add_argument("--rounds", type=int, default=2, help="timed passes of every variant")
    args = ap.parse_args()
    import linkgrammar as lg

    rng = random.Random(5)
    real = sentences(args.sentences)
    sets = {
        "real": real,
        "swap": [perturb(t, rng) for t in real],
        "shuffled": [" ".join(rng.sample(t.split(), len(t.split()))) for t in real],
    }
    words = {k: [" ".join(_words(s)[0]) for s in parse(v, lemmas=False)] for k, v in sets.items()}
    parsed = Resources().get("linkgrammar", _load)
    d = parsed.dictionary
    variants = {
        "linkgrammar.v5 (null counts 0..1 in one call)": _one_call(lg, d, parsed),
        "strict, then 1 null where nothing linked": _strict_then_null(lg, d, parsed),
        "display_morphology off": _one_call(lg, d, parsed, display_morphology=False),
        "no parse-time limit": _one_call(lg, d, parsed, max_parse_time=-1),
        "test=len-multi-pruning:0": _one_call(lg, d, parsed, test="len-multi-pruning:0"),
        # Cheaper, other values (a linkgrammar.v6): no null search, then shorter links too.
        "no null search (max_null_count 0)": _one_call(lg, d, parsed, max_null_count=0),
        "no null search, short links 3": _one_call(lg, d, parsed, max_null_count=0, short_length=3),
        # The floor: nothing but the count of linkages with no null word.
        "floor: no nulls, no linkage built": _one_call(
            lg, d, parsed, max_null_count=0, linkage_limit=0
        ),
        "floor, short links 3": _one_call(
            lg, d, parsed, max_null_count=0, linkage_limit=0, short_length=3
        ),
        "floor, short links 2": _one_call(
            lg, d, parsed, max_null_count=0, linkage_limit=0, short_length=2
        ),
    }
    bare = _bare_parse()
    seconds = {(v, k): 0.0 for v in variants for k in sets}
    values: dict[tuple[str, str], list] = {}
    bare_seconds = 0.0
    for _ in range(args.rounds):
        t0 = time.process_time()
        list(bare.pipe(real))
        bare_seconds += time.process_time() - t0
        for kind, texts in words.items():
            for name, run in variants.items():
                t0 = time.process_time()
                values[name, kind] = run(texts)
                seconds[name, kind] += time.process_time() - t0
    print(f"{len(real)} sentences a set, {args.rounds} rounds, ms a sentence (CPU)")
    bare_ms = bare_seconds / args.rounds / len(real) * 1000
    print(f"spaCy's bare parse of the real sentences: {bare_ms:.2f} ms a sentence (CPU)")
    print(
        f"{'options':48} "
        + "  ".join(f"{k:>8} {'same':>5}" for k in sets)
        + f"  {'all / v5':>8} {'real / parse':>12} {'linked':>6}"
    )
    base = next(iter(variants))
    for name in variants:
        cells, total = [], 0.0
        for kind, texts in words.items():
            ms = seconds[name, kind] / args.rounds / len(texts) * 1000
            same = sum(a == b for a, b in zip(values[name, kind], values[base, kind], strict=True))
            cells.append(f"{ms:8.2f} {same / len(texts):5.3f}")
            total += seconds[name, kind]
        ratio = total / sum(seconds[base, k] for k in sets)
        real_ms = seconds[name, "real"] / args.rounds / len(real) * 1000
        linked = sum(_linked(v) for v in values[name, "real"]) / len(real)
        print(
            f"{name:48} "
            + "  ".join(cells)
            + f"  {ratio:8.3f} {real_ms / bare_ms:12.2f} {linked:6.3f}"
        )
    print("same: the share of sentences whose values equal linkgrammar.v5's, every one compared")
    print("real / parse: ms a real sentence over spaCy's bare parse of it, measured in this run")
    print("linked: the share of real sentences with a linkage and no null word")


def _linked(value: tuple) -> bool:
    # (null count, linkages found, ...) or ("timeout",)
    return value[0] == 0 and len(value) > 1 and value[1] > 0


def _bare_parse():
    """spaCy's pipeline as `bench.score`'s bare parse has it: tok2vec, tagger, parser."""
    import spacy

    from features.parsing import DEFAULT_MODELS

    for name in DEFAULT_MODELS:
        try:
            return spacy.load(name, exclude=["ner", "lemmatizer", "attribute_ruler"])
        except OSError:
            pass
    raise SystemExit(f"no spaCy English model installed ({', '.join(DEFAULT_MODELS)})")


if __name__ == "__main__":
    main()
