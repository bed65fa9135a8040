"""Minimum-cost token alignment and the error counts of Bangalore et al. (2000), section 3.1.

One alignment gives both string accuracies: simple accuracy reads its substitutions (S),
insertions (I) and deletions (D); generation accuracy then collapses a token deleted at one place
and inserted at another into one move (M), leaving I' and D'.

Costs are NIST sclite's defaults (insertion 3, deletion 3, substitution 4): the paper asks for a
speech-recognition alignment in which "a substitution operation is cheaper than the combined
cost of a deletion and an insertion", and with sclite's costs a substitution is also dearer than a
lone insertion or deletion, so a permuted treelet is read as moves, not as a chain of
substitutions (Table 1, tree columns). We write the dynamic programme ourselves: jiwer and
editdistance give unit costs or no alignment, and no maintained library takes sclite's weights.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, fields

__all__ = ["DEL_COST", "INS_COST", "SUB_COST", "Alignment", "EditCounts", "align"]

INS_COST = 3
DEL_COST = 3
SUB_COST = 4

# Backtrace preference on equal cost: keep a diagonal step (match or substitution) first.
_MATCH, _SUB, _DEL, _INS = "=", "s", "d", "i"


@dataclass(frozen=True)
class EditCounts:
    """The paper's "problem" variables. `ref_len` is R, the reference's token count.

    simple accuracy = 1 - (I + D + S) / R;  generation accuracy = 1 - (M + I' + D' + S) / R.
    Both can be negative (more problems than reference tokens) and never exceed 1.
    """

    unchanged: int = 0
    substitutions: int = 0
    insertions: int = 0
    deletions: int = 0
    moves: int = 0
    move_insertions: int = 0  # I': insertions left once moves are taken out
    move_deletions: int = 0  # D': deletions left once moves are taken out
    ref_len: int = 0

    def __add__(self, other: EditCounts) -> EditCounts:
        return EditCounts(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(self)))

    @property
    def simple_problems(self) -> int:
        return self.insertions + self.deletions + self.substitutions

    @property
    def generation_problems(self) -> int:
        return self.moves + self.move_insertions + self.move_deletions + self.substitutions

    @property
    def simple_accuracy(self) -> float:
        """Equation (1)."""
        return 1.0 - self.simple_problems / self.ref_len if self.ref_len else 0.0

    @property
    def generation_accuracy(self) -> float:
        """Equation (3)."""
        return 1.0 - self.generation_problems / self.ref_len if self.ref_len else 0.0

    def with_ref_len(self, ref_len: int) -> EditCounts:
        return EditCounts(
            **{**{f.name: getattr(self, f.name) for f in fields(self)}, "ref_len": ref_len}
        )


@dataclass(frozen=True)
class Alignment:
    """One minimum-cost alignment of `hypothesis` to `reference`.

    `ops`: (op, ref_index, hyp_index) in string order, op one of "=", "s", "d" (ref token with no
    partner), "i" (hyp token with no partner). `moves`: (ref_index, hyp_index) pairs of a deleted
    and an inserted token with the same form, each counted as one move.
    """

    reference: tuple[str, ...]
    hypothesis: tuple[str, ...]
    ops: tuple[tuple[str, int | None, int | None], ...]
    moves: tuple[tuple[int, int], ...]
    counts: EditCounts

    def pretty(self) -> str:
        """Three lines like the paper's example (2): reference, hypothesis, operations."""
        cols = []
        for op, i, j in self.ops:
            r = self.reference[i] if i is not None else ""
            h = self.hypothesis[j] if j is not None else ""
            mark = "." if op == _MATCH else op
            cols.append((r, h, mark, max(len(r), len(h), 1)))
        return "\n".join(" ".join(c[k].ljust(c[3]) for c in cols).rstrip() for k in range(3))


def align(reference: Sequence[str], hypothesis: Sequence[str]) -> Alignment:
    """Align token sequences at minimum sclite cost, then count moves (Bangalore et al. 2000)."""
    ref, hyp = tuple(reference), tuple(hypothesis)
    n, m = len(ref), len(hyp)
    # cost[i][j]: cheapest alignment of ref[:i] with hyp[:j]
    cost = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(1, n + 1):
        cost[i][0] = i * DEL_COST
    for j in range(1, m + 1):
        cost[0][j] = j * INS_COST
    for i in range(1, n + 1):
        row, prev, r = cost[i], cost[i - 1], ref[i - 1]
        for j in range(1, m + 1):
            diag = prev[j - 1] + (0 if r == hyp[j - 1] else SUB_COST)
            up = prev[j] + DEL_COST
            left = row[j - 1] + INS_COST
            row[j] = min(diag, up, left)

    ops: list[tuple[str, int | None, int | None]] = []
    i, j = n, m
    while i > 0 or j > 0:
        here = cost[i][j]
        if i > 0 and j > 0:
            same = ref[i - 1] == hyp[j - 1]
            if here == cost[i - 1][j - 1] + (0 if same else SUB_COST):
                ops.append((_MATCH if same else _SUB, i - 1, j - 1))
                i, j = i - 1, j - 1
                continue
        if i > 0 and here == cost[i - 1][j] + DEL_COST:
            ops.append((_DEL, i - 1, None))
            i -= 1
        else:
            ops.append((_INS, None, j - 1))
            j -= 1
    ops.reverse()
    return Alignment(ref, hyp, tuple(ops), *_count(ref, hyp, ops))


def _count(ref, hyp, ops) -> tuple[tuple[tuple[int, int], ...], EditCounts]:
    deleted: dict[str, list[int]] = defaultdict(list)
    inserted: dict[str, list[int]] = defaultdict(list)
    n_same = n_sub = 0
    for op, i, j in ops:
        if op == _MATCH:
            n_same += 1
        elif op == _SUB:
            n_sub += 1
        elif op == _DEL:
            deleted[ref[i]].append(i)
        else:
            inserted[hyp[j]].append(j)
    # A token deleted here and inserted there is one move; pair occurrences in string order.
    moves = tuple(
        sorted(
            pair
            for w, refs in deleted.items()
            for pair in zip(refs, inserted.get(w, ()), strict=False)
        )
    )
    n_del = sum(len(v) for v in deleted.values())
    n_ins = sum(len(v) for v in inserted.values())
    counts = EditCounts(
        unchanged=n_same,
        substitutions=n_sub,
        insertions=n_ins,
        deletions=n_del,
        moves=len(moves),
        move_insertions=n_ins - len(moves),
        move_deletions=n_del - len(moves),
        ref_len=len(ref),
    )
    return moves, counts
