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
    passage_share: float = 0.0,
    max_passage: int = 3,
) -> Corpus:
    """Split, deduplicate and length-filter; shuffle with `seed`, then keep `max_sentences`.

    `final_punct` keeps only sentences ending in . ! ? (or a quote after one): news corpora hold
    tables and headlines ("Avg shrs 13.9 mln vs 10.5 mln") that are no model of fluent prose.

    `passage_share`: that share of the items (drawn with `seed`) are passages, 2 to
    `max_passage` sentences that follow each other in the same paragraph, kept whole as one item
    of at most `max_tokens` tokens. Generators often write several sentences (40% of WebNLG 2017's
    outputs); a model that saw only single sentences learns that a second sentence root is a
    fragment, a sign of word salad, and ranks well-formed multi-sentence texts low. Passages did
    not help, neither with human judgements nor on a two-sentence text against its run-on
    version, so the default is 0 (docs/model.md, "Decisions").
    """
    if not 0.0 <= passage_share < 1.0:
        raise InputError(f"passage share must lie in [0, 1); got {passage_share}")
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

    joiner = random.Random(seed + 2)  # a stream of its own: passage_share=0 leaves the rest as is
    docs = nlp.pipe(paragraphs(), batch_size=256)
    for doc in tqdm(docs, desc="splitting", unit=" paragraphs", disable=not progress):
        kept: list[tuple[int, tuple[str, ...], int]] = []  # (position in doc, tokens, words)
        for position, sent in enumerate(doc.sents):
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
            kept.append((position, tokens, n))
        if passage_share > 0:
            kept = _passages(kept, joiner, passage_share, max_passage, max_tokens)
        out.extend(tokens for _, tokens, _ in kept)
    random.Random(seed).shuffle(out)
    if max_sentences is not None:
        out = out[:max_sentences]
    logger.info("%d sentences from %s", len(out), ", ".join(sources))
    return Corpus(out, sources, digest.hexdigest())


def _passages(kept, rng: random.Random, share: float, longest: int, max_tokens: int) -> list:
    """Join runs of sentences adjacent in their paragraph so that about `share` of the items are
    passages of 2 to `longest` sentences: each item starts a passage with chance `share` (fewer
    when the paragraph ends first). A sentence left out by a filter breaks a run: only text
    that really followed is joined."""
    out, i = [], 0
    while i < len(kept):
        if rng.random() < share:
            want = rng.randint(2, longest)
            j = i + 1
            words = kept[i][2]
            while (
                j < len(kept)
                and j - i < want
                and kept[j][0] == kept[j - 1][0] + 1
                and words + kept[j][2] <= max_tokens
            ):
                words += kept[j][2]
                j += 1
            if j - i >= 2:
                tokens = tuple(t for _, toks, _ in kept[i:j] for t in toks)
                out.append((kept[i][0], tokens, words))
                i = j
                continue
        out.append(kept[i])
        i += 1
    return out


def split_documents(
    source: str | Path, out_a: str | Path, out_b: str | Path, *, share_b: float, seed: int
) -> tuple[int, int]:
    """Split a file of documents (blocks separated by blank lines) into two files, documents
    drawn at random (seeded) for `out_b`. Returns the document counts.

    Why: the fluency model's real sentences must not be in its language model's training text,
    or the LM has memorised them and the SVM learns to trust it too much (real held-out text then
    scores far lower than training text). `fluency train-lm` gets part A, `fluency train` part B.
    """
    if not 0 < share_b < 1:
        raise InputError(f"share must lie in (0, 1); got {share_b}")
    try:
        text = Path(source).read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read {source}: {exc.strerror}") from exc
    docs = [d.strip("\n") for d in text.split("\n\n") if d.strip()]
    rng = random.Random(seed)
    chosen = set(rng.sample(range(len(docs)), round(len(docs) * share_b)))
    a = [d for i, d in enumerate(docs) if i not in chosen]
    b = [d for i, d in enumerate(docs) if i in chosen]
    for path, part in ((out_a, a), (out_b, b)):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text("\n\n".join(part) + "\n", encoding="utf-8")
    return len(a), len(b)


def add_commands(sub) -> None:
    ap = sub.add_parser(
        "split-corpus",
        help="split a file of documents in two (language-model part, fluency-model part)",
        description=split_documents.__doc__,
    )
    ap.add_argument("--corpus", required=True, help="file of blank-line-separated documents")
    ap.add_argument("--out-a", required=True, help="the larger part (language model)")
    ap.add_argument("--out-b", required=True, help="the held-out part (fluency model)")
    ap.add_argument("--share-b", type=float, default=0.2)
    ap.add_argument("--seed", type=int, default=12345)

    def run(args, config) -> int:
        n_a, n_b = split_documents(
            args.corpus, args.out_a, args.out_b, share_b=args.share_b, seed=args.seed
        )
        print(f"{n_a} documents to {args.out_a}, {n_b} to {args.out_b}")
        return 0

    ap.set_defaults(func=run)
