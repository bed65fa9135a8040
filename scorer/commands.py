"""`fluency score`, `features` and `accuracy`: the model, the extractors and the reference-based
accuracies over text files.

Both stream: input is read, parsed and scored in chunks of `--chunk` lines, and each chunk's
output is written before the next is read, so 100,000 lines take bounded memory. An empty input
line is kept as a segment (its row says so) rather than shifting every later line.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
from collections.abc import Iterator
from pathlib import Path

from scorer.errors import InputError
from scorer.textio import cell, iter_lines, print_rows, read_lines

__all__ = ["add_commands"]


def _chunks(lines: Iterator[str], size: int) -> Iterator[list[str]]:
    while chunk := list(itertools.islice(lines, size)):
        yield chunk


def _scorer(args, config):
    from scorer.scoring import load_configured

    return load_configured(args.model, config)


_WORKER: dict = {}


def _init_worker(args, config, pooled: bool = False) -> None:
    if pooled:
        from features.resources import one_thread_per_process

        one_thread_per_process()
    _WORKER["scorer"] = _scorer(args, config)
    _WORKER["json"] = args.format == "json"
    _WORKER["by_sentence"] = bool(getattr(args, "by_sentence", False))


def _score_chunk(chunk: list[str]) -> list[str]:
    """Output lines for one chunk of input lines (an empty line has no score: "nan")."""
    scorer, as_json = _WORKER["scorer"], _WORKER["json"]
    keep = [i for i, t in enumerate(chunk) if t.strip()]
    scored = scorer.score_texts(
        [chunk[i] for i in keep], with_features=as_json, by_sentence=_WORKER["by_sentence"]
    )
    by_line = dict(zip(keep, scored, strict=True))
    out = []
    for i in range(len(chunk)):
        s = by_line.get(i)
        if as_json:
            row = {"score": s.score, "features": s.features} if s else {"score": None}
            out.append(json.dumps(row, ensure_ascii=False))
        else:
            out.append(f"{s.score:.6f}" if s else "nan")
    return out


def cmd_score(args: argparse.Namespace, config: dict) -> int:
    """Chunks go to `--jobs` worker processes, each with its own loaded model (the parsers are
    CPU-bound and hold the GIL); a window of 2 chunks per worker keeps memory bounded and the
    output in input order."""
    import multiprocessing

    from tqdm import tqdm

    bar = tqdm(desc="scoring", unit=" sent", disable=not args.progress, file=sys.stderr)
    chunks = _chunks(iter_lines(args.input), args.chunk)
    if args.jobs <= 1:
        _init_worker(args, config)
        results = map(_score_chunk, chunks)
        pool = None
    else:
        _scorer(args, config)  # fail fast, with a clear message, before starting workers
        # spawn: a forked child can inherit locked torch / Link Grammar thread pools and hang.
        pool = multiprocessing.get_context("spawn").Pool(
            args.jobs, initializer=_init_worker, initargs=(args, config, True)
        )
        results = _windowed(pool, chunks, 2 * args.jobs)
    try:
        for lines in results:
            sys.stdout.write("".join(line + "\n" for line in lines))
            sys.stdout.flush()
            bar.update(len(lines))
    finally:
        if pool is not None:
            pool.terminate()
        bar.close()
    return 0


def _windowed(pool, chunks: Iterator[list[str]], window: int) -> Iterator[list[str]]:
    """`pool.imap` reads its whole input at once; this submits `window` chunks at a time."""
    while batch := list(itertools.islice(chunks, window)):
        yield from pool.imap(_score_chunk, batch)


def cmd_features(args: argparse.Namespace, config: dict) -> int:
    import pandas as pd
    from tqdm import tqdm

    from features.extract import extract
    from features.parsing import parse
    from features.placeholders import fill_placeholders, parse_placeholders
    from features.registry import all_specs
    from features.resources import Resources

    names = args.features or [s.name for s in all_specs()]
    placeholders = parse_placeholders(config.get("PLACEHOLDERS"))
    resources = Resources(spacy_model=config["SPACY_MODEL"])
    out = Path(args.out)
    if out.suffix not in (".csv", ".parquet"):
        raise InputError(f"--out must end in .csv or .parquet, got {out.name}")
    frames = []
    bar = tqdm(desc="features", unit=" sent", file=sys.stderr)
    for chunk in _chunks(iter_lines(args.input), args.chunk):
        # Placeholders read as a name, as the scorer reads them; the "text" column keeps the line.
        filled = fill_placeholders(chunk, placeholders)
        rows = extract(parse(filled, model=config["SPACY_MODEL"], lemmas=False), names, resources)
        frame = pd.DataFrame(rows)
        frame.insert(0, "text", chunk)
        frames.append(frame)
        bar.update(len(chunk))
    bar.close()
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame({"text": []})
    if out.suffix == ".csv":
        table.to_csv(out, index=False)
    else:
        table.to_parquet(out, index=False)
    print(f"wrote {len(table)} rows x {table.shape[1] - 1} features to {out}", file=sys.stderr)
    return 0


def cmd_accuracy(args: argparse.Namespace, config: dict) -> int:
    from features.accuracy import score_accuracy
    from features.gold import read_conllu

    hyps = read_lines(args.hyp)
    streams = [read_lines(p) for p in args.ref]
    gold = [read_conllu(p) for p in args.ref_conllu]
    if not streams and gold:  # the gold trees are the references
        streams = [[s.text for s in g] for g in gold]
    if not streams:
        raise InputError("give at least one --ref file (or --ref-conllu)")
    if len(gold) > len(streams):
        raise InputError(f"{len(gold)} --ref-conllu files for {len(streams)} --ref files")
    for name, lines in [
        *zip(args.ref, streams, strict=False),
        *zip(args.ref_conllu, gold, strict=True),
    ]:
        if len(lines) != len(hyps):
            raise InputError(
                f"{args.hyp} has {len(hyps)} lines but {name} has {len(lines)}; "
                "give one reference line (or tree) per hypothesis line"
            )
    references = [list(refs) for refs in zip(*streams, strict=True)]
    trees = [list(t) for t in zip(*gold, strict=True)] if gold else None
    report = score_accuracy(
        hyps,
        references,
        reference_trees=trees,
        model=config["SPACY_MODEL"],
        lowercase=args.lowercase,
        n_process=args.jobs,
    )
    if args.corpus:
        if args.format == "json":
            print(json.dumps({**report.corpus, "signatures": report.signatures}))
        else:
            for key, value in report.corpus.items():
                print(f"{key}\t{cell(value)}")
            for key, value in report.signatures.items():
                print(f"signature.{key}\t{value}")
    else:
        print_rows(report.rows, args.format, sys.stdout)
    return 0


def _positive(text: str) -> int:
    value = int(text)
    if value < 1 or math.isinf(value):
        raise argparse.ArgumentTypeError("must be a positive integer")
    return value


def add_commands(sub) -> None:
    score = sub.add_parser(
        "score",
        help="fluency score per line of text (the SVM's signed distance: > 0 looks real)",
        description="One output line per input line, same order; streams in chunks.",
    )
    score.add_argument("input", nargs="?", default="-", help="text file, one sentence a line")
    score.add_argument("--model", help="model folder or name under FLUENCY_MODELS_DIR")
    score.add_argument("--format", choices=("text", "json"), default="text")
    score.add_argument("--chunk", type=_positive, default=512, help="lines per batch")
    score.add_argument("--progress", action="store_true", help="progress bar on stderr")
    score.add_argument("--jobs", type=_positive, default=1, help="worker processes")
    score.add_argument(
        "--by-sentence",
        action="store_true",
        help="split each line at its sentence-final punctuation and give the token-weighted "
        "mean of its sentences' scores (default: each line scored whole)",
    )
    score.set_defaults(func=cmd_score)

    feats = sub.add_parser(
        "features",
        help="every feature value per line of text, to CSV or Parquet",
        description="One row per input line, with the text; streams in chunks.",
    )
    feats.add_argument("--in", dest="input", default="-", help="text file, one sentence a line")
    feats.add_argument("--out", required=True, help="feats.csv or feats.parquet")
    feats.add_argument("--features", nargs="*", help="extractors (default: every registered)")
    feats.add_argument("--chunk", type=_positive, default=512)
    feats.set_defaults(func=cmd_features)

    acc = sub.add_parser(
        "accuracy",
        help="reference-based accuracy: string/tree accuracies, BLEU, chrF, NIST, dependency F",
        description="One output line per hypothesis line, same order.",
    )
    acc.add_argument("--hyp", required=True, help="hypotheses, one per line ('-': stdin)")
    acc.add_argument("--ref", action="append", default=[], help="references, one per line; repeat")
    acc.add_argument(
        "--ref-conllu",
        action="append",
        default=[],
        help="gold dependency trees (CoNLL-U) for the first, second... --ref file",
    )
    acc.add_argument("--format", choices=("json", "tsv"), default="json")
    acc.add_argument("--corpus", action="store_true", help="print corpus-level figures only")
    acc.add_argument("--lowercase", action="store_true", help="compare lower-cased tokens")
    acc.add_argument("--jobs", type=int, default=1, help="spaCy worker processes")
    acc.set_defaults(func=cmd_accuracy)
