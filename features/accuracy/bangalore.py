"""The six accuracies of Bangalore, Rambow & Whittaker (2000) from one string alignment.

`compare` aligns once and reads every measure from that result: simple and generation string
accuracy (section 3.1), simple and generation tree accuracy (section 3.2), understandability and
quality accuracy (section 4.2, equations 4 and 5).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from features.accuracy.alignment import Alignment, EditCounts, align
from features.accuracy.tree import tree_counts
from features.errors import InputError
from features.sentence import Sentence

__all__ = ["Comparison", "compare", "quality_accuracy", "understandability_accuracy"]


def understandability_accuracy(simple_tree_accuracy: float, substitutions: int) -> float:
    """Equation (4): (1.3147 * STA - 0.1039 * S - 0.4458) / 0.8689; a perfect sentence gets 1.

    S is the substitution count of the string alignment: the paper regressed on the "problem
    variables that we used to define the string metrics".
    """
    # At most 1 exactly (STA <= 1, S >= 0); min() removes float rounding's 1.0000000000000002.
    return min(1.0, (1.3147 * simple_tree_accuracy - 0.1039 * substitutions - 0.4458) / 0.8689)


def quality_accuracy(simple_tree_accuracy: float, substitutions: int) -> float:
    """Equation (5): (1.0192 * STA - 0.0869 * S - 0.3553) / 0.6639; a perfect sentence gets 1."""
    return min(1.0, (1.0192 * simple_tree_accuracy - 0.0869 * substitutions - 0.3553) / 0.6639)


@dataclass(frozen=True)
class Comparison:
    """A hypothesis against one reference: the alignment and both families of counts."""

    alignment: Alignment
    string: EditCounts
    tree: EditCounts

    @property
    def simple_string_accuracy(self) -> float:
        return self.string.simple_accuracy

    @property
    def generation_string_accuracy(self) -> float:
        return self.string.generation_accuracy

    @property
    def simple_tree_accuracy(self) -> float:
        return self.tree.simple_accuracy

    @property
    def generation_tree_accuracy(self) -> float:
        return self.tree.generation_accuracy

    @property
    def understandability_accuracy(self) -> float:
        return understandability_accuracy(self.tree.simple_accuracy, self.string.substitutions)

    @property
    def quality_accuracy(self) -> float:
        return quality_accuracy(self.tree.simple_accuracy, self.string.substitutions)


def compare(
    hypothesis: Sentence | Sequence[str], reference: Sentence, *, lowercase: bool = False
) -> Comparison:
    """Score `hypothesis` tokens against the `reference` tokens and dependency tree."""
    hyp = tuple(hypothesis.tokens if isinstance(hypothesis, Sentence) else hypothesis)
    if reference.n_tokens == 0:
        raise InputError("the reference is empty; accuracy needs at least one reference token")
    ref = reference
    if lowercase:
        hyp = tuple(t.lower() for t in hyp)
        ref = Sentence.from_heads([t.lower() for t in ref.tokens], ref.heads, ref.deps)
    alignment = align(ref.tokens, hyp)
    return Comparison(alignment, alignment.counts, tree_counts(hyp, ref, alignment))
