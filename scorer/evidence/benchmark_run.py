"""`fluency benchmark`: every judgement file of a folder, every model, one protocol
(`scorer.evidence.benchmark`), for each way of folding a text's sentences into one score."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from tqdm import tqdm

from features.placeholders import fill_placeholders
from features.rows import default_cache_dir
from scorer.errors import InputError
from scorer.evidence.benchmark import (
    ColumnAgreement,
    Difference,
    FileColumns,
    Pairs,
    agreement,
    best_baseline,
    group_bootstrap,
    loo_signs,
)
from scorer.evidence.benchmark_data import (
    baseline_columns,
    baseline_rows,
    cut,
    model_columns,
    read_judged,
)
from scorer.evidence.genres import GENRES, NOT_SYSTEMS, genres_of
from scorer.evidence.system_level import SystemAgreement, SystemDraws, skip_reason

__all__ = [
    "LODO_LABEL",
    "BenchmarkRun",
    "FileResult",
    "field_of",
    "file_columns",
    "judgement_files",
    "run_benchmark",
]

LODO_LABEL = "calibrated (LODO)"


@dataclass(frozen=True)
class FileResult:
    name: str
    counts: dict[str, int]
    table: dict[str, ColumnAgreement]  # models, then baselines, then oriented features
    kinds: dict[str, str]  # column -> "model" | "baseline" | "feature"
    signs: dict[str, float]  # feature -> the direction it was used in on this file
    best: dict[str, str | None]  # "spearman" | "kendall" -> best baseline or feature
    differences: dict[str, dict[str, Difference]]  # model -> statistic -> model - best
    # model (each after the first) -> statistic -> this model - the first model
    versus_first_model: dict[str, dict[str, Difference]] = field(default_factory=dict)
    # System level (`scorer.evidence.system_level`): column -> its figures, or why none.
    systems: dict[str, SystemAgreement] = field(default_factory=dict)
    systems_skipped: str | None = None


@dataclass(frozen=True)
class BenchmarkRun:
    aggregate: str
    files: list[FileResult]
    models: list[str]
    n_samples: int
    seed: int
    notes: list[str] = field(default_factory=list)
    # model -> file -> statistic -> this aggregate's score minus the first aggregate's
    versus_first: dict[str, dict[str, dict[str, Difference]]] = field(default_factory=dict)
    protocol: str = "plain"
    genres: dict[str, str] = field(default_factory=dict)  # file -> genre
    held_out: dict[str, str] = field(default_factory=dict)  # file -> how the second stage was
    second_stage: dict[str, dict] = field(default_factory=dict)  # file -> its choices


def field_of(name: str, human_field: str | Mapping[str, str]) -> str:
    """The human score field of judgement file `name`: `human_field` itself, or its entry for
    the file in a mapping whose "" key holds the field of every other file."""
    if isinstance(human_field, str):
        return human_field
    return human_field.get(name, human_field.get("", "score"))


def judgement_files(dev: str | Path, files: Sequence[str] = ()) -> list[Path]:
    """`files` (paths, or names inside `dev`), else every *.jsonl in `dev`, sorted."""
    dev = Path(dev)
    if files:
        out = [Path(f) if Path(f).is_file() else dev / f for f in files]
        missing = [str(p) for p in out if not p.is_file()]
        if missing:
            raise InputError(f"no judgement file {', '.join(missing)}")
        return out
    if not dev.is_dir():
        raise InputError(f"no folder {dev}: give --dev DIR with the judgement files (*.jsonl)")
    out = sorted(dev.glob("*.jsonl"))
    if not out:
        raise InputError(f"{dev} holds no *.jsonl judgement files")
    return out


def _labels(scorers: Sequence, names: Sequence[str]) -> list[str]:
    labels = [s.name for s in scorers]
    if len(set(labels)) != len(labels):
        labels = [str(n) for n in names]
    if len(set(labels)) != len(labels):
        labels = [f"{i}:{n}" for i, n in enumerate(names)]
    return labels


def file_columns(
    scorers,
    labels,
    paths,
    aggregates,
    *,
    cache_dir,
    human_field,
    keep_references,
    n_jobs,
    readings=False,
    cut_to: tuple[int, int, int] = (0, 0, 12345),
) -> dict[str, list[FileColumns]]:
    """{aggregate: [FileColumns per file]}: every model under every aggregate, rows cached;
    with `cut_to` (max outputs, max words, seed) each file cut by whole inputs first."""
    out: dict[str, list[FileColumns]] = {how: [] for how in aggregates}
    for path in tqdm(paths, desc="files", unit=" file"):
        field_name = field_of(path.stem, human_field)
        judged = read_judged(path, human_field=field_name, keep_references=keep_references)
        judged = cut(judged, *cut_to)
        if len(judged.texts) < 5:
            raise InputError(f"{path}: {len(judged.texts)} outputs kept, need at least 5")
        per_model = {}
        for scorer, label in zip(scorers, labels, strict=True):
            per_model[label] = model_columns(
                scorer, judged.texts, aggregates, cache_dir=cache_dir, n_jobs=n_jobs
            )
        first = per_model[labels[0]]
        whole = baseline_rows(scorers[0], judged.texts, cache_dir=cache_dir, n_jobs=n_jobs)
        base = baseline_columns(whole, judged.texts, judged.refs)
        extra = {}
        if readings:  # the second stage's inputs beside the features (protocol "lodo")
            filled = fill_placeholders(judged.texts, scorers[0].placeholders)
            extra = scorers[0].readings(filled, cache_dir=cache_dir)
        for how in aggregates:
            rows = first[how][1]
            features = {k: np.array([r[k] for r in rows], dtype=float) for k in rows[0]}
            out[how].append(
                FileColumns(
                    judged.name,
                    judged.human,
                    judged.groups,
                    {label: per_model[label][how][0] for label in labels},
                    base,
                    features,
                    judged.counts,
                    extra,
                    judged.systems,
                )
            )
    return out


def _evaluate(files: list[FileColumns], *, n_samples: int, seed: int) -> list[FileResult]:
    signs = loo_signs(files)
    results = []
    for f in files:
        pairs = Pairs(f.human, f.groups)
        oriented = {k: signs[f.name][k] * x for k, x in f.features.items() if k in signs[f.name]}
        others = {**f.baselines, **oriented}
        table = {k: agreement(x, f.human, pairs) for k, x in {**f.models, **others}.items()}
        kinds = {k: "model" for k in f.models} | {k: "baseline" for k in f.baselines}
        kinds |= {k: "feature" for k in oriented}
        contenders = {k: table[k] for k in others}
        best = {w: best_baseline(contenders, w) for w in ("spearman", "kendall")}
        chosen = {b: others[b] for b in set(best.values()) if b is not None}
        differences = {}
        for label, x in f.models.items():
            boot = group_bootstrap(x, chosen, f.human, pairs, n_samples=n_samples, seed=seed)
            differences[label] = {
                w: boot[w][best[w]] for w in ("spearman", "kendall") if best[w] in boot[w]
            }
        # Several models: each against the first, on the same draws, so a user picks with numbers.
        labels = list(f.models)
        versus = {}
        for label in labels[1:]:
            boot = group_bootstrap(
                f.models[label],
                {"first": f.models[labels[0]]},
                f.human,
                pairs,
                n_samples=n_samples,
                seed=seed,
            )
            versus[label] = {w: d["first"] for w, d in boot.items() if d}
        skipped = skip_reason(f.systems, not_a_generator=NOT_SYSTEMS.get(f.name))
        by_system = {}
        if skipped is None:
            draws = SystemDraws(f.human, f.systems, f.groups, n_samples=n_samples, seed=seed)
            by_system = {k: draws.agreement(x) for k, x in {**f.models, **others}.items()}
        results.append(
            FileResult(
                f.name,
                f.counts,
                table,
                kinds,
                signs[f.name],
                best,
                differences,
                versus,
                by_system,
                skipped,
            )
        )
    return results


def _versus(first: list[FileColumns], other: list[FileColumns], n_samples: int, seed: int):
    """Paired bootstrap of each model under `other`'s aggregate minus under `first`'s."""
    if first is other:
        return {}
    out: dict[str, dict[str, dict[str, Difference]]] = {}
    for a, b in zip(first, other, strict=True):
        pairs = Pairs(a.human, a.groups)
        for label, x in b.models.items():
            boot = group_bootstrap(
                x, {"first": a.models[label]}, a.human, pairs, n_samples=n_samples, seed=seed
            )
            out.setdefault(label, {})[a.name] = {w: d["first"] for w, d in boot.items() if d}
    return out


def run_benchmark(
    scorers: Sequence,
    paths: Sequence[Path],
    *,
    aggregates: Sequence[str],
    names: Sequence[str] | None = None,
    cache_dir: str | Path | None = None,
    human_field: str | Mapping[str, str] = "score",
    keep_references: bool = False,
    n_jobs: int = 1,
    n_samples: int = 1000,
    seed: int = 12345,
    protocol: str = "plain",
    second_stage=None,
    genres: Mapping[str, str] | None = None,
    readings: bool | None = None,
    max_outputs: int = 0,
    max_words: int = 0,
) -> list[BenchmarkRun]:
    """One `BenchmarkRun` per aggregate. Feature rows come from each scorer's rows
    (`features.rows`), kept under `cache_dir` (default `features.rows.default_cache_dir()`),
    computed in `n_jobs` processes where missing.

    `protocol` "lodo": `second_stage(files, genres)`
    (`training.heads.selection.held_out.lodo_columns`: scorer must not import training) returns, per
    file, a head's scores chosen and fitted on the other files of its genre (folds of its inputs in
    a genre of one file) and how it was held out; they are scored as one more model column,
    "calibrated (LODO)", beside the first model."""
    if protocol not in ("plain", "lodo"):
        raise InputError(f"unknown protocol {protocol!r}; choose plain or lodo")
    if protocol == "lodo" and second_stage is None:
        raise InputError(
            "protocol lodo needs a head to fit (training.heads.selection.held_out.benchmark_stage)"
        )
    if not scorers:
        raise InputError("give at least one model")
    names = list(names or [s.name for s in scorers])
    if protocol == "lodo" and getattr(scorers[0], "head", None) is not None:
        # The held-out second stage is fitted on the GLEU stage of the first model, shown first.
        scorers = [scorers[0].gleu_stage(), *scorers]
        names = [f"{names[0]} GLEU", *names]
    labels = _labels(scorers, names)
    columns = file_columns(
        scorers,
        labels,
        paths,
        list(aggregates),
        cache_dir=default_cache_dir() if cache_dir is None else cache_dir,
        human_field=human_field,
        keep_references=keep_references,
        n_jobs=n_jobs,
        readings=protocol == "lodo" if readings is None else readings,
        cut_to=(max_outputs, max_words, seed),
    )
    file_genres = genres_of([p.stem for p in paths], genres or GENRES)
    held_out: dict[str, dict[str, str]] = {how: {} for how in aggregates}
    choices: dict[str, dict[str, dict]] = {how: {} for how in aggregates}
    if protocol == "lodo":
        for how in aggregates:
            scores, info = second_stage(columns[how], file_genres)
            for f in columns[how]:
                f.models[LODO_LABEL] = scores[f.name]
                held_out[how][f.name] = info[f.name]["held_out"]
                choices[how][f.name] = info[f.name]
        labels = [*labels, LODO_LABEL]
    runs = []
    for how in aggregates:
        versus = _versus(columns[aggregates[0]], columns[how], n_samples, seed)
        notes = []
        if len(paths) < 2:
            notes.append("one file: no other file to take a feature's direction from: no features")
        results = _evaluate(columns[how], n_samples=n_samples, seed=seed)
        runs.append(
            BenchmarkRun(
                how,
                results,
                labels,
                n_samples,
                seed,
                notes,
                versus,
                protocol,
                {f: g for f, g in file_genres.items()},
                held_out[how],
                choices[how],
            )
        )
    return runs


def nan_to_none(value: float) -> float | None:
    return value if isinstance(value, float) and math.isfinite(value) else None


def as_dict(run: BenchmarkRun) -> dict:
    """A JSON-ready view of one run."""
    from dataclasses import asdict

    def clean(obj):
        if isinstance(obj, float):
            return nan_to_none(obj)
        if isinstance(obj, Mapping):
            return {k: clean(v) for k, v in obj.items()}
        if isinstance(obj, list | tuple):
            return [clean(v) for v in obj]
        return obj

    return clean(
        {
            "aggregate": run.aggregate,
            "models": run.models,
            "bootstrap": {"n_samples": run.n_samples, "seed": run.seed},
            "notes": run.notes,
            "protocol": run.protocol,
            "genres": run.genres,
            "held_out": run.held_out,
            "second_stage": run.second_stage,
            "versus_first_aggregate": {
                m: {f: {w: asdict(d) for w, d in ds.items()} for f, ds in files.items()}
                for m, files in run.versus_first.items()
            },
            "files": [
                {
                    "file": f.name,
                    "counts": f.counts,
                    "best_baseline": f.best,
                    "differences": {
                        m: {w: asdict(d) for w, d in diffs.items()}
                        for m, diffs in f.differences.items()
                    },
                    "versus_first_model": {
                        m: {w: asdict(d) for w, d in diffs.items()}
                        for m, diffs in f.versus_first_model.items()
                    },
                    "columns": {
                        k: {"kind": f.kinds[k], "sign": f.signs.get(k, 1.0), **asdict(a)}
                        for k, a in f.table.items()
                    },
                    "system_level": {k: asdict(a) for k, a in f.systems.items()},
                    "system_level_skipped": f.systems_skipped,
                }
                for f in run.files
            ],
        }
    )
