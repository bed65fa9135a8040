"""Link Grammar signals: the parser Mutton et al. (2007) used themselves (section 4).

Link Grammar either connects every word of a sentence with links its dictionary allows, or
(asked to) skips words, "null words", until the rest connects. How many it must skip, how many
linkages it finds and how many of those survive post-processing, and what the best one costs are
the fluency signals: a fluent sentence parses whole, cheaply, with many valid linkages.

Each sentence is parsed once, with null counts 0 then 1 (`_MAX_NULLS`): Link Grammar tries no
null words first and allows one only when nothing links, as its command-line parser does, but
capped. That one call gives exactly what a strict parse followed by a parse with a null gives, a
little faster (`tests/features/test_linkgrammar.py` checks the identity). The parse is bounded by
Link Grammar's own `max_parse_time` and `linkage_limit` (from `Resources`); a timeout becomes
the `timeout` flag with the "nothing linked" values, never an exception or a hang.

Input: the Sentence's tokens joined with single spaces (Link Grammar re-tokenises them; keeping
spaCy's tokens means every extractor sees the same words), proper nouns capitalised (see
`_PROPER`: the dictionary knows an unknown name only by its capital). Only the first
`MAX_WORDS` tokens are parsed: parse time grows steeply with length and, past ~60 words, even
the timeout overshoots by seconds. Control and format characters become spaces first: Link
Grammar 5.12 crashes the process (SIGILL) on an empty string or a NUL byte, so neither ever
reaches it.
"""

from __future__ import annotations

import bisect
import itertools
import logging
import math
import unicodedata
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from features.errors import ModelLoadError
from features.registry import feature
from features.sentence import Sentence

__all__ = [
    "MAX_WORDS",
    "NULL_SEARCH",
    "linkgrammar_features",
    "linkgrammar_nulls",
    "parse_one",
    "parse_with_nulls",
]

logger = logging.getLogger(__name__)

MAX_WORDS = 60  # tokens parsed per sentence; the rest are ignored (see the module docstring)
# Null parsing tries 1, 2, ... skipped words until something links, each try dearer than the
# last; past one null a sentence is plainly broken and the search only burns time, so the cap
# is 1 and `many_nulls` says when it was reached.
_MAX_NULLS = 1
# Null words `parse_with_nulls` looks for to say which words a broken sentence loses. The
# features never read them, and the search costs more than the features' own parse: on 71
# shuffled 15-25 word sentences that needed more than one null, 18 ms a sentence against 12 ms
# for `parse_one`, and only 20 of them linked with 2 or 3 nulls.
NULL_SEARCH = 3
# Link Grammar's limit on the length of "short" links (its CLI default is 16). 4, with the
# linkage limit of 30 in `Resources`, keeps Link Grammar near 5 ms a sentence while the null
# ratio separates real text from swapped text as well as with looser limits. The measurements
# behind these options, version by version: docs/benchmarks.md, "Link Grammar options".
_SHORT_LENGTH = 4

NAMES = (
    "null_ratio",
    "full_parse",
    "log_linkages_found",
    "log_valid_linkages",
    "valid_ratio",
    "disjunct_cost",
    "link_cost",
    "many_nulls",
    "timeout",
)


@dataclass
class _Parser:
    """The English dictionary and the two option sets, built once per process."""

    dictionary: Any
    options: Any  # ParseOptions: null words 0 to _MAX_NULLS, fewest first


def _route_messages(errinfo, _data) -> None:
    # LG prints dictionary notes ("No locale definition ...") and parse warnings to stderr by
    # default; a server must not spam its log, so they go to our logger at debug level.
    logger.debug("link-grammar %s: %s", errinfo.severity_label, str(errinfo.text).strip())


def _load(resources) -> _Parser:
    try:
        import linkgrammar as lg
    except ImportError as exc:
        raise ModelLoadError(
            "the Link Grammar Python bindings are not installed (Debian: apt-get install "
            "python3-link-grammar, then make them visible to this virtual environment)"
        ) from exc
    lg.LG_Error.set_handler(_route_messages)
    try:
        dictionary = lg.Dictionary("en")
    except lg.LG_Error as exc:
        raise ModelLoadError(f"cannot load Link Grammar's English dictionary: {exc}") from exc
    # LG takes whole seconds; 0 expires at once (every parse times out), never "no limit" (-1).
    seconds = max(0, math.ceil(resources.linkgrammar_timeout_s))
    limit = int(resources.linkgrammar_max_linkages)

    options = lg.ParseOptions(
        verbosity=0,
        min_null_count=0,
        max_null_count=_MAX_NULLS,
        linkage_limit=limit,
        max_parse_time=seconds,
        short_length=_SHORT_LENGTH,
    )
    parser = _Parser(dictionary, options)
    # The binding's Dictionary.__del__ calls into its module's globals. A parser still held at
    # interpreter exit (a module-level cache, a worker's state) was otherwise freed after those
    # globals were torn down, and printed "Exception ignored in: Dictionary.__del__ ...
    # TypeError". This frees the dictionary when the parser goes, or at exit (weakref.finalize
    # runs with atexit, before any module is torn down), whichever comes first; later calls of
    # __del__ find nothing left to free. Its sentences and linkages never outlive a parse.
    weakref.finalize(parser, _free, dictionary)
    return parser


def _free(dictionary) -> None:
    dictionary.__del__()


# A token spaCy tags as a proper noun (NNP, NNPS) reaches Link Grammar with a capital. Its
# dictionary reads an unknown capitalised word as a proper noun, but an unknown lower-case one
# only as a common noun, so the lower-cased names of NLG output ("22 hawthorne street") would
# cost null words their writers did not cause. Figures: docs/model.md, "Link Grammar".
_PROPER = ("NNP", "NNPS")


def _clean(sentence: Sentence) -> list[str]:
    return _words(sentence)[0]


def _words(sentence: Sentence) -> tuple[list[str], list[int]]:
    """The words Link Grammar is given, and for each the index of the token it came from."""
    words: list[str] = []
    owners: list[int] = []
    tags = sentence.tags  # one per token, or none (Sentence checks): a hand-made tree has none
    for i, token in enumerate(sentence.tokens[:MAX_WORDS]):
        if tags and tags[i] in _PROPER and token[:1].islower():
            token = token[:1].upper() + token[1:]
        # Control (Cc) and format (Cf) characters become spaces: they carry no words, and a NUL
        # would cut the C string short (or crash LG); then split again on any whitespace. A
        # printable ASCII token has neither, and is most tokens: it skips the look-ups.
        if token.isascii() and token.isprintable():
            text = token
        else:
            text = "".join(" " if unicodedata.category(c) in ("Cc", "Cf") else c for c in token)
        parts = text.split()
        words.extend(parts)
        owners.extend([i] * len(parts))
    return words, owners


def _empty(n_words: int) -> dict[str, float]:
    # Nothing parsed (no words, or no linkage before the timeout): every word counts as null.
    return dict.fromkeys(NAMES, 0.0) | {"null_ratio": 1.0 if n_words else 0.0}


def parse_one(sentence: Sentence, parser: _Parser) -> dict[str, float]:
    """The features of one sentence (see `linkgrammar_features` for what each means)."""
    return _parse(sentence, _words(sentence)[0], parser)[0]


def _parse(sentence: Sentence, words: list[str], parser: _Parser) -> tuple[dict[str, float], Any]:
    """The features, and the best linkage (None when nothing linked)."""
    import linkgrammar as lg

    clg = lg.Clinkgrammar  # the C API: counts the Python wrapper does not expose

    if not words:
        return _empty(0), None
    options = parser.options
    lg_sentence = lg.Sentence(" ".join(words), parser.dictionary, options)
    if lg_sentence.split() < 0:  # the tokenizer refused the text
        return _empty(len(words)), None
    timeout = False
    try:
        lg_sentence.parse(options)
    except lg.LG_TimerExhausted:
        timeout = True
    handle = lg_sentence._obj
    n_valid = clg.sentence_num_valid_linkages(handle)
    n_found = clg.sentence_num_linkages_found(handle)
    n_processed = clg.sentence_num_linkages_post_processed(handle)
    out = _empty(len(words)) | {"timeout": float(timeout)}
    if n_valid == 0 and not timeout:  # more than _MAX_NULLS words must be skipped
        out["null_ratio"] = min(_MAX_NULLS + 1, len(words)) / len(words)  # a lower bound
        out["many_nulls"] = 1.0
    if n_valid == 0:
        return out, None
    n_nulls = min(lg_sentence.null_count(), len(words))
    out["null_ratio"] = n_nulls / len(words)
    best = lg.Linkage(0, lg_sentence, options._obj)  # linkages come sorted, cheapest first
    out.update(
        full_parse=float(n_nulls == 0),
        log_linkages_found=math.log1p(max(n_found, 0)),
        log_valid_linkages=math.log1p(n_valid),
        valid_ratio=n_valid / n_processed if n_processed else 0.0,
        disjunct_cost=float(best.disjunct_cost()) / len(words),
        link_cost=float(best.link_cost()) / len(words),
    )
    return out, (lg_sentence, best)


def _null_tokens(parsed: Any, words: list[str], owners: list[int]) -> list[int]:
    """Token indices of the words the linkage skips (LG writes a null word in brackets). LG may
    split a word further; its character offsets into the joined words say whose part it is."""
    _, linkage = parsed
    starts = list(itertools.accumulate((len(w) + 1 for w in words), initial=0))
    out = set()
    for k in range(linkage.num_of_words()):
        if linkage.word(k).startswith("[") and linkage.word(k).endswith("]"):
            w = bisect.bisect_right(starts, linkage.word_char_start(k)) - 1
            out.add(owners[min(max(w, 0), len(owners) - 1)])
    return sorted(out)


def parse_with_nulls(
    sentence: Sentence, parser: _Parser, *, max_nulls: int = NULL_SEARCH
) -> tuple[dict[str, float], list[int] | None]:
    """`parse_one`'s features, from the same parse, and which tokens Link Grammar skips in its
    cheapest linkage: token indices, [] when the sentence parses whole. When more than one word
    must be skipped (`many_nulls`) a second parse looks for 2 to `max_nulls` null words (a
    few milliseconds: only broken sentences pay it); None when that finds nothing either, or
    a parse timed out. Only the first MAX_WORDS tokens are ever parsed."""
    import linkgrammar as lg

    words, owners = _words(sentence)
    row, parsed = _parse(sentence, words, parser)
    if parsed is not None:
        return row, _null_tokens(parsed, words, owners) if row["null_ratio"] > 0 else []
    if not words or row["many_nulls"] != 1.0 or max_nulls <= _MAX_NULLS:
        return row, [] if not words else None
    options = lg.ParseOptions(
        verbosity=0,
        min_null_count=_MAX_NULLS + 1,
        max_null_count=max_nulls,
        linkage_limit=parser.options.linkage_limit,
        max_parse_time=parser.options.max_parse_time,
        short_length=_SHORT_LENGTH,
    )
    lg_sentence = lg.Sentence(" ".join(words), parser.dictionary, options)
    if lg_sentence.split() < 0:
        return row, None
    try:
        lg_sentence.parse(options)
    except lg.LG_TimerExhausted:
        return row, None
    if lg.Clinkgrammar.sentence_num_valid_linkages(lg_sentence._obj) == 0:
        return row, None
    best = lg.Linkage(0, lg_sentence, options._obj)
    return row, _null_tokens((lg_sentence, best), words, owners)


def linkgrammar_nulls(
    sentences: Sequence[Sentence], resources, *, max_nulls: int = NULL_SEARCH
) -> list[tuple[dict[str, float], list[int] | None]]:
    """`linkgrammar_features` with each sentence's skipped tokens (`parse_with_nulls`);
    `max_nulls` 1 adds no parse at all (a sentence needing more nulls gets None)."""
    parser = resources.get("linkgrammar", _load)
    return [parse_with_nulls(s, parser, max_nulls=max_nulls) for s in sentences]


@feature("linkgrammar.v5", names=NAMES, requires=("linkgrammar",))
def linkgrammar_features(sentences: Sequence[Sentence], resources) -> list[dict[str, float]]:
    """Link Grammar parse of each sentence's first 60 tokens (`words` = those tokens).

    - null_ratio: words skipped to get any linkage / words; 0 (parses whole) to 1; higher is less
      fluent. At most 1 null is searched for: when more are needed it is the lower bound
      2 / words and many_nulls is 1; when nothing linked before the timeout, 1.
    - full_parse: 1 if a linkage with no null words exists, else 0; higher is more fluent.
    - log_linkages_found: log(1 + linkages the parser counted) in the final pass (the no-null
      pass if it linked, else the pass with a null); more readings of the same words, often longer
      and more ambiguous sentences. 0 when nothing linked.
    - log_valid_linkages: log(1 + linkages without post-processing violations), among the
      `linkage_limit` post-processed; 0 when nothing linked.
    - valid_ratio: valid / post-processed linkages, 0 to 1 (the paper's "invalid parses" turned
      into a share); higher is more fluent; 0 when nothing linked.
    - disjunct_cost, link_cost: the best linkage's disjunct cost (dictionary penalties for rare
      word uses) and link cost (total link length) per word; lower is more fluent; 0 when nothing
      linked: with the many_nulls and timeout flags that is missing-value coding (zero plus an
      indicator), which lets a linear model learn its own value for "no linkage".
    - many_nulls: 1 if no linkage skips at most 1 word, else 0; higher is less fluent.
    - timeout: 1 if a pass hit `max_parse_time` (the other values are then partial), else 0.
    """
    parser = resources.get("linkgrammar", _load)
    return [parse_one(s, parser) for s in sentences]
