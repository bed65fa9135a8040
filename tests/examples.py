"""Worked examples from the papers, and small helpers, shared by tests."""

# Bangalore, Rambow & Whittaker (2000), example (2) and Table 1.
TABLE1_REF = "There was no cost estimate for the second phase"
TABLE1_HYP = "There was estimate for phase the second no cost"
# The paper's tree (Figure 2): "estimate" the root with There, was, no, cost, for; for -> phase;
# phase -> the, second. 0-based heads, the root pointing to itself.
TABLE1_HEADS = (4, 4, 4, 4, 4, 4, 8, 8, 5)


def sentence(text: str):
    """A `Sentence` from whitespace tokens with a flat tree, for extractors that read tokens."""
    from features.sentence import Sentence

    tokens = text.split()
    if not tokens:
        return Sentence("", (), (), ())
    return Sentence.from_heads(tokens, [0] * len(tokens))


def shuffled(text: str, seed: int = 0) -> str:
    """The same whitespace words in another order (never the original one)."""
    import random

    words = text.split()
    rng = random.Random(seed)
    while True:
        out = rng.sample(words, len(words))
        if out != words:
            return " ".join(out)
