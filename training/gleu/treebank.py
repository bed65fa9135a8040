"""The Penn Treebank as the parser is trained and scored on it: trees read by NLTK and cleaned
as parsers are trained on them (`clean_tree`), split by position (`split_treebank`), and
labelled bracket precision, recall and F1 as evalb reports them under COLLINS.prm
(`bracket_score`).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from scorer.errors import InputError

__all__ = [
    "BracketScore",
    "bracket_score",
    "clean_tree",
    "read_treebank",
    "split_treebank",
    "treebank_hash",
]


def read_treebank(source: str = "treebank") -> list:
    """Gold trees, cleaned (`clean_tree`), in corpus order. `source`: an NLTK corpus name found
    on NLTK's data path (NLTK_DATA), an nltk_data folder holding `corpora/treebank.zip`, or a
    folder of `.mrg` files."""
    import nltk
    from nltk.corpus.reader import BracketParseCorpusReader
    from tqdm import tqdm

    path = Path(source)
    if path.is_dir() and str(path.resolve()) not in nltk.data.path:
        # NLTK >= 3.9 opens corpora only under its data path; the caller named this folder.
        nltk.data.path.append(str(path.resolve()))
    if path.is_dir() and any(path.rglob("*.mrg")):
        root, pattern = str(path), r".*\.mrg"
    else:
        name, paths = ("treebank", [str(path)]) if path.is_dir() else (source, None)
        try:
            root = nltk.data.find(f"corpora/{name}/combined/", paths=paths)
        except LookupError:
            raise InputError(
                f"no treebank at {source!r}: give an NLTK corpus name on NLTK_DATA "
                "(e.g. 'treebank'), an nltk_data folder, or a folder of .mrg files"
            ) from None
        pattern = r"wsj_.*\.mrg"
    reader = BracketParseCorpusReader(root, pattern)
    trees = []
    for fileid in tqdm(reader.fileids(), desc="reading treebank", unit="file", leave=False):
        trees.extend(t for t in map(clean_tree, reader.parsed_sents(fileid)) if t is not None)
    if not trees:
        raise InputError(f"the treebank at {source!r} holds no trees")
    return trees


def _base_label(label: str) -> str:
    # NP-SBJ-1 -> NP, NP=2 -> NP, ADVP|PRT -> ADVP; -LRB- and -NONE- stay as they are.
    if label.startswith("-"):
        return label
    return re.split(r"[-=|]", label, maxsplit=1)[0] or label


def clean_tree(tree):
    """The tree as parsers are trained on it: empty elements (-NONE-) and the constituents
    left empty removed, function tags and co-indices stripped, under a TOP root."""
    import nltk

    def strip(node):
        if isinstance(node, str):
            return node
        if node.label() == "-NONE-":
            return None
        children = [c for c in map(strip, node) if c is not None]
        return nltk.Tree(_base_label(node.label()), children) if children else None

    body = strip(tree)
    if body is None:
        return None
    if body.label() in ("", "TOP"):  # the treebank's unlabelled outer bracket
        return nltk.Tree("TOP", list(body))
    return nltk.Tree("TOP", [body])


def split_treebank(trees: Sequence, n_dev: int = 400) -> tuple[list, list]:
    """(train, dev): the last `n_dev` trees are dev."""
    if not 0 < n_dev < len(trees):
        raise InputError(f"cannot hold out {n_dev} dev trees from {len(trees)}")
    return list(trees[:-n_dev]), list(trees[-n_dev:])


def treebank_hash(trees: Sequence) -> str:
    digest = hashlib.sha256()
    for tree in trees:
        digest.update(tree.pformat(margin=1_000_000).encode() + b"\n")
    return digest.hexdigest()


# evalb's COLLINS.prm: punctuation is deleted before brackets are compared, TOP is ignored,
# ADVP and PRT are the same label. Brackets are a multiset of (label, start, end) over the
# remaining words, unary chains counting once per node.
_DELETED_TAGS = frozenset({",", ":", "``", "''", ".", "-NONE-"})


_EQUIVALENT = {"PRT": "ADVP"}


@dataclass(frozen=True)
class BracketScore:
    """Labelled bracket precision, recall and F1 (percent), evalb-style (COLLINS.prm)."""

    n_matched: int
    n_gold: int
    n_predicted: int

    @property
    def precision(self) -> float:
        return 100.0 * self.n_matched / self.n_predicted if self.n_predicted else 0.0

    @property
    def recall(self) -> float:
        return 100.0 * self.n_matched / self.n_gold if self.n_gold else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


def _brackets(tree, kept: Sequence[bool]) -> Counter:
    out: Counter = Counter()
    offsets = [0]
    for keep in kept:
        offsets.append(offsets[-1] + keep)

    def walk(node, start: int) -> int:
        if isinstance(node[0], str):  # preterminal: one word, not a bracket
            return start + 1
        end = start
        for child in node:
            end = walk(child, end)
        label = node.label()
        lo, hi = offsets[start], offsets[end]
        if label not in ("TOP", "") and hi > lo:
            out[(_EQUIVALENT.get(label, label), lo, hi)] += 1
        return end

    walk(tree, 0)
    return out


def bracket_score(gold: Sequence, predicted: Sequence) -> BracketScore:
    """Compare predicted trees with gold ones (same words); punctuation decided by gold tags."""
    matched = n_gold = n_pred = 0
    for g, p in zip(gold, predicted, strict=True):
        kept = [tag not in _DELETED_TAGS for _, tag in g.pos()]
        gb, pb = _brackets(g, kept), _brackets(p, kept)
        matched += sum((gb & pb).values())
        n_gold += sum(gb.values())
        n_pred += sum(pb.values())
    return BracketScore(matched, n_gold, n_pred)
