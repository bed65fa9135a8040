"""The learned kind: heads on SmolLM2's pooled states. The states' rows per judged file (`rows`), a
ridge on them (`ridge.StateRidgeKind`) and a starting head plus a ridge on what it leaves
(`residual.ResidualKind`), chosen among themselves held out (`choice`), brought to the one chooser
beside the linear heads, on the same evidence (`candidates`), their card sections and bundle writing
(`report`), the command that decides them alone (`command`, `python -m training.heads.learned`),
every rated output's states read once and kept (`store`, `python -m training.heads.learned.store`),
and nonlinear heads on the same states held out beside the ridge and decided under the same rule
(`nonlinear`, `python -m training.heads.learned.nonlinear`), and the heads at each size of what they
are fitted on, against the current head under the same rule (`sizes`, `python -m
training.heads.learned.sizes`)."""

__all__ = [
    "candidates",
    "choice",
    "command",
    "nonlinear",
    "report",
    "residual",
    "ridge",
    "rows",
    "sizes",
    "store",
]
