"""`fluency score` and `features`: the model's scores and the extractors' values over files
(plain text, JSON Lines, Parquet: `scorer.tables`).

`score` and `features` stream: input is read, parsed and scored in chunks of `--chunk` rows, and
each chunk's output is written before the next is read, so 100,000 lines take bounded memory. An
empty input line is kept as a segment (its row says so) rather than shifting every later line,
and a row that cannot be scored gets a null score and a reason (`scorer.batch`), not a
traceback. `score --dask` sends the chunks to a Dask cluster (`scorer.distributed`).
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
from collections.abc import Iterator
from pathlib import Path

from scorer.commands.options import (
    add_aggregate_option,
    add_genre_option,
    add_jobs_option,
    add_model_option,
    add_table_options,
    positive_int,
)
from scorer.errors import InputError
from scorer.textio import iter_lines

__all__ = ["add_commands"]


def _chunks(lines: Iterator[str], size: int) -> Iterator[list[str]]:
    while chunk := list(itertools.islice(lines, size)):
        yield chunk


def _scorer(args, config):
    """The model of `--model` scoring with its head for `--genre` (GenreError if it has none)."""
    from scorer.scoring import load_configured

    return load_configured(args.model, config).for_genre(args.genre)


_WORKER: dict = {}


def _init_worker(args, config, pooled: bool = False) -> None:
    if pooled:
        from features.resources import one_thread_per_process

        one_thread_per_process()
    _WORKER["scorer"] = _scorer(args, config)
    _WORKER["features"] = _with_features(args)
    _WORKER["aggregate"] = _aggregate(args)


def _aggregate(args) -> str | None:
    """`--aggregate`, or "weighted" for the older `--by-sentence`; None: the scorer's default."""
    return args.aggregate or ("weighted" if getattr(args, "by_sentence", False) else None)


def _with_features(args) -> bool:
    return args.format == "json" and not args.out


def _score_chunk(texts: list) -> list:
    """One `Outcome` per text: a score, or why there is none (`scorer.batch.score_rows`)."""
    from scorer.batch import score_rows

    return score_rows(
        _WORKER["scorer"],
        texts,
        with_features=_WORKER["features"],
        aggregate=_WORKER["aggregate"],
    )


def _input_path(args) -> str:
    if args.in_path and args.input != "-":
        raise InputError(f"give the input once: {args.input} or --in {args.in_path}")
    return args.in_path or args.input


def _warn(outcomes, offset: int, where: str) -> None:
    """A warning per row that had text but no score; empty lines are expected and stay quiet."""
    from scorer.batch import EMPTY

    for i, o in enumerate(outcomes):
        if o.reason is not None and o.reason != EMPTY:
            print(
                f"fluency: warning: {where} {offset + i + 1} not scored: {o.reason}",
                file=sys.stderr,
            )


def _score_row(row: dict, outcome, *, plain: bool, features: bool, scale: str = "fluency") -> dict:
    """The output row: `{"score", "scale", "gleu", "features"}` for plain text on standard
    output (the score, what it is, the GLEU stage's distance, the feature values), else the
    input row with `score` and `reason` added."""
    s = outcome.score
    if plain:
        if s is not None:
            gleu = s.gleu if math.isfinite(s.gleu) else None  # not run for a states-only head
            return {"score": s.score, "scale": scale, "gleu": gleu, "features": s.features}
        from scorer.batch import EMPTY

        return {"score": None, **({} if outcome.reason == EMPTY else {"reason": outcome.reason})}
    out = {**row, "score": s.score if s is not None else None, "reason": outcome.reason}
    if features and s is not None:
        out["features"] = s.features
    return out


def _score_results(args, config, chunks):
    """(rows, outcomes) per chunk, in order: in this process, `--jobs` processes or on Dask.
    Returns the iterator and a function that stops what it started."""
    if args.dask:
        from scorer.distributed import connect, model_sha256, register_scorer, score_chunks

        model_sha256(args.model, config)  # a missing bundle fails before a cluster starts
        if args.genre is not None:
            _scorer(args, config)  # so does a genre it has no head for (nothing is parsed)
        # Dask logs every worker's comings and goings; its errors reach us as exceptions.
        quiet = not getattr(args, "verbose", False)
        client = connect(args.dask, timeout=args.dask_timeout, quiet=quiet)
        try:
            register_scorer(client, args.model, config)
            n_workers = max(len(client.scheduler_info().get("workers", {})), 1)
        except BaseException:
            _close_client(client)
            raise
        results = score_chunks(
            client,
            chunks,
            args.text_column,
            window=2 * n_workers,
            with_features=_with_features(args),
            aggregate=_aggregate(args),
            genre=args.genre,
        )
        return results, lambda: _close_client(client)
    if args.jobs <= 1:
        _init_worker(args, config)
        results = ((rows, _score_chunk(_texts(rows, args))) for rows in chunks)
        return results, lambda: None
    _scorer(args, config)  # fail fast, with a clear message, before starting workers
    import multiprocessing

    # spawn: a forked child can inherit locked torch / Link Grammar thread pools and hang.
    pool = multiprocessing.get_context("spawn").Pool(
        args.jobs, initializer=_init_worker, initargs=(args, config, True)
    )
    return _windowed(pool, chunks, 2 * args.jobs, args), pool.terminate


def _close_client(client) -> None:
    cluster = client.cluster
    client.close()
    if cluster is not None:
        cluster.close()


def _texts(rows: list[dict], args) -> list:
    return [row.get(args.text_column) for row in rows]


def cmd_score(args: argparse.Namespace, config: dict) -> int:
    """Chunks go to `--jobs` worker processes, or to the workers of a Dask cluster (`--dask`),
    each with its own loaded model (the parsers are CPU-bound and hold the GIL); a window of 2
    chunks per worker keeps memory bounded and the output in input order. A row that cannot be
    scored gets a null score, a `reason` and a warning; the other rows are scored."""
    from tqdm import tqdm

    from scorer.tables import TableWriter, format_of, open_writer, parquet_schema, read_chunks

    path = _input_path(args)
    fmt = format_of(path)
    chunks = read_chunks(path, args.chunk, text_column=args.text_column)
    out = args.out or "-"
    plain = fmt == "text" and not args.out and args.format == "json"
    if args.out:
        schema = parquet_schema(path) if fmt == "parquet" else None
        writer = open_writer(out, column="score", schema=schema)
    else:
        writer = TableWriter("-", "jsonl" if args.format == "json" else "text", column="score")
    bar = tqdm(desc="scoring", unit=" rows", disable=not args.progress, file=sys.stderr)
    results, stop = _score_results(args, config, chunks)
    where, offset = ("line" if fmt == "text" else "row"), 0
    try:
        scale = _scale(args, config)
        for rows, outcomes in results:
            _warn(outcomes, offset, where)
            features = _with_features(args)
            writer.write(
                [
                    _score_row(r, o, plain=plain, features=features, scale=scale)
                    for r, o in zip(rows, outcomes, strict=True)
                ]
            )
            offset += len(rows)
            bar.update(len(rows))
    finally:
        stop()
        writer.close()
        bar.close()
    return 0


def _scale(args, config) -> str:
    """What the scores are (`scorer.bundles.scale_of`), from the scorer loaded in this process or
    loaded again (its card and GLEU stage: nothing is parsed); a note on standard error when
    they are the GLEU distance, not fluency."""
    from scorer.bundles import scale_of

    in_process = args.jobs <= 1 and not args.dask
    scale = scale_of(_WORKER["scorer"] if in_process else _scorer(args, config))
    if scale == "gleu":
        print(
            f"fluency: note: model {args.model or config['MODEL_PATH']} has no head: its scores "
            "are the GLEU distance (gleu; > 0 looks like real text), not fluency on people's "
            "scale; fluency train carries a tier's heads over, fluency calibrate fits one",
            file=sys.stderr,
        )
    return scale


def _windowed(pool, chunks: Iterator[list[dict]], window: int, args) -> Iterator[tuple]:
    """`pool.imap` reads its whole input at once; this submits `window` chunks at a time."""
    while batch := list(itertools.islice(chunks, window)):
        done = pool.imap(_score_chunk, [_texts(rows, args) for rows in batch])
        yield from zip(batch, done, strict=True)


def cmd_features(args: argparse.Namespace, config: dict) -> int:
    """Chunks of lines, filled placeholders, rows from `--jobs` processes
    (`features.extract.feature_chunks`), one table at the end."""
    import pandas as pd
    from tqdm import tqdm

    from features.extract import feature_chunks
    from features.placeholders import fill_placeholders, parse_placeholders
    from features.registry import all_specs
    from features.resources import Resources

    names = args.features or [s.name for s in all_specs()]
    placeholders = parse_placeholders(config.get("PLACEHOLDERS"))
    resources = Resources(spacy_model=config["SPACY_MODEL"])
    out = Path(args.out)
    if out.suffix not in (".csv", ".parquet"):
        raise InputError(f"--out must end in .csv or .parquet, got {out.name}")
    lines = _chunks(iter_lines(args.input), args.chunk)
    kept: list[list[str]] = []

    def filled():
        # Placeholders read as a name, as the scorer reads them; the "text" column keeps the line.
        for chunk in lines:
            kept.append(chunk)
            yield fill_placeholders(chunk, placeholders)

    frames = []
    bar = tqdm(desc="features", unit=" sent", file=sys.stderr)
    for k, rows in enumerate(feature_chunks(filled(), names, resources, n_jobs=args.jobs)):
        frame = pd.DataFrame(rows)
        frame.insert(0, "text", kept[k])
        frames.append(frame)
        bar.update(len(rows))
    bar.close()
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame({"text": []})
    if out.suffix == ".csv":
        table.to_csv(out, index=False)
    else:
        table.to_parquet(out, index=False)
    print(f"wrote {len(table)} rows x {table.shape[1] - 1} features to {out}", file=sys.stderr)
    return 0


def add_commands(sub) -> None:
    score = sub.add_parser(
        "score",
        help="fluency score per line of text (the SVM's signed distance: > 0 looks real)",
        description="One output row per input row, same order; streams in chunks. A row that "
        "cannot be scored gets a null score, a reason and a warning.",
    )
    score.add_argument("input", nargs="?", default="-", help="text file, one sentence a line")
    add_table_options(score)
    add_model_option(score)
    add_genre_option(score)
    score.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="without --out: one score a line (text), or a JSON object a row with the "
        "feature values (json)",
    )
    score.add_argument(
        "--chunk", type=positive_int, default=512, help="rows per batch (with --dask: a partition)"
    )
    score.add_argument("--progress", action="store_true", help="progress bar on stderr")
    add_jobs_option(score, help="worker processes, each loading the model")
    add_aggregate_option(score)
    score.add_argument(
        "--by-sentence", action="store_true", help="the same as --aggregate weighted"
    )
    score.add_argument(
        "--dask",
        metavar="SCHEDULER",
        help="score on a Dask cluster: local:N (N worker processes here) or tcp://host:8786 "
        "(a running `dask scheduler`); needs pip install 'fluency-scorer[dask]'",
    )
    score.add_argument(
        "--dask-timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="how long to wait for the scheduler and its first worker (default 10)",
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
    feats.add_argument("--chunk", type=positive_int, default=128, help="lines per batch")
    add_jobs_option(feats, help="worker processes, each loading the parsers")
    feats.set_defaults(func=cmd_features)
