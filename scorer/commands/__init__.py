"""The `fluency` commands, one module per family, each with an `add_commands(sub)`: `score`
(score, features), `accuracy`, `explain`, `compare` (compare, diversity) and `agreement`
(evaluate, regress); `options` declares the options they share. `scorer.cli` names them;
`fluency benchmark` is in `scorer.evidence.cli`, the model-making commands in `training.cli`.
"""
