"""Second-stage heads chosen on judged files: which inputs, under which reading, and whether a head
ships at all. A head, whatever fitted it, is one `scorer.heads.Head`, its card section written and
read by that type alone.

The rooms, each with its door (the package docstring):

- `data/`: the judged files read into columns (`files`), a file as `HeadFile` and its folds
  (`judged`), and the checks every head passes (`checks`: shuffles, runs and loops;
  `said_again`);
- `metrics/`: how a head's scores are judged against people (`figures`, many heads on the same
  draws `draws`, per system `systems`);
- `estimators/`: the kinds of head, each with `fit` and `predict`, held out by one loop (`kinds`);
  the one ridge and its one-standard-error rule on alpha (`ridge`); forward selection of a
  linear head (`select`); candidates fitted on a user's ratings (`fitted`, `residual_ridge`);
- `learned/`: the kind learned on SmolLM2's states, a room of its own (`python -m
  training.heads.learned`);
- `selection/`: the evidence (`evidence`), the ship rule (`ship_rule`: change the rule there), the
  one path every head is chosen on (`choose`) and a file's head chosen on the others (`held_out`);
- `report/`: the tables and the bundle's card and README written from the evidence.

At the top: `python -m training.heads` (`tier`: a tier's general head and one per genre, written
into its card), `python -m training.heads.said_again_bundle` (the said-again check on a bundle's
heads as served).

The names below are what other packages (`training.calibration`) use; they import nothing else
from here.
"""

from training.heads.data.checks import ScrambleCheck
from training.heads.data.files import (
    MINUS_LENGTH,
    READING_MODES,
    add_rows_options,
    read_head_files,
    read_scrambles,
    text_columns,
)
from training.heads.data.judged import FOLDS, HeadFile, subset
from training.heads.estimators.fitted import Plan, cross_validated, on_their_scale, with_base
from training.heads.estimators.refit import refit
from training.heads.estimators.residual_ridge import (
    FEATURES,
    RESIDUAL_RIDGE,
    STATES,
    ResidualRidge,
    state_columns,
)
from training.heads.metrics.draws import criteria, judgements, rhos
from training.heads.metrics.figures import group_taus, members
from training.heads.report.cards import write_card
from training.heads.selection.ship_rule import Candidate

__all__ = [
    "FEATURES",
    "FOLDS",
    "MINUS_LENGTH",
    "READING_MODES",
    "RESIDUAL_RIDGE",
    "STATES",
    "Candidate",
    "HeadFile",
    "Plan",
    "ResidualRidge",
    "ScrambleCheck",
    "add_rows_options",
    "criteria",
    "cross_validated",
    "group_taus",
    "judgements",
    "members",
    "on_their_scale",
    "read_head_files",
    "read_scrambles",
    "refit",
    "rhos",
    "state_columns",
    "subset",
    "text_columns",
    "with_base",
    "write_card",
]
