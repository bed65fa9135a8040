"""Evidence about generated text and the metrics that score it: significance tests between
systems (Riezler & Maxwell 2005), agreement and regression with human judgements (Foster 2008;
Bangalore et al. 2000), diversity, judgement files and plots; `cli.py` holds their commands.

Import the modules themselves (`scorer.evidence.significance`); the tests most people want are
also on `scorer` (`scorer.paired_bootstrap`). Nothing is imported here, so the CLI stays fast.
"""

__all__: list[str] = []
