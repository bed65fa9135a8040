"""Judgement files: people's ratings of system outputs, read and imported.

`table.read_tables` reads one's own ratings from JSONL, CSV, TSV or Parquet (what `fluency
calibrate` fits on); `imports` turns published judgements (WMT's MQM, WebNLG 2020, CoLA) into
the JSON-lines judgement files the benchmark reads (`fluency import-judgements`).
"""

__all__ = [
    "imports",
    "table",
]
