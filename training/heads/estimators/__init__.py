"""The kinds of head and how they are fitted: each kind a small class with `fit` and `predict`,
held out by the one loop of `kinds`. The ridge every kind fits and its one-standard-error rule on
alpha (`ridge`), the linear head chosen by forward selection (`select`), the candidates fitted on
a user's ratings (`fitted`, `residual_ridge`) and `refit`: a shipped head fitted again on other
files, whatever its kind. A new kind goes here (or, past a few files, into a room of its own as
`training.heads.learned`)."""

__all__ = ["fitted", "kinds", "refit", "residual_ridge", "ridge", "select"]
