"""Training sentences from plain-text files, folders, or NLTK corpora by name.

Plain text may hold paragraphs (one a line, blank lines between documents) or one sentence a
line: either way spaCy's statistical sentence recogniser (`senter`, which runs without the parser
at ~80,000 words/s) splits it, with the tokenizer the scorer uses. Each sentence is kept as its
tokens *with their trailing whitespace*, so glued negatives read like real text, not like
space-separated tokens (a difference the model would otherwise learn instead of fluency).
"""

from __future__ import annotations

import hashlib
import logging
import random
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from scorer.errors import InputError

__all__ = ["Corpus", "iter_paragraphs", "read_corpus"]

logger = logging.getLogger(__name__)
NLTK_CORPORA = ("brown", "treebank", "gutenberg", "reuters", "webtext")


@dataclass(frozen=True)
class Corpus:
    """`sentences[i]`: tokens with trailing whitespace; `"".join(s).strip()` is the text."""

    sentences: list[tuple[str, ...]]
    sources: tuple[str, ...]
    sha256: str  # of the raw text read, in order

    def texts(self) -> list[str]:
        return ["".join(s).strip() for s in self.sentences]


def _nltk_paragraphs(name: str) -> Iterator[str]:
    import nltk
    from nltk.tokenize.treebank import TreebankWordDetokenizer

    try:
        reader = getattr(nltk.corpus, name)
        sents = reader.sents()
        _ = sents[0]
    except (LookupError, AttributeError, OSError) as exc:
        raise InputError(
            f"NLTK corpus {name!r} is not available ({str(exc).splitlines()[0][:80]}); "
            "set NLTK_DATA to a folder that holds it"
        ) from exc
    detok = TreebankWordDetokenizer()
    for words in sents:
        # Brown marks quotes as `` and ''; the detokenizer turns them back into " marks.
        yield detok.detokenize([w for w in words if w])


def _ends_a_sentence(text: str) -> bool:
    return text.rstrip("\"'”’) ").endswith((".", "!", "?"))


def iter_paragraphs(source: str) -> Iterator[str]:
    """Non-empty lines of a file, of every *.txt file under a folder, or an NLTK corpus."""
    path = Path(source)
    if path.is_dir():
        files = sorted(p for p in path.rglob("*.txt") if p.is_file())
        if not files:
            raise InputError(f"folder {source} holds no .txt files")
    elif path.is_file():
        files = [path]
    elif source in NLTK_CORPORA or source.startswith("nltk:"):
        yield from _nltk_paragraphs(source.removeprefix("nltk:"))
        return
    else:
        raise InputError(
            f"corpus {source!r} is neither a file, a folder, nor an NLTK corpus name "
            f"({', '.join(NLTK_CORPORA)})"
        )
    for f in files:
        try:
            with f.open(encoding="utf-8", errors="replace") as fh:
                for line in fh:
                    if line.strip():
                        yield line.strip()
        except OSError as exc:
            raise InputError(f"cannot read {f}: {exc.strerror}") from exc


def _splitter(model: str | Sequence[str] | None):
    import spacy

    from features.parsing import DEFAULT_MODELS

    names = DEFAULT_MODELS if model is None else ([model] if isinstance(model, str) else model)
    for name in names:
        try:
            nlp = spacy.load(
                name,
                exclude=["tok2vec", "tagger", "parser", "attribute_ruler", "lemmatizer", "ner"],
            )
        except OSError:
            continue
        nlp.enable_pipe("senter")
        return nlp
    raise InputError(f"no spaCy pipeline among {names} to split sentences with")


def read_corpus(
    sources: Iterable[str],
    *,
    min_tokens: int = 5,
    max_tokens: int = 60,
    max_sentences: int | None = None,
    seed: int = 12345,
    model: str | Sequence[str] | None = None,
    progress: bool = True,
    final_punct: bool = True,
) -> Corpus:
    """Split, deduplicate and length-filter; shuffle with `seed`, then keep `max_sentences`.

    `final_punct` keeps only sentences ending in . ! ? (or a quote after one): news corpora hold
    tables and headlines ("Avg shrs 13.9 mln vs 10.5 mln") that are no model of fluent prose.
    """
    sources = tuple(sources)
    if not sources:
        raise InputError("no corpus given")
    nlp = _splitter(model)
    digest = hashlib.sha256()
    seen: set[str] = set()
    out: list[tuple[str, ...]] = []

    def paragraphs() -> Iterator[str]:
        for src in sources:
            for para in iter_paragraphs(src):
                digest.update(para.encode("utf-8") + b"\n")
                yield para

    docs = nlp.pipe(paragraphs(), batch_size=256)
    for doc in tqdm(docs, desc="splitting", unit=" paragraphs", disable=not progress):
        for sent in doc.sents:
            tokens = tuple(t.text_with_ws for t in sent)
            n = sum(1 for t in sent if not t.is_space)
            if not min_tokens <= n <= max_tokens:
                continue
            if final_punct and not _ends_a_sentence(sent.text):
                continue
            key = " ".join(sent.text.split()).lower()
            if key in seen:
                continue
            seen.add(key)
            out.append(tokens)
    random.Random(seed).shuffle(out)
    if max_sentences is not None:
        out = out[:max_sentences]
    logger.info("%d sentences from %s", len(out), ", ".join(sources))
    return Corpus(out, sources, digest.hexdigest())
