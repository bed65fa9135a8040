"""Gold dependency trees from CoNLL-U (for example Penn Treebank trees converted to dependencies).

Read with the maintained `conllu` library. Multiword-token ranges (1-2) and empty nodes (8.1) are
skipped: the tree is over syntactic words, which are what the treelets of the tree accuracies
need. Heads become 0-based, a root pointing to itself, as in `Sentence`.
"""

from __future__ import annotations

from pathlib import Path

import conllu

from features.errors import InputError
from features.sentence import Sentence

__all__ = ["parse_conllu", "read_conllu"]


def parse_conllu(data: str, *, origin: str = "<string>") -> list[Sentence]:
    try:
        token_lists = conllu.parse(data)
    except Exception as exc:  # conllu raises its own ParseException and plain ValueErrors
        raise InputError(f"{origin}: not valid CoNLL-U ({exc})") from exc
    out = []
    for n, tokens in enumerate(token_lists, 1):
        words = [t for t in tokens if isinstance(t.get("id"), int)]
        if not words:
            raise InputError(f"{origin}: sentence {n} has no words")
        ids = [t["id"] for t in words]
        if ids != list(range(1, len(words) + 1)):
            raise InputError(f"{origin}: sentence {n} word ids are {ids[:5]}..., expected 1..N")
        heads = []
        for t in words:
            head = t.get("head")
            if not isinstance(head, int) or not 0 <= head <= len(words):
                raise InputError(f"{origin}: sentence {n}, word {t['id']} has head {head!r}")
            heads.append(t["id"] - 1 if head == 0 else head - 1)
        forms = [str(t.get("form")) for t in words]
        out.append(
            Sentence(
                text=tokens.metadata.get("text", " ".join(forms)),
                tokens=tuple(forms),
                heads=tuple(heads),
                deps=tuple(str(t.get("deprel") or "dep") for t in words),
                lemmas=tuple(str(t.get("lemma") or "_") for t in words),
                pos=tuple(str(t.get("upos") or "_") for t in words),
                tags=tuple(str(t.get("xpos") or "_") for t in words),
                source="conllu:gold",
            )
        )
    return out


def read_conllu(path: str | Path) -> list[Sentence]:
    """Every sentence of a CoNLL-U file, in order."""
    path = Path(path)
    try:
        data = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read CoNLL-U file {path}: {exc.strerror}") from exc
    return parse_conllu(data, origin=str(path))
