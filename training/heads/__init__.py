"""Second-stage heads chosen on judged files: which inputs, under which reading, and whether
a head ships at all.

The way in is `python -m training.heads` (`tier`: a tier's general head and one per genre,
written into its card), which goes through `choose.choose`: judged files (`files`) held out by a
protocol, forward selection of a linear head (`select`), the evidence per text, system and file
(`evidence`, `systems`), the rule that picks (`ship_rule`: change the rule there), and the
tables and cards written from the evidence (`tables`, `cards`). `held_out` gives a file the
head the other files choose (`fluency benchmark --protocol lodo`).

Candidates: a linear head as a card holds it (`linear`), heads fitted on ratings (`fitted`), a
ridge on what a head leaves (`residual_ridge`), and the learned heads on SmolLM2's states
(`state_rows`, `state_ridge`, `state_residual`, `state_report`; chosen by `python -m
training.heads.learned`).
"""

__all__ = [
    "cards",
    "choose",
    "evidence",
    "files",
    "fitted",
    "held_out",
    "learned",
    "linear",
    "residual_ridge",
    "select",
    "ship_rule",
    "state_report",
    "state_residual",
    "state_ridge",
    "state_rows",
    "systems",
    "tables",
    "tier",
]
