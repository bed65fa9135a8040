"""What is written from the evidence: the decision tables (`tables`: a row per candidate, the
same writer for every kind) and the bundle's card, README and `heads_report.json` (`cards`). A
new column of a table goes here."""

__all__ = ["cards", "tables"]
