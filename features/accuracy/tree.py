"""Simple and generation tree accuracy (Bangalore et al. 2000, section 3.2).

For each treelet of the reference dependency tree (a non-leaf node with all its daughters) we
build the string of head and dependents in reference order and in hypothesis order, align the
two like the string metrics, and sum the counts over treelets. R stays the reference's length.

The paper's generator only permutes reference tokens, so "hypothesis order" is plain. For any
hypothesis we first decide which hypothesis token stands for which reference token, using the
string alignment: its matches; then tokens of the same form among those it left deleted,
inserted or substituted (a permuted token keeps its identity wherever it went); then its
substitutions whose two sides are still free (the hypothesis word takes the reference word's
place in its treelets). Departures from the paper, where it is silent:
- a hypothesis token that stands for no reference token is counted once, as an insertion in the
  treelet where its nearest placed neighbour (preceding, else following) is a dependent;
- a root that is a leaf (one-word reference) is a treelet of its own, so it still counts.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from features.accuracy.alignment import Alignment, EditCounts, align
from features.sentence import Sentence

__all__ = ["correspondence", "tree_counts", "treelets"]


def treelets(tree: Sentence) -> list[list[int]]:
    """Each non-leaf node with its dependents, and every root; token indices in string order."""
    kids = tree.children()
    roots = set(tree.roots)
    return [sorted([h, *kids[h]]) for h in range(tree.n_tokens) if kids[h] or h in roots]


def _head(tree: Sentence, members: list[int]) -> int:
    """The one member of a treelet that is not a dependent of another member."""
    return next(i for i in members if tree.heads[i] == i or tree.heads[i] not in members)


def correspondence(alignment: Alignment) -> tuple[dict[int, int], list[int]]:
    """Map reference index -> hypothesis index; and the hypothesis indices left unmatched."""
    ref, hyp = alignment.reference, alignment.hypothesis
    pairs: dict[int, int] = {}
    free_ref: list[int] = []
    free_hyp: list[int] = []
    subs: list[tuple[int, int]] = []
    for op, i, j in alignment.ops:
        if op == "=":
            pairs[i] = j
        else:
            if i is not None:
                free_ref.append(i)
            if j is not None:
                free_hyp.append(j)
            if op == "s":
                subs.append((i, j))
    by_form: dict[str, list[int]] = defaultdict(list)
    for j in sorted(free_hyp):
        by_form[hyp[j]].append(j)
    used_hyp: set[int] = set()
    for i in sorted(free_ref):
        same = by_form.get(ref[i])
        if same:
            j = same.pop(0)
            pairs[i] = j
            used_hyp.add(j)
    for i, j in subs:
        if i not in pairs and j not in used_hyp:
            pairs[i] = j
            used_hyp.add(j)
    placed = set(pairs.values())
    return pairs, [j for j in range(len(hyp)) if j not in placed]


def tree_counts(
    hypothesis: Sequence[str], tree: Sentence, alignment: Alignment | None = None
) -> EditCounts:
    """Summed treelet counts of `hypothesis` against the reference `tree` (its tokens are R)."""
    hyp = tuple(hypothesis)
    if alignment is None:
        alignment = align(tree.tokens, hyp)
    pairs, extra = correspondence(alignment)
    groups = treelets(tree)
    # home[i]: the treelet where token i is a dependent (a root: its own), which an unplaced
    # hypothesis token next to i's partner joins.
    head_of_group = {_head(tree, members): k for k, members in enumerate(groups)}
    home = {i: head_of_group[tree.heads[i]] for i in range(tree.n_tokens)}
    hyp_to_ref = {j: i for i, j in pairs.items()}
    joined: dict[int, list[int]] = defaultdict(list)
    for j in extra:
        neighbour = next((hyp_to_ref[x] for x in range(j - 1, -1, -1) if x in hyp_to_ref), None)
        if neighbour is None:
            neighbour = next(
                (hyp_to_ref[x] for x in range(j + 1, len(hyp)) if x in hyp_to_ref), None
            )
        k = home.get(neighbour, 0) if neighbour is not None else 0
        joined[k].append(j)

    total = EditCounts()
    for k, members in enumerate(groups):
        ref_string = [tree.tokens[i] for i in members]
        positions = sorted([pairs[i] for i in members if i in pairs] + joined.get(k, []))
        total = total + align(ref_string, [hyp[j] for j in positions]).counts
    return total.with_ref_len(tree.n_tokens)
