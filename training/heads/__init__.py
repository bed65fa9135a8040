"""Second-stage heads chosen on judged files: which inputs, under which reading, and whether a head
ships at all.

The way in is `python -m training.heads` (`tier`: a tier's general head and one per genre,
written into its card), which goes through `choose.choose`: judged files (`files`) held out by a
protocol, forward selection of a linear head (`select`), the evidence per text, system and file
(`evidence`, `systems`; the figures themselves, rho and per-input tau with their intervals, are
`figures`, and many heads' on bootstrap draws `draws`), the rule that picks (`ship_rule`: change
the rule there), and the tables and cards written from the evidence (`tables`, `cards`).
`held_out` gives a file the head the other files choose (`fluency benchmark --protocol lodo`).

Candidates: a kind of head is a small class with `fit` and `predict`, held out by the one loop
of `kinds` whatever it is: a few inputs combined linearly (`select.LinearKind`), a ridge on
SmolLM2's states (`state_ridge.StateRidgeKind`), a starting head plus a ridge on what it leaves
(`state_residual.ResidualKind`). The learned ones come into `choose.choose` as its rivals
(`state_candidates`: `python -m training.heads --learned`, or alone `python -m
training.heads.learned`), chosen among themselves (`state_choice`) and facing the same rule,
their rows written by the same writer (`tables.row`). Beside them: a head as a card holds it
(`linear`), heads fitted on a user's ratings (`fitted`, `residual_ridge`), and the learned
heads' files and report (`state_rows`, `state_report`). Every ridge, linear or learned, is
`ridge.fit_ridge`, its alpha picked by `ridge.within_one_se`. The said-again check, in the rule for
every kind: `said_again` (its paragraphs and weights), `said_again_bundle` (a bundle's heads as
served).
"""

__all__ = [
    "cards",
    "choose",
    "draws",
    "evidence",
    "figures",
    "files",
    "fitted",
    "held_out",
    "kinds",
    "learned",
    "linear",
    "residual_ridge",
    "ridge",
    "said_again",
    "said_again_bundle",
    "select",
    "ship_rule",
    "state_candidates",
    "state_choice",
    "state_report",
    "state_residual",
    "state_ridge",
    "state_rows",
    "systems",
    "tables",
    "tier",
]
