"""Link Grammar signals: the parser Mutton et al. (2007) used themselves (section 4).

Link Grammar either connects every word of a sentence with links its dictionary allows, or
(asked to) skips words, "null words", until the rest connects. How many it must skip, how many
linkages it finds and how many of those survive post-processing, and what the best one costs are
the fluency signals: a fluent sentence parses whole, cheaply, with many valid linkages.

Each sentence is parsed once, with null counts 0 then 1 (`_MAX_NULLS`): Link Grammar tries no
null words first and allows one only when nothing links, as its command-line parser does, but
capped. That one call gives exactly what a strict parse followed by a parse with a null gives, a
little faster (measured: see below `_SHORT_LENGTH`). The parse is bounded by
Link Grammar's own `max_parse_time` and `linkage_limit` (from `Resources`); a timeout becomes
the `timeout` flag with the "nothing linked" values, never an exception or a hang.

Input: the Sentence's tokens joined with single spaces (Link Grammar re-tokenises them; keeping
spaCy's tokens means every extractor sees the same words), proper nouns capitalised (v5, see
`_PROPER`: the dictionary knows an unknown name only by its capital). Only the first
`MAX_WORDS` tokens are parsed: parse time grows steeply with length and, past ~60 words, even
the timeout overshoots by seconds. Control and format characters become spaces first: Link
Grammar 5.12 crashes the process (SIGILL) on an empty string or a NUL byte, so neither ever
reaches it.
"""

from __future__ import annotations

import logging
import math
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from features.errors import ModelLoadError
from features.registry import feature
from features.sentence import Sentence

__all__ = ["MAX_WORDS", "linkgrammar_features", "parse_one"]

logger = logging.getLogger(__name__)

MAX_WORDS = 60  # tokens parsed per sentence; the rest are ignored (see the module docstring)
# Null parsing tries 1, 2, ... skipped words until something links, each try dearer than the
# last; past a few nulls a sentence is plainly broken and the search only burns time. Measured on
# 80 shuffled Reuters test sentences (1 s limit, short_length 8): any number of nulls 6.3
# sentences/s with 6% timeouts, at most 6 nulls 11/s, at most 3 nulls 26/s with none. Past the
# cap, `many_nulls` says so. v1-v3: 3; v4: 1 (see the v4 note below).
_MAX_NULLS = 1
# Link Grammar's limit on the length of "short" links (the CLI default is 16). v1/v2: 8, which made
# shuffled text 1.5x faster to parse (4.1 -> 6.3 sentences/s, 80 sentences); on 500 real Reuters
# test sentences, full parses went from 76.0% to 74.6%. v3: 6. Measured on 200 Reuters test
# sentences of 15-25 words, the same with one adjacent swap and shuffled (one process, linkage
# limit 100, up to 3 nulls; /tmp script in session 4): real text 12.95 -> 10.53 ms a sentence
# (all three sets 16.8 -> 13.0), full parses of real text the same (0.710), and the null
# ratio separates better: AUC real-vs-swap 0.653 -> 0.664, real-vs-shuffled 0.967 -> 0.970.
# v4: 4 (see the v4 note below).
_SHORT_LENGTH = 4
# Session 5: one call with null counts 0..3 instead of a no-null call and then, when that found
# nothing, a second call with 1..3 on the same Sentence. Link Grammar does the same search
# either way: on 300 Reuters test sentences of 15-25 words (1 process) null counts, linkages
# found and valid linkages were identical for all 300, and the time 11.23 -> 10.73 ms a sentence
# (/tmp script; `tests/features/test_linkgrammar.py` checks the identity on shuffled text).
# v2: `Resources.linkgrammar_max_linkages` is 100 (v1: 1000). Link Grammar post-processes up to
# that many linkages per parse (a random sample when it counts more), and that step was two
# thirds of its time. Measured on 200 Reuters test sentences of 15-25 words, the same sentences
# with one adjacent swap and shuffled (/tmp script, 1 process, short_length 8, up to 3 nulls):
# 1000 -> 100 took real text from 39.8 to 13.6 ms a sentence (swap 52.8 -> 16.6, shuffled
# 43.4 -> 23.4), full parses stayed 0.81 / 0.48 / 0.01 and the null ratio's AUC real-vs-swap
# 0.668 -> 0.666; at 10 full parses fell to 0.77 (the valid linkage is not always sampled).
# v4 (session 6), for the speed target: linkage limit 30 (`Resources`), short links of at most 4
# words, at most 1 null. Measured on 300 Reuters test sentences of 15-25 words, the same with one
# adjacent swap and shuffled (one process; `build/exp/lgopts.py`, not shipped), v3 -> v4: real
# text 9.26 -> 5.36 ms a sentence (swap 9.89 -> 5.62, shuffled 12.32 -> 4.42); full parses of real
# text 0.707 -> 0.653, of swapped 0.433 -> 0.377 (the same gap); AUC real-vs-swap of null_ratio
# 0.642 both, of log_valid_linkages 0.518 -> 0.556; real-vs-shuffled null_ratio 0.968 -> 0.927
# but log_valid_linkages, valid_ratio, disjunct_cost, link_cost 0.65-0.77 -> 0.88-0.90 (the
# "nothing linked" coding now covers most shuffles). Short length 3 lost more full parses (0.557)
# and separated worse; linkage limits 20 and 50 changed little.

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
    return _Parser(dictionary, options)


# v5 (session 7): a token spaCy tags as a proper noun (NNP, NNPS) reaches Link Grammar with a
# capital. Its dictionary lists few names; it reads an unknown capitalised word as a proper noun
# (which may also modify: "the Hawthorne area"), but an unknown lower-case one only as a common
# noun, so the lower-cased names of NLG output ("22 hawthorne street", "hong kong clay pot
# restaurant"; WebNLG 2017 outputs are all lower case) cost null words their writers did not
# cause. Full parses of ../shared/dev system outputs, v4 -> v5: WebNLG 0.338 -> 0.492, SF hotels
# 0.529 -> 0.569, SF restaurants 0.414 -> 0.435; of the default training texts 2.9% change at
# all. The default recipe refitted on v5 (build/exp2 scratch fits), Spearman with people
# (WebNLG / BAGEL / SF hotels / SF restaurants) 0.499 / 0.345 / 0.265 / 0.263 -> 0.515 / 0.346
# / 0.272 / 0.271, and with training seed 777 0.518 / 0.331 / 0.259 / 0.259 -> 0.532 / 0.331 /
# 0.262 / 0.265. The same for benepar's input did not help (0.516 / 0.346 / 0.273 / 0.271).
_PROPER = ("NNP", "NNPS")


def _clean(sentence: Sentence) -> list[str]:
    words = []
    tags = sentence.tags  # one per token, or none (Sentence checks): a hand-made tree has none
    for i, token in enumerate(sentence.tokens[:MAX_WORDS]):
        if tags and tags[i] in _PROPER and token[:1].islower():
            token = token[:1].upper() + token[1:]
        # Control (Cc) and format (Cf) characters become spaces: they carry no words, and a NUL
        # would cut the C string short (or crash LG); then split again on any whitespace.
        text = "".join(" " if unicodedata.category(c) in ("Cc", "Cf") else c for c in token)
        words.extend(text.split())
    return words


def _empty(n_words: int) -> dict[str, float]:
    # Nothing parsed (no words, or no linkage before the timeout): every word counts as null.
    return dict.fromkeys(NAMES, 0.0) | {"null_ratio": 1.0 if n_words else 0.0}


def parse_one(sentence: Sentence, parser: _Parser) -> dict[str, float]:
    """The features of one sentence (see `linkgrammar_features` for what each means)."""
    import linkgrammar as lg

    clg = lg.Clinkgrammar  # the C API: counts the Python wrapper does not expose

    words = _clean(sentence)
    if not words:
        return _empty(0)
    options = parser.options
    lg_sentence = lg.Sentence(" ".join(words), parser.dictionary, options)
    if lg_sentence.split() < 0:  # the tokenizer refused the text
        return _empty(len(words))
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
        return out
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
    return out


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
