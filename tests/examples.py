"""Worked examples from the papers, shared by tests."""

# Bangalore, Rambow & Whittaker (2000), example (2) and Table 1.
TABLE1_REF = "There was no cost estimate for the second phase"
TABLE1_HYP = "There was estimate for phase the second no cost"
# The paper's tree (Figure 2): "estimate" the root with There, was, no, cost, for; for -> phase;
# phase -> the, second. 0-based heads, the root pointing to itself.
TABLE1_HEADS = (4, 4, 4, 4, 4, 4, 8, 8, 5)
