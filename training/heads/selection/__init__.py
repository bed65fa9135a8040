"""Choosing a head from its evidence: the records per text, system and file (`evidence`), the ship
rule over them (`ship_rule`: change the rule there, and only there), the one path every head is
chosen on (`choose`) and a file's head chosen on the others (`held_out`, for `fluency benchmark
--protocol lodo`). A rule never reaches back into the fitting."""

__all__ = ["choose", "evidence", "held_out", "ship_rule"]
