"""What the taught heads are fitted on, read once: the student's texts
(`training.heads.taught.texts`), their SmolLM2 states for the teacher
(`training.heads.taught.teacher.text_set_states`) and their default-tier columns for the student
(`training.heads.data.files.text_columns`, the row cache the judged files share).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from training.heads.taught.teacher import DEFAULT_ROOT, SetStates, text_set_states
from training.heads.taught.texts import TextSet, corpus_texts, dev_texts

__all__ = ["Prepared", "add_prepare_options", "corpus_file", "main", "prepare"]

SPLIT = {"share_b": 0.2, "seed": 12345}  # docs/model.md, step 1: the GLEU stage's Reuters part


@dataclass
class Prepared:
    """Every text set with its states (teacher) and its default columns under every reading
    (student)."""

    sets: list[TextSet]
    states: dict[str, SetStates]
    columns: dict[str, dict[str, dict[str, np.ndarray]]]  # {set: {reading: {input: values}}}


def add_prepare_options(ap: argparse.ArgumentParser) -> None:
    """`--taught` (the default tier's taught heads beside the linear candidates) and what they
    learn from."""
    ap.add_argument(
        "--taught",
        action="store_true",
        help="the heads taught by the neural tier's learned head beside the linear candidates, "
        "one decision a head (the default tier; python -m training.heads.taught)",
    )
    ap.add_argument(
        "--corpus",
        default="build/corpora/reuters_svm.txt",
        help="the GLEU stage's part of Reuters (made from --reuters as docs/model.md step 1 "
        "makes it where missing)",
    )
    ap.add_argument(
        "--reuters",
        default="../shared/corpora/reuters21578/train.txt",
        help="Reuters-21578's training documents, split where --corpus is missing",
    )
    ap.add_argument(
        "--corpus-sentences",
        type=int,
        default=6000,
        help="real sentences of --corpus the student reads, and as many generated ones",
    )
    ap.add_argument("--states", default=str(DEFAULT_ROOT), help="where the texts' states are kept")


def corpus_file(args: argparse.Namespace) -> Path:
    """--corpus, split from --reuters first where it is missing."""
    from training.gleu.corpus import split_documents

    path = Path(args.corpus)
    if not path.is_file():
        lm_part = path.with_name("reuters_lm.txt")
        split_documents(args.reuters, lm_part, path, **SPLIT)
    return path


def prepare(
    default, neural, paths: Sequence[Path], genres: dict, args: argparse.Namespace
) -> Prepared:
    """The texts of `paths` at the judged cut and the corpus's, their states (`neural`'s
    SmolLM2) and their columns under `default`'s extractors, under every reading."""
    from features.neural_lm import load_neural
    from training.heads.data.files import READING_MODES, text_columns

    sets = dev_texts(
        paths,
        genres,
        default.placeholders,
        max_outputs=args.max_outputs,
        max_words=args.max_words,
        seed=args.seed,
    )
    if neural.placeholders != default.placeholders:
        raise ValueError("the tiers fill placeholders differently: their texts would differ")
    sets.append(corpus_texts(corpus_file(args), args.corpus_sentences, seed=args.seed))
    layers = neural.resources.get("neural", load_neural).layers
    states = text_set_states(sets, layers, root=Path(args.states), jobs=args.jobs)
    columns = {}
    for s in sets:  # every reading, as the chooser reads the judged files
        found = text_columns(
            default, s.texts, READING_MODES, n_jobs=args.jobs, cache_dir=args.cache or None
        )
        columns[s.name] = {r: found[r] for r in READING_MODES}
    return Prepared(sets, states, columns)


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m training.heads.taught`: the texts read once (resumes; shows progress), for
    `python -m training.heads --model default --taught` to decide on."""
    from scorer import load_scorer
    from scorer.evidence.benchmark_run import judgement_files
    from scorer.evidence.genres import GENRES, genres_of
    from training.heads.data.files import add_rows_options

    ap = argparse.ArgumentParser(prog="python -m training.heads.taught", description=__doc__)
    add_rows_options(ap)
    add_prepare_options(ap)
    args = ap.parse_args(argv)
    paths = judgement_files(args.dev, args.files)
    genres = genres_of([p.stem for p in paths], GENRES)
    found = prepare(load_scorer("default"), load_scorer("neural"), paths, genres, args)
    n = sum(len(s.texts) for s in found.sets)
    print(f"{n} texts of {len(found.sets)} sets prepared (states under {args.states})")
    return 0
