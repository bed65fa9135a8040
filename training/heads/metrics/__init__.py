"""How a head's scores are judged against people: Spearman's rho over outputs and Kendall's tau
within each input, their means over files or genres and their intervals (`figures`), many heads'
figures on the same bootstrap draws (`draws`), and agreement per system (`systems`). A new figure
goes here; the rule that weighs it does not (`training.heads.selection`)."""

__all__ = ["draws", "figures", "systems"]
