"""Judged files as `training.heads.data.judged.HeadFile`s, read the one way `python -m
training.heads`, `python -m training.calibration.learning_curve` and `fluency calibrate` read them:
each text's inputs under every reading asked for, from the row cache, and the command-line options
that cut large files and name the cache (`add_rows_options`, `read_head_files`).

Large files are cut to `--max-outputs` outputs and `--max-words` words by whole inputs (groups),
drawn with `--seed`, so that every tier's rows fit one run (the neural tier reads about 4
sentences a second a core).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from tqdm import tqdm

from scorer.evidence.benchmark_data import sample_outputs
from scorer.heads import GLEU_INPUT
from scorer.readings import DERIVED
from training.heads.data.checks import ScrambleCheck
from training.heads.data.judged import HeadFile

__all__ = [
    "CHRF",
    "MINUS_LENGTH",
    "READING_MODES",
    "add_rows_options",
    "chrf_column",
    "degenerate_texts",
    "head_files",
    "read_head_files",
    "read_scrambles",
    "scramble_check",
    "scramble_pairs",
    "text_columns",
]

READING_MODES = ("whole", "weighted", "sum")
MINUS_LENGTH = "minus length"
CHRF = "chrF (references)"


def add_rows_options(
    ap: argparse.ArgumentParser,
    *,
    files: bool = True,
    cuts: bool = True,
    jobs: int = 2,
    files_help: str = "only these files of --dev",
) -> None:
    """The options every command that reads judged files takes: where they are (`--dev`,
    `--files`; with `files`), how large files are cut (`--max-outputs`, `--max-words`; with
    `cuts`), `--seed`, `--jobs` and the row cache (`--cache`)."""
    from features.rows import default_cache_dir
    from scorer.commands.options import add_jobs_option

    if files:
        ap.add_argument("--dev", default="../shared/dev", help="folder of *.jsonl judgement files")
        ap.add_argument("--files", nargs="*", default=(), help=files_help)
    if cuts:
        ap.add_argument("--max-outputs", type=int, default=1500, help="outputs a file at most")
        ap.add_argument("--max-words", type=int, default=40000, help="words a file at most")
    ap.add_argument("--seed", type=int, default=12345)
    add_jobs_option(ap, default=jobs, help="feature worker processes")
    ap.add_argument(
        "--cache",
        default=str(default_cache_dir()),
        help="feature-row cache folder, shared with fluency benchmark and train "
        "(default: FLUENCY_ROW_CACHE, else build/rows; '' off)",
    )


def read_head_files(
    scorer,
    args: argparse.Namespace,
    readings: Sequence[str],
    *,
    every: bool = False,
    heads: bool = False,
) -> list[HeadFile]:
    """The files `add_rows_options` names (with `every`, every file of `--dev`, whatever
    `--files` says), read under `readings` (`head_files`, `heads` passed on), each with its
    genre."""
    from scorer.evidence.benchmark_run import judgement_files
    from scorer.evidence.genres import GENRES, genres_of

    paths = judgement_files(args.dev, () if every else args.files)
    return head_files(
        scorer,
        paths,
        genres_of([p.stem for p in paths], GENRES),
        readings,
        cache_dir=args.cache or None,
        n_jobs=args.jobs,
        max_outputs=args.max_outputs,
        max_words=args.max_words,
        seed=args.seed,
        heads=heads,
    )


def read_scrambles(
    scorer, args: argparse.Namespace, readings: Sequence[str]
) -> ScrambleCheck | None:
    """The scramble check `--scrambles` and `--floor` ask for (None: no check)."""
    if not args.scrambles:
        return None
    return scramble_check(
        scorer,
        args.scrambles,
        readings,
        floor=args.floor,
        seed=args.seed,
        cache_dir=args.cache or None,
        n_jobs=args.jobs,
        loops=getattr(args, "loops", 0),
        said_again=getattr(args, "said_again", 0),
    )


def text_columns(
    scorer,
    texts: Sequence[str],
    readings: Sequence[str],
    *,
    n_jobs: int = 1,
    cache_dir: str | Path | None = None,
    heads: bool = False,
) -> dict[str, dict[str, np.ndarray]]:
    """{reading: {input: one value a text}}: the GLEU score, every feature column and the
    `DERIVED` ones, with each reading's sentences folded as the scorer folds them, and
    "length" (the whole text's tokens, every sentence's added up). With `heads`, also the
    columns only the bundle's heads read (its `head_features`: SmolLM2's states), so that a
    head reading them can be scored from these columns."""
    from features.placeholders import fill_placeholders
    from features.segment import segment
    from scorer.readings import text_readings, with_derived

    scorer = scorer if heads else scorer.gleu_stage()
    extractors = {f.split("/")[0] for f in _columns(scorer)}
    derived = [d for d in DERIVED if d.split("/")[0] in extractors]
    filled = fill_placeholders(texts, scorer.placeholders)
    segs = {how: segment(filled, by_sentence=how != "whole") for how in dict.fromkeys(readings)}
    sentences = list(dict.fromkeys(s for seg in segs.values() for s in seg.sentences))
    found = _rows(scorer, sentences, cache_dir, n_jobs)
    by_text = dict(zip(sentences, with_derived(found, derived), strict=True))
    length = next(k for k in _columns(scorer) if k.endswith("/n_tokens"))
    columns = {}
    for how, seg in segs.items():
        rows = [by_text[s] for s in seg.sentences]
        values = scorer.decision(rows)
        text_rows = seg.aggregate_rows(rows, how, values)
        cols = {GLEU_INPUT: seg.aggregate(values, how)}
        cols |= {k: np.array([r[k] for r in text_rows], dtype=float) for k in text_rows[0]}
        columns[how] = cols
    said = text_readings(filled)  # what each text says again: every reading's own columns
    for cols in columns.values():
        cols.update(said)
    seg = next(iter(segs.values()))
    total = seg.aggregate([by_text[s][length] for s in seg.sentences], "sum")
    return {"length": {"n_tokens": np.asarray(total, dtype=float)}, **columns}


def head_files(
    scorer,
    paths: Sequence[Path],
    genres: Mapping[str, str],
    readings: Sequence[str] = READING_MODES,
    *,
    cache_dir: str | Path | None = None,
    n_jobs: int = 1,
    max_outputs: int = 0,
    max_words: int = 0,
    seed: int = 12345,
    heads: bool = False,
) -> list[HeadFile]:
    """Each judgement file as `HeadFile`: outputs kept under `fluency benchmark`'s protocol
    (empty and failed ones and human references left out), cut to `max_outputs` outputs and
    `max_words` words, with `text_columns` under each reading (with `heads`, the columns only
    the bundle's heads read too), and minus the length."""
    from scorer.evidence.benchmark_data import read_judged
    from scorer.evidence.genres import FLUENCY_FIELDS

    out = []
    for path in tqdm(paths, desc="judgement files", unit=" file"):
        judged = read_judged(path, human_field=FLUENCY_FIELDS.get(path.stem, "score"))
        n_words = [len(t.split()) for t in judged.texts]
        keep = sample_outputs(judged.groups, max_outputs, seed, n_words, max_words)
        texts = [judged.texts[i] for i in keep]
        columns = text_columns(
            scorer, texts, readings, cache_dir=cache_dir, n_jobs=n_jobs, heads=heads
        )
        n_tokens = columns.pop("length")["n_tokens"]
        baselines = {MINUS_LENGTH: -n_tokens}
        refs = [judged.refs[i] for i in keep]
        if refs and all(refs):
            baselines[CHRF] = chrf_column(texts, refs)
        out.append(
            HeadFile(
                judged.name,
                genres.get(judged.name, judged.name),
                np.asarray(judged.human, dtype=float)[keep],
                [judged.groups[i] for i in keep],
                columns,
                baselines,
                [judged.systems[i] for i in keep],
                texts,
            )
        )
    return out


def chrf_column(texts: Sequence[str], refs: Sequence[Sequence[str]]) -> np.ndarray:
    """Sentence chrF of each text against its references (`fluency benchmark`'s baseline), the
    reference metric people compare systems with: a reference-free head that loses to it is
    still the one to use where there are no references."""
    from features.accuracy import Chrf

    metric = Chrf()
    return np.array(
        [
            metric.from_stats(metric.segment_stats(t, r), sentence=True)
            for t, r in zip(texts, refs, strict=True)
        ]
    )


# Extractors computed in stores of their own, so that the parsers' rows of every tier are
# parsed once and a costly extractor's rows are added to them (`features.rows`: stores add up);
# by the model they run, whose extractors are computed together (one SmolLM2 pass: both).
COSTLY = {"constituency.v1": "benepar", "neural.v2": "neural", "neural_states.v1": "neural"}


def scramble_pairs(corpus: str | Path, *, n: int = 200, seed: int = 12345):
    """(real, shuffled): `n` sentences of 8-35 words from `corpus` (one paragraph a line; the
    held-out Reuters test split: no sentence the GLEU stage was trained on) and a shuffle of
    each, its words in another order and its full stop kept last (still one sentence)."""
    import random

    from features.segment import split_sentences

    rng = random.Random(seed)
    real = []
    with open(corpus, encoding="utf-8") as fh:
        for line in fh:
            for sentence, _ in split_sentences(line.strip()) if line.strip() else ():
                if 8 <= len(sentence.split()) <= 35 and sentence[-1:] in ".!?":
                    real.append(sentence)
            if len(real) >= 5 * n:
                break
    real = rng.sample(real, min(n, len(real)))
    shuffled = []
    for sentence in real:
        body, end = sentence[:-1].split(), sentence[-1]
        words = list(body)
        while len(words) > 1 and words == body:
            rng.shuffle(words)
        shuffled.append(" ".join(words).replace(".", "").replace("!", "").replace("?", "") + end)
    return real, shuffled


def degenerate_texts(real: Sequence[str], *, chars: int = 2000) -> dict[str, list[str]]:
    """What a generator stuck on a word or a phrase writes, one of each kind a real sentence,
    inside one sentence (no full stop before the end): "run", its shortest word repeated to three
    times its length; "loop", its first four words repeated to three times its length; "long run"
    and "long loop", the same filling `chars` characters (the service's longest text). A learned
    head is a weighted sum over mean states with no bound of its own, so how long a run is must
    not lift its score above the sentence's (the scramble check shuffles, it never repeats)."""
    out: dict[str, list[str]] = {"run": [], "loop": [], "long run": [], "long loop": []}
    for sentence in real:
        body, end = sentence[:-1].split(), sentence[-1]
        shortest = min(body, key=len)
        phrase = body[:4]

        out["run"].append(_repeat([shortest], end, 3 * len(body), chars))
        out["loop"].append(_repeat(phrase, end, 3 * len(body), chars))
        out["long run"].append(_repeat([shortest], end, None, chars))
        out["long loop"].append(_repeat(phrase, end, None, chars))
    return out


def _repeat(unit: list[str], end: str, words: int | None, chars: int) -> str:
    """`unit`'s words over and over to `words` words (None: as many as fit in `chars`), then
    `end`."""
    made, size = [], len(end) - 1
    while True:
        word = unit[len(made) % len(unit)]
        if len(made) == words or (words is None and size + len(word) + 1 > chars):
            return " ".join(made) + end
        made.append(word)
        size += len(word) + 1


def scramble_check(
    scorer,
    corpus: str | Path,
    readings: Sequence[str],
    *,
    n: int = 200,
    floor: float = 0.95,
    seed: int = 12345,
    cache_dir: str | Path | None = None,
    n_jobs: int = 1,
    loops: int = 0,
    said_again: int = 0,
) -> ScrambleCheck:
    """`n` sentences of 8-35 words from `corpus` (one paragraph a line; the held-out Reuters
    test split: no sentence the GLEU stage was trained on) and a shuffle of each, as columns;
    with `loops`, the first `loops` sentences' runs and loops too (`degenerate_texts`); with
    `said_again`, that many paragraphs and their said-again versions, and as many others to
    choose a head's weight on what is said again (`training.heads.data.said_again`)."""
    real, shuffled = scramble_pairs(corpus, n=n, seed=seed)
    from scorer.config import DEFAULTS

    kinds = degenerate_texts(real[:loops], chars=DEFAULTS["MAX_CHARS"]) if loops else {}
    texts = real + shuffled + [t for k in kinds.values() for t in k]
    # With the columns only the bundle's heads read: a learned head is checked as it scores.
    cols = text_columns(scorer, texts, readings, cache_dir=cache_dir, n_jobs=n_jobs, heads=True)
    cols.pop("length")

    def part(a: int, b: int) -> dict[str, dict[str, np.ndarray]]:
        return {r: {k: v[a:b] for k, v in c.items()} for r, c in cols.items()}

    half = len(real)
    at, degenerate = 2 * half, {}
    for kind, made in kinds.items():
        degenerate[kind] = part(at, at + len(made))
        at += len(made)
    again = None
    if said_again:
        from training.heads.data.said_again import said_again_check

        def columns(made: Sequence[str]) -> dict[str, dict[str, np.ndarray]]:
            found = text_columns(
                scorer, made, readings, cache_dir=cache_dir, n_jobs=n_jobs, heads=True
            )
            found.pop("length")
            return found

        again = said_again_check(columns, corpus, n=said_again, seed=seed, floor=floor)
    return ScrambleCheck(part(0, half), part(half, 2 * half), floor, degenerate, again)


def _rows(scorer, sentences: Sequence[str], cache_dir, n_jobs: int) -> list[dict[str, float]]:
    from features.rows import FeatureRows

    # Only a tier with a costly extractor has stores to add up; without one the cheap store is
    # the scorer's own, whose rows it read before these were added: they would be parsed twice.
    if cache_dir is not None and any(f in COSTLY for f in scorer.features):
        cheap = tuple(f for f in scorer.features if f not in COSTLY)
        by_model: dict[str, list[str]] = {}  # one model's extractors share its passes
        for f in scorer.features:
            if f in COSTLY:
                by_model.setdefault(COSTLY[f], []).append(f)
        for group in [cheap, *map(tuple, by_model.values())]:
            FeatureRows(group, scorer.rows.resources).rows(
                sentences, cache_dir=cache_dir, n_jobs=n_jobs, progress=True, desc=group[-1]
            )
    return scorer.sentence_rows(sentences, cache_dir=cache_dir, n_jobs=n_jobs, progress=True)


def _columns(scorer) -> list[str]:
    return list(scorer.card.get("feature_columns", []))
