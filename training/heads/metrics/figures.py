"""How a head is judged against people, on judged files: a file as `HeadFile` (human scores,
inputs, columns per reading), Spearman's rho over its outputs and Kendall's tau within each input
(`group_taus`), their means over files or over genres (`judge`, a `Judgement`), and 95%
intervals over draws of the inputs (`interval`). An input's own sign (`orient`) and a row's
weight in a fit (`unit_weights`: genres the same, datasets the same within a genre) are read
from the same means.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from scorer.evidence.ranks import spearman
from training.heads.data.judged import HeadFile

__all__ = [
    "Judgement",
    "alone_rho",
    "criteria",
    "group_taus",
    "interval",
    "judge",
    "means",
    "members",
    "nanmean",
    "orient",
    "unit_weights",
]


def group_taus(pred: np.ndarray, file: HeadFile) -> np.ndarray:
    """Kendall's tau-b within each input (group) of `file`, with the prediction's ties broken
    at random (in expectation): a reranker facing a tie picks either output, so a tied pair
    counts in the denominator as an untied one would, adding nothing to the numerator. Without
    ties it is `per_group_kendall`'s tau-b; with them, plain tau-b leaves the tied pairs out
    and flatters a coarse input (the share of repeated bigrams is 0 for most outputs and would
    be judged on the few pairs it orders at all). NaN where a group has fewer than two outputs
    or people rated all its outputs alike; 0 where the prediction is constant."""
    i, j, g, hs, n_groups = file.pairs()
    if not len(i):
        return np.full(n_groups, np.nan)
    ps = np.sign(pred[i] - pred[j])
    num = np.bincount(g, ps * hs, n_groups)
    n_pairs = np.bincount(g, minlength=n_groups).astype(float)
    ny = np.bincount(g, hs != 0, n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = num / np.sqrt(n_pairs * ny)
    tau[ny == 0] = np.nan
    return tau


@dataclass(frozen=True)
class Judgement:
    """Held-out figures of one head: per file rho and mean per-input tau, and the means."""

    per_file: dict[str, tuple[float, float]]  # file -> (rho, tau)
    rho: float
    tau: float

    @property
    def criterion(self) -> float:
        return self.rho + (0.0 if math.isnan(self.tau) else self.tau)


def criteria(j: Judgement) -> dict[str, float]:
    """{file: rho + tau (tau 0 where undefined)} of a judgement."""
    return {n: r + (0.0 if math.isnan(t) else t) for n, (r, t) in j.per_file.items()}


def nanmean(values) -> float:
    kept = [v for v in values if v is not None and not math.isnan(v)]
    return float(np.mean(kept)) if kept else float("nan")


def means(per_file: Mapping[str, tuple[float, float]], genres: Mapping[str, str] | None):
    """(mean rho, mean tau) over files, or with `genres` over genres of their files' means."""
    if genres is None:
        return nanmean(r for r, _ in per_file.values()), nanmean(t for _, t in per_file.values())
    by: dict[str, list[tuple[float, float]]] = {}
    for name, v in per_file.items():
        by.setdefault(genres[name], []).append(v)
    rho = nanmean(nanmean(r for r, _ in vs) for vs in by.values())
    tau = nanmean(nanmean(t for _, t in vs) for vs in by.values())
    return rho, tau


def judge(preds: Mapping[str, np.ndarray], files: Sequence[HeadFile], by_genre: bool) -> Judgement:
    per = {}
    for f in files:
        taus = group_taus(preds[f.name], f)
        per[f.name] = (spearman(preds[f.name], f.human), nanmean(taus))
    rho, tau = means(per, {f.name: f.genre for f in files} if by_genre else None)
    return Judgement(per, rho, tau)


def unit_weights(files: Sequence[HeadFile]) -> np.ndarray:
    """Each row's weight in a fit: genres weigh the same, datasets the same within a genre,
    rows the same within a dataset; mean 1."""
    per_genre: dict[str, int] = {}
    for f in files:
        per_genre[f.genre] = per_genre.get(f.genre, 0) + 1
    w = np.concatenate(
        [np.full(len(f.human), 1.0 / (len(f.human) * per_genre[f.genre])) for f in files]
    )
    return w / w.mean()


def orient(files: Sequence[HeadFile], reading: str, name: str) -> float:
    """The sign of an input's own correlation with people on `files`: the mean over genres of
    the mean over their datasets of Spearman's rho (+1 when it is 0 or undefined)."""
    return -1.0 if alone_rho(files, reading, name) < 0 else 1.0


def alone_rho(files: Sequence[HeadFile], reading: str, name: str) -> float:
    """An input's own correlation with people on `files`: the mean over genres of the mean
    over their datasets of Spearman's rho."""
    per = {f.name: (f.alone(reading, name), math.nan) for f in files}
    return means(per, {f.name: f.genre for f in files})[0]


def members(file: HeadFile) -> list[np.ndarray]:
    """The positions of each input's (group's) outputs, in the order `group_taus` numbers
    them: what a bootstrap over inputs draws."""
    ids = {g: k for k, g in enumerate(dict.fromkeys(file.groups))}
    gid = np.array([ids[g] for g in file.groups])
    return [np.flatnonzero(gid == k) for k in range(len(ids))]


def interval(
    preds: Mapping[str, np.ndarray],
    files: Sequence[HeadFile],
    by_genre: bool,
    *,
    n_samples: int = 200,
    seed: int = 12345,
) -> dict[str, tuple[float, float]]:
    """95% intervals of the mean rho and mean tau (groups resampled within each file)."""
    rng = np.random.default_rng(seed)
    genres = {f.name: f.genre for f in files} if by_genre else None
    prepared = [(f, members(f), group_taus(preds[f.name], f)) for f in files]
    rhos, taus = np.empty(n_samples), np.empty(n_samples)
    for b in range(n_samples):
        per = {}
        for f, groups, tau in prepared:
            pick = rng.integers(0, len(groups), len(groups))
            rows = np.concatenate([groups[k] for k in pick])
            per[f.name] = (spearman(preds[f.name][rows], f.human[rows]), nanmean(tau[pick]))
        rhos[b], taus[b] = means(per, genres)
    out = {"rho": tuple(np.nanpercentile(rhos, [2.5, 97.5]).tolist())}
    out["tau"] = (
        tuple(np.nanpercentile(taus, [2.5, 97.5]).tolist())
        if np.isfinite(taus).any()
        else (math.nan, math.nan)
    )
    return out


def reported_figures(
    entry: Mapping, names: Sequence[str], system_names: Sequence[str]
) -> tuple[Judgement, float | None]:
    """A head's held-out figures on the files `names` as its heads report entry gives them
    (its table's "head" row, per file): the judgement, and its mean system pair accuracy over
    `system_names` (None where the report has none of them)."""
    row = next(r for r in entry["table"] if r["label"] == "head")
    nan = float("nan")
    per = {}
    for n in names:
        rho, tau = row["per_file"][n]
        per[n] = (nan if rho is None else rho, nan if tau is None else tau)
    rho, tau = means(per, None)
    systems = (row.get("system") or {}).get("per_file") or {}
    accs = [systems[n][0] for n in system_names if n in systems]
    return Judgement(per, rho, tau), (nanmean(accs) if accs else None)


def has_held_out_row(entry: Mapping | None) -> bool:
    """Whether a heads report entry holds its head's held-out figures per file."""
    return bool(entry) and any(r.get("label") == "head" for r in entry.get("table") or ())
