"""The checks every head passes whatever people rated (`ScrambleCheck`): real sentences above a
shuffle of each, above runs and loops of them, and text said again at or below the text said
once (`training.heads.data.said_again`). A head checked here is a selected head before it is
capped (`training.heads.estimators.select.Fitted`: its `scores`, `reading` and `penalty`)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from training.heads.data.said_again import MAX_PENALTY, SaidAgain

__all__ = ["READ_WHOLE", "ScrambleCheck"]

READ_WHOLE = "whole"  # where a check's share said again is read (every reading holds it)


@dataclass
class ScrambleCheck:
    """Real sentences and a shuffle of each, as columns per reading (`training.heads`): a head
    scores the real sentence above its shuffle for at least `floor` of the pairs (a tie counts
    one half), or it is no fluency score, whatever people's ratings of system output reward.
    Human-rated system output is rarely word salad, so held-out agreement alone can choose a
    head (the share of repeated bigrams, say) that reads a shuffle as well as its sentence."""

    real: dict[str, dict[str, np.ndarray]]
    shuffled: dict[str, dict[str, np.ndarray]]
    floor: float = 0.95
    # {kind: columns} of runs and loops of the first real sentences, one a sentence, in order
    # (`training.heads.data.files.degenerate_texts`): what a learned head is checked on too.
    degenerate: dict[str, dict[str, dict[str, np.ndarray]]] = field(default_factory=dict)

    # Paragraphs and their said-again versions (`training.heads.data.said_again`), or None.
    said_again: SaidAgain | None = None

    def settle(self, head: Any) -> Any:
        """`head` with the smallest weight on what a text says again under which it passes
        the said-again check's choosing paragraphs (at most `MAX_PENALTY`; 0 without one)."""
        if self.said_again is None:
            return head
        bare = dataclasses.replace(head, penalty=0.0)
        need = self.said_again.penalty(bare.scores, head.reading)
        return dataclasses.replace(head, penalty=min(need, MAX_PENALTY))

    def said_again_shares(self, head: Any) -> dict[str, float]:
        """{kind: share of held paragraphs whose said-again version `head` scores at or below
        the original} (`settle` first: its weight is in `head`); {} without the check."""
        if self.said_again is None:
            return {}
        bare = dataclasses.replace(head, penalty=0.0)
        return self.said_again.shares(bare.scores, head.reading, head.penalty)

    def accuracy(self, head: Any) -> float:
        """The lowest share the check holds for `head` (settled first): real sentences above
        their shuffles (a tie one half) and, with the said-again check, each kind of version at
        or below its original."""
        head = self.settle(head)
        shuffles = _above(head.scores(self.real), head.scores(self.shuffled))
        return min([shuffles, *self.said_again_shares(head).values()])

    def shares(self, scores) -> dict[str, float]:
        """{"shuffles": the share of real sentences `scores` (columns -> one score a text) puts
        above their shuffles, each kind of run and loop held: the share above theirs, and each
        kind of the said-again check: the share at or below the text, at the weight on what is
        said again `said_again_weight` gives}."""
        real = scores(self.real)
        out = {"shuffles": _above(real, scores(self.shuffled))}
        for kind, cols in self.degenerate.items():
            made = scores(cols)
            out[kind] = _above(real[: len(made)], made)
        if self.said_again is not None:
            weight = self.said_again_weight(scores)
            out |= self.said_again.shares(scores, READ_WHOLE, weight)
        return out

    def said_again_weight(self, scores) -> float:
        """The weight on what is said again a head of `scores` (columns -> one score a text,
        with no such weight) carries: the smallest passing the choosing paragraphs, at most
        `MAX_PENALTY` (0 without the check)."""
        if self.said_again is None:
            return 0.0
        return min(self.said_again.penalty(scores, READ_WHOLE), MAX_PENALTY)


def _above(a: np.ndarray, b: np.ndarray) -> float:
    """The share of pairs with `a` above `b`, a tie one half."""
    return float(np.mean(a > b) + 0.5 * np.mean(a == b))
