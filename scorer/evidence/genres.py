"""The genre of each development dataset, in one place, and the per-genre view of a benchmark.

People who rate outputs of different genres read them differently (raters of restaurant texts
favour the longer output, raters of translations penalise it), so a second stage is fitted per
genre and judged by leaving one whole dataset of that genre out (`fluency benchmark --protocol
lodo`). The genres follow `../shared/README.md`; the BAGEL, SF hotels and SF restaurants files
are three datasets, and so are the two USR files and Ji et al.'s chats. A file not listed here
is a genre of its own.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

__all__ = [
    "FLUENCY_FIELDS",
    "GENRES",
    "GENRE_NAMES",
    "NOT_SYSTEMS",
    "genre_of",
    "genre_table",
    "genres_of",
    "lodo_section",
]

GENRES: dict[str, str] = {
    "webnlg2017": "data-to-text",
    "webnlg2020": "data-to-text",
    "e2e2017": "data-to-text",
    "novikova2017_bagel": "data-to-text",
    "novikova2017_sfhot": "data-to-text",
    "novikova2017_sfres": "data-to-text",
    "mqm_newstest2020_zhen": "mt",
    "mqm_newstest2021_zhen": "mt",
    "mqm_ted_zhen": "mt",
    "newsroom2018": "summaries",
    "feqa2020_grammaticality": "summaries",
    "dialsummeval2022": "summaries",
    "lau2020_acceptability": "acceptability",
    "cola": "acceptability",
    "usr2020_personachat": "dialogue",
    "usr2020_topicalchat": "dialogue",
    "ji2022_dialogue": "dialogue",
}
# The genres a bundle's head may be fitted for, in the order they are listed.
GENRE_NAMES: tuple[str, ...] = tuple(dict.fromkeys(GENRES.values()))
# The field a fluency score is judged on where the default `score` rates more than fluency: the
# MQM files' penalty counting fluency errors only (Fluency/* and Style/Awkward).
FLUENCY_FIELDS: dict[str, str] = {
    "mqm_newstest2020_zhen": "scores.fluency",
    "mqm_newstest2021_zhen": "scores.fluency",
    "mqm_ted_zhen": "scores.fluency",
}
# Files whose `system` is not a text generator, left out of the system-level view with the reason.
NOT_SYSTEMS: dict[str, str] = {
    "cola": "its `system` is the publication a sentence was quoted from, not a generator",
}


def genre_of(name: str, genres: Mapping[str, str] = GENRES) -> str:
    """The genre of a dataset by its file stem; an unlisted file is its own genre."""
    return genres.get(name, name)


def genres_of(names: Sequence[str], genres: Mapping[str, str] = GENRES) -> dict[str, str]:
    return {n: genre_of(n, genres) for n in names}


def _num(value: float | None) -> str:
    return "–" if value is None or not math.isfinite(value) else f"{value:.3f}"


def _mean(values) -> float | None:
    kept = [v for v in values if v is not None and math.isfinite(v)]
    return sum(kept) / len(kept) if kept else None


def genre_table(run) -> list[str]:
    """Markdown: per genre, its files and how each was held out, and the mean rho and mean
    per-input tau of every model column and of the best baseline of each file."""
    by_genre: dict[str, list] = {}
    for f in run.files:
        by_genre.setdefault(run.genres.get(f.name, f.name), []).append(f)
    header = ["genre", "files", "held out"]
    for m in run.models:
        header += [f"{m} rho", f"{m} tau"]
    header += ["best baseline rho", "best baseline tau"]
    rows = []
    for genre, files in by_genre.items():
        held = {run.held_out.get(f.name, "") for f in files}
        how = ", ".join(sorted(h for h in held if h)) or "–"
        if len(files) < 2 and how != "genre":
            how = f"not measurable by LODO: {how}" if how != "–" else "not measurable by LODO"
        cells = [genre, ", ".join(f.name for f in files), how]
        for m in run.models:
            for what in ("spearman", "kendall"):
                cells.append(_num(_mean(getattr(f.table[m], what) for f in files)))
        for what in ("spearman", "kendall"):
            cells.append(
                _num(_mean(getattr(f.table[f.best[what]], what) for f in files if f.best.get(what)))
            )
        rows.append(cells)
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return lines


def lodo_section(run, sub: str) -> list[str]:
    """Protocol "lodo": the per-genre means and, per file, what its second stage was fitted on
    and what was chosen (within its genre, or, across genres, on the other genres)."""
    if getattr(run, "protocol", "plain") != "lodo":
        return []
    across = set(run.held_out.values()) == {"genre"}
    what = "whole genres held out" if across else "held out by dataset"
    out = ["", f"{sub} Per genre: the second stage {what} (means over files)", ""]
    out += genre_table(run)
    out += ["", "| file | genre | held out | trained on | chosen |", "|---|---|---|---|---|"]
    for f in run.files:
        info = run.second_stage.get(f.name, {})
        chosen = info.get("choice", "")
        chosen = ", ".join(chosen) if isinstance(chosen, list) else chosen
        trained = ", ".join(info.get("trained_on", []))
        out.append(
            f"| {f.name} | {run.genres.get(f.name, '')} | {info.get('held_out', '')} | "
            f"{trained} | {chosen} |"
        )
    return out
