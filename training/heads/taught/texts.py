"""The texts the default tier's taught heads learn from (`training.heads.taught`): each a text the
neural tier's learned head scores and the default tier reads, so the student sees what the
teacher says of far more texts than people rated.

- `dev_texts`: the development files' outputs, cut by whole inputs as the judged files are cut
  (`--max-outputs`/`--max-words`, the same seed), filled as the scorer fills them; a held-out
  unit's student never sees its genre's.
- `corpus_texts`: real Reuters sentences of the GLEU stage's part of the corpus (never in its
  n-gram LM's text) and the generated and corrupted sentences made from them as the default
  GLEU stage's recipe makes its negatives (`training.gleu.svm.make_dataset`, glued runs of
  sentence pieces and injected errors), a superset of the first 3,000 real sentences it was
  trained on.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["TextSet", "corpus_texts", "dev_texts", "set_digest"]


@dataclass(frozen=True)
class TextSet:
    """Texts of one source: `name` (a judged file's, or "gleu-corpus"), its `genre` ("" for the
    corpus), the `texts` as the scorer reads them, and each one's `kind` ("output", "real", or
    the generated kind: "l=4", "swap"...)."""

    name: str
    genre: str
    texts: tuple[str, ...]
    kinds: tuple[str, ...]

    @property
    def digest(self) -> str:
        return set_digest(self.texts)


def set_digest(texts: Sequence[str]) -> str:
    """SHA-256 of `texts` in order, one a line (what a cache of them is keyed by)."""
    h = hashlib.sha256()
    for t in texts:
        h.update(t.encode("utf-8") + b"\n")
    return h.hexdigest()


def dev_texts(
    paths: Sequence[Path],
    genres: dict[str, str],
    placeholders,
    *,
    max_outputs: int,
    max_words: int,
    seed: int,
) -> list[TextSet]:
    """Each judged file's outputs at the judged cut (`sample_outputs`, by whole inputs, the
    judged files' seed), filled with `placeholders` as the scorer fills them."""
    from features.placeholders import fill_placeholders
    from scorer.evidence.benchmark_data import read_judged, sample_outputs
    from scorer.evidence.genres import FLUENCY_FIELDS

    out = []
    for path in paths:
        data = read_judged(path, human_field=FLUENCY_FIELDS.get(path.stem, "score"))
        words = [len(t.split()) for t in data.texts]
        keep = sample_outputs(data.groups, max_outputs, seed, words, max_words)
        texts = fill_placeholders([data.texts[i] for i in keep], placeholders)
        genre = genres.get(data.name, data.name)
        out.append(TextSet(data.name, genre, tuple(texts), ("output",) * len(texts)))
    return out


def corpus_texts(corpus: Path, n_real: int, *, seed: int = 12345) -> TextSet:
    """`n_real` real sentences of `corpus` (the GLEU stage's part of Reuters, read and shuffled
    as `fluency train` reads it) and as many generated and corrupted ones, made by the default
    tier's recipe (`training.gleu.tiers.recipe`)."""
    from training.gleu.corpus import read_corpus
    from training.gleu.svm import make_dataset
    from training.gleu.tiers import recipe

    options = recipe("default")
    read = read_corpus(
        [str(corpus)],
        seed=seed,
        max_sentences=max(n_real * 4, 20000),
        passage_share=options["passage_share"],
    )
    if len(read.sentences) < n_real:
        raise ValueError(f"{corpus}: {len(read.sentences)} sentences, {n_real} asked for")
    texts, _, kinds = make_dataset(
        read.sentences,
        n_positive=n_real,
        glue_sizes=options["glue_sizes"],
        error_share=options["error_share"],
        error_kinds=options["error_kinds"],
        seed=seed,
        lowercase_share=options["lowercase_share"],
        bare_share=options["bare_share"],
    )
    return TextSet("gleu-corpus", "", tuple(texts), tuple(kinds))
