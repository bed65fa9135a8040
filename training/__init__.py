"""Offline work, one package a job; nothing here is needed to score or serve.

- `training.gleu`: the GLEU stage made from corpora (`fluency train`, its negatives, the
  language models, the constituency parser, the neural export, the glue test).
- `training.heads`: second-stage heads chosen on judged files (`python -m training.heads`;
  candidates, evidence, the ship rule, tables and cards; the learned heads on SmolLM2's states).
- `training.calibration`: a head calibrated on a user's ratings (`fluency calibrate`, its
  rounds, the learning curve).
- `training.judged`: judgement files read and imported (`fluency import-judgements`).

`training.cli` gathers the `fluency` commands these packages add.
"""
