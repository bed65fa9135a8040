"""`Sentence`: one parsed sentence (or text span), the value every extractor and metric reads."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from features.errors import InputError

__all__ = ["Sentence"]


@dataclass(frozen=True)
class Sentence:
    """Tokens with their dependency tree.

    `heads[i]` is the index (0-based, within this text) of token i's head; a root points to itself,
    as in spaCy. A text spaCy splits into several sentences has several roots. `source` says where
    the tree came from ("spacy:<pipeline>-<version>" or "conllu:gold").

    `transition_logprobs`: the natural-log probability of each move spaCy's greedy parser made
    building this tree, in order (softmax over the moves valid at that step); about two per
    token. Empty when the tree did not come from that parser (gold, by hand, empty text).
    """

    text: str
    tokens: tuple[str, ...]
    heads: tuple[int, ...]
    deps: tuple[str, ...]
    lemmas: tuple[str, ...] = ()
    pos: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    source: str = ""
    transition_logprobs: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        n = len(self.tokens)
        if len(self.heads) != n or len(self.deps) != n:
            raise InputError(
                f"{n} tokens but {len(self.heads)} heads and {len(self.deps)} labels; "
                "give one head and one label per token"
            )
        for name in ("lemmas", "pos", "tags"):
            value = getattr(self, name)
            if value and len(value) != n:
                raise InputError(f"{n} tokens but {len(value)} {name}")
        for i, h in enumerate(self.heads):
            if not 0 <= h < n:
                raise InputError(f"token {i} ({self.tokens[i]!r}) has head {h}, outside 0..{n - 1}")

    @classmethod
    def from_heads(
        cls,
        tokens: Sequence[str],
        heads: Sequence[int],
        deps: Sequence[str] | None = None,
        *,
        source: str = "given",
    ) -> Sentence:
        """A tree given by hand: `heads` 0-based, a root pointing to itself."""
        tokens = tuple(tokens)
        return cls(
            text=" ".join(tokens),
            tokens=tokens,
            heads=tuple(int(h) for h in heads),
            deps=tuple(deps) if deps is not None else ("dep",) * len(tokens),
            source=source,
        )

    @property
    def n_tokens(self) -> int:
        return len(self.tokens)

    @property
    def roots(self) -> list[int]:
        return [i for i, h in enumerate(self.heads) if h == i]

    def children(self) -> list[list[int]]:
        """children()[i]: dependents of token i, in string order."""
        out: list[list[int]] = [[] for _ in self.tokens]
        for i, h in enumerate(self.heads):
            if h != i:
                out[h].append(i)
        return out
