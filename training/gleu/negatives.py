"""Negative (disfluent) examples: Mutton et al. (2007) word-sequence gluing, and real errors.

Gluing, section 3.2: to make a sentence of n tokens from sequences of length l, choose the first
sequence's first word by its unigram probability and the sequence uniformly among corpus
sequences of length l starting with it; choose each next sequence's first word by the bigram
probability P(w_j,1 | w_j-1,l), again followed by a uniformly chosen sequence. l = n copies a
real sentence. We generalise to any n (the last sequence is cut when l does not divide n).

Departures, where the paper is silent: sequences never cross a sentence boundary, and with
`anchor=True` (default) the first sequence starts a corpus sentence and the last token is final
punctuation, so the model cannot learn "starts in lower case / stops mid-air" instead of fluency.
Tokens keep their own trailing whitespace, so the text reads like text.

Real errors (what generators and MT systems get wrong, so the model learns more than word
salad): one adjacent swap, a dropped word, a duplicated word, a wrong inflection; and two that
data-to-text and summarisation systems make whole sentences of: a sentence cut short (a decoder
that stops early, or at its length limit: the first 40-80% of the words, then a full stop, so
"no final punctuation" is never the tell) and a sentence without its main verb (spaCy's root,
when it is a verb, deleted: a list of noun phrases where a clause should be). Last, "noise":
30-100% of the words replaced by symbols, emoji, numbers or non-Latin script, the degenerate
output a broken decoder or tokenizer gives, so that a model trained on English words has seen
such text.

Three more are in the default mix: "repeat", a run of 2-6 words said twice in a row ("raised
its main interest rate by half a point half a point on Thursday"), the classic failure of
neural decoders; "fragment", a run of 1-4 words of the sentence and nothing else, the stub a
data-to-text system emits when it fails; and "garbage", 1-3 symbols or emoji put between the
words of an intact sentence, the debris of a broken decoder or detokenizer, which the
`surface.v2/junk_ratio` feature measures. Truncation, drop_verb and noise stay out of the
default: with them agreement with human judgements fell on every development set, and noise
teaches that numbers and punctuation are bad, which raters of restaurant and hotel outputs do
not think. The measurements behind the default mix: docs/model.md, "Negatives".
"""

from __future__ import annotations

import bisect
import itertools
import random
from collections import Counter, defaultdict
from collections.abc import Sequence

from features.parsing import parse
from features.surface import is_junk
from scorer.errors import InputError

__all__ = ["ALL_ERROR_KINDS", "ERROR_KINDS", "Glue", "inject_error", "join_tokens"]

ERROR_KINDS = ("swap", "drop", "duplicate", "inflection", "repeat", "fragment", "garbage")
# Every kind inject_error knows; ERROR_KINDS is what `fluency train` uses unless told otherwise.
ALL_ERROR_KINDS = (*ERROR_KINDS, "truncate", "drop_verb", "noise")
# What "noise" puts in place of words: symbols, emoji, digits, other scripts, markup debris.
_NOISE = (
    "★",
    "☆",
    "♦",
    "∑",
    "∫",
    "∂",
    "√",
    "≈",
    "±",
    "→",
    "⇒",
    "…",
    "§",
    "¶",
    "†",
    "©",
    "®",
    "™",
    "😀",
    "😂",
    "👍",
    "🔥",
    "🎉",
    "❤",
    "✓",
    "✗",
    "#",
    "@",
    "&",
    "*",
    "%",
    "$",
    "|",
    "~",
    "^",
    "0",
    "7",
    "42",
    "1999",
    "3.14",
    "10,000",
    "#1",
    "@@",
    "<unk>",
    "<s>",
    "</s>",
    "[CLS]",
    "##ing",
    "▁the",
    "...",
    "--",
    "//",
    "::",
    "__",
    "北京",
    "的",
    "東京",
    "Привет",
    "мир",
    "مرحبا",
    "שלום",
    "नमस्ते",
    "γεια",
    "λόγος",
)
# What "garbage" puts between words: the symbols and emoji among them, exactly what the
# `surface.v2/junk_ratio` feature counts.
_JUNK = tuple(t for t in _NOISE if is_junk(t))
_NEEDS_PARSE = {"inflection", "drop_verb"}
_FINAL = (".", "!", "?")


def _word(token: str) -> str:
    return token.strip()


def join_tokens(tokens: Sequence[str], junctions: Sequence[int] = ()) -> str:
    """Concatenate tokens-with-whitespace; at a junction add a space if words would touch."""
    out = []
    marks = set(junctions)
    for i, tok in enumerate(tokens):
        if i in marks and out and not out[-1].endswith((" ", "\n")) and tok[:1].isalnum():
            out[-1] += " "
        out.append(tok)
    return " ".join("".join(out).split())


class _Weighted:
    """Sample keys in proportion to counts (cumulative sums + bisect)."""

    def __init__(self, counts: Counter):
        self.keys = list(counts)
        self.cum = list(itertools.accumulate(counts[k] for k in self.keys))

    def sample(self, rng: random.Random):
        return self.keys[bisect.bisect_right(self.cum, rng.random() * self.cum[-1])]


class Glue:
    """Mutton et al.'s generator over a corpus of tokenised sentences (tokens with whitespace)."""

    def __init__(self, sentences: Sequence[Sequence[str]], *, anchor: bool = True):
        if not sentences:
            raise InputError("cannot generate negatives from an empty corpus")
        self.sentences = [tuple(s) for s in sentences]
        self.anchor = anchor
        self._bigrams: dict[str, Counter] = defaultdict(Counter)
        for s in self.sentences:
            for a, b in itertools.pairwise(s):
                self._bigrams[_word(a)][_word(b)] += 1
        self._index: dict[int, tuple] = {}
        self._next_cache: dict[tuple[int, str], _Weighted | None] = {}

    def _starts(self, l: int):
        """Length l: word -> where an l-sequence starts; first-word and unigram samplers."""
        if l not in self._index:
            starts: dict[str, list[tuple[int, int]]] = defaultdict(list)
            initial: Counter = Counter()
            for si, s in enumerate(self.sentences):
                for p in range(len(s) - l + 1):
                    starts[_word(s[p])].append((si, p))
                if len(s) >= l:
                    initial[_word(s[0])] += 1
            unigram = Counter({w: len(v) for w, v in starts.items()})
            if not unigram:
                raise InputError(f"no corpus sentence has {l} tokens; use a shorter sequence size")
            first = _Weighted(initial if self.anchor else unigram)
            self._index[l] = (starts, first, _Weighted(unigram))
        return self._index[l]

    def _next_word(self, l: int, prev: str, rng: random.Random) -> str:
        starts, _, unigram = self._starts(l)
        key = (l, prev)
        if key not in self._next_cache:
            follow = Counter({w: c for w, c in self._bigrams.get(prev, {}).items() if w in starts})
            self._next_cache[key] = _Weighted(follow) if follow else None
        sampler = self._next_cache[key]
        return (sampler or unigram).sample(rng)

    def generate(self, n: int, l: int, rng: random.Random) -> str:
        """One glued 'sentence' of n tokens from sequences of length l (l >= n: a real one)."""
        if n < 1 or l < 1:
            raise InputError(f"sentence length {n} and sequence size {l} must be positive")
        if l >= n:
            real = [s for s in self.sentences if len(s) == n] or [
                s for s in self.sentences if len(s) >= n
            ]
            if not real:
                raise InputError(f"no corpus sentence has {n} tokens")
            return join_tokens(rng.choice(real)[:n])
        starts, first, _ = self._starts(l)
        tokens: list[str] = []
        junctions: list[int] = []
        word = first.sample(rng)
        while len(tokens) < n:
            if tokens:
                word = self._next_word(l, _word(tokens[-1]), rng)
            positions = starts[word]
            if self.anchor and not tokens:
                positions = [sp for sp in positions if sp[1] == 0] or positions
            si, p = rng.choice(positions)
            junctions.append(len(tokens))
            tokens.extend(self.sentences[si][p : p + min(l, n - len(tokens))])
        if self.anchor and not _word(tokens[-1]).endswith(_FINAL):
            if any(c.isalnum() for c in tokens[-1]):
                tokens[-1] = tokens[-1].rstrip()
                tokens.append(".")
            else:  # a trailing comma or bracket becomes the full stop
                tokens[-1] = "."
        return join_tokens(tokens, junctions)


def _inflect(word: str, tag: str, lemma: str) -> str | None:
    """A wrong form for a noun or verb: plural <-> singular, finite verb -> base or -s form."""
    low = lemma.lower()
    if tag == "NNS" and low != word.lower():
        return low
    if tag == "NN" and word.isalpha():
        return word + ("es" if word.endswith(("s", "x", "ch", "sh")) else "s")
    if tag in ("VBD", "VBZ", "VBG", "VBN") and low != word.lower():
        return low
    if tag == "VBP" and word.isalpha():
        return word + "s"
    return None


def inject_error(
    tokens: Sequence[str], kind: str, rng: random.Random, *, tags=None, lemmas=None, deps=None
) -> str | None:
    """`tokens` (with whitespace) with one error of `kind`; None when the sentence has no place
    for it (too short, no inflectable word, no verb at the root). `tags` and `lemmas` (for
    inflection) and `tags` and `deps` (for drop_verb) are spaCy's, one per token."""
    toks = list(tokens)
    words = [i for i, t in enumerate(toks) if any(c.isalpha() for c in t)]
    if kind == "swap":
        pairs = [i for i in words if i + 1 < len(toks) and _word(toks[i]) != _word(toks[i + 1])]
        if not pairs:
            return None
        i = rng.choice(pairs)
        a, b = _word(toks[i]), _word(toks[i + 1])
        toks[i] = b + toks[i][len(toks[i].rstrip()) :]
        toks[i + 1] = a + toks[i + 1][len(toks[i + 1].rstrip()) :]
        if i == 0 and a[:1].isupper():  # keep the capital at the start of the sentence
            toks[0] = toks[0][:1].upper() + toks[0][1:]
            toks[1] = toks[1][:1].lower() + toks[1][1:] if a[1:2].islower() else toks[1]
    elif kind == "drop":
        if len(words) < 3:
            return None
        del toks[rng.choice(words)]
    elif kind == "duplicate":
        if not words:
            return None
        i = rng.choice(words)
        toks.insert(i + 1, _word(toks[i]) + " ")
        toks[i] = _word(toks[i]) + " "
    elif kind == "inflection":
        if tags is None or lemmas is None:
            raise InputError("an inflection error needs the sentence's tags and lemmas")
        options = [
            (i, w)
            for i, (t, tg, lm) in enumerate(zip(toks, tags, lemmas, strict=True))
            if (w := _inflect(_word(t), tg, lm)) and w != _word(t)
        ]
        if not options:
            return None
        i, w = rng.choice(options)
        toks[i] = w + toks[i][len(toks[i].rstrip()) :]
    elif kind == "noise":
        if not words:
            return None
        share = rng.uniform(0.3, 1.0)
        chosen = rng.sample(words, max(1, round(share * len(words))))
        for i in chosen:
            toks[i] = rng.choice(_NOISE) + toks[i][len(toks[i].rstrip()) :]
    elif kind == "truncate":
        if len(words) < 6:
            return None
        keep = rng.randint(
            max(3, round(0.4 * len(toks))), min(len(toks) - 2, round(0.8 * len(toks)))
        )
        toks = toks[:keep]
        while toks and not any(c.isalnum() for c in toks[-1]):  # no ", ." at the cut
            toks.pop()
        toks[-1] = toks[-1].rstrip()
        toks.append(".")
    elif kind == "repeat":
        if len(words) < 4:
            return None
        size = rng.randint(2, min(6, len(words) - 1))
        # the run starts at a word and ends at the last word at the latest (never "... ." twice)
        start = rng.choice([i for i in words if i + size - 1 <= words[-1]])
        end = start + size
        span = toks[start:end]  # the second copy keeps the original spacing after the run
        toks[end - 1] = _word(toks[end - 1]) + " "
        toks[end:end] = span
    elif kind == "fragment":
        if len(words) < 2:
            return None
        size = rng.randint(1, min(4, len(words) - 1))
        start = rng.randrange(len(words) - size + 1)
        toks = toks[words[start] : words[start + size - 1] + 1]
        toks[-1] = toks[-1].rstrip()
    elif kind == "garbage":
        # A broken decoder's debris in an otherwise intact sentence: 1-3 symbols or emoji put
        # between its words (digits, letters and ASCII signs left out: those are text).
        if len(toks) < 2:
            return None
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(1, len(toks))
            if not toks[at - 1][-1:].isspace():  # never glued to the word before: "rate★"
                toks[at - 1] += " "
            toks.insert(at, rng.choice(_JUNK) + " ")
    elif kind == "drop_verb":
        if tags is None or deps is None:
            raise InputError("a drop_verb error needs the sentence's tags and dependency labels")
        roots = [i for i, (d, tg) in enumerate(zip(deps, tags, strict=True)) if d == "ROOT"]
        if len(words) < 4 or len(roots) != 1 or not tags[roots[0]].startswith("VB"):
            return None
        del toks[roots[0]]
        if roots[0] == 0 and toks:  # the new first word takes the capital
            toks[0] = toks[0][:1].upper() + toks[0][1:]
    else:
        raise InputError(f"unknown error kind {kind!r}; one of {', '.join(ALL_ERROR_KINDS)}")
    return join_tokens(toks)


def inject_errors(
    sentences: Sequence[Sequence[str]], kinds: Sequence[str], seed: int
) -> list[tuple[str, str]]:
    """One error per sentence, kinds cycling; (text, kind) for those that could take one."""
    rng = random.Random(seed)
    need = [i for i, _ in enumerate(sentences) if kinds[i % len(kinds)] in _NEEDS_PARSE]
    parsed = dict(zip(need, parse(["".join(sentences[i]) for i in need]), strict=True))
    out = []
    for i, toks in enumerate(sentences):
        kind = kinds[i % len(kinds)]
        extra = {}
        if kind in _NEEDS_PARSE:
            p = parsed[i]
            if p.n_tokens != len(toks):
                continue
            extra = {"tags": p.tags, "lemmas": p.lemmas, "deps": p.deps}
        text = inject_error(toks, kind, rng, **extra)
        if text:
            out.append((text, kind))
    return out
