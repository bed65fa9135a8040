"""Markdown for `fluency benchmark`: a summary per model (files as rows: the model beside the
best baseline, with the bootstrap interval of the difference), then one table per statistic with
every model, baseline and feature as rows and the files as columns.

The same tables as a folder of pages (`--results`) are written by `benchmark_pages`, which
builds them from these."""

from __future__ import annotations

import math
from collections.abc import Sequence

from scorer.evidence.benchmark_run import BenchmarkRun
from scorer.evidence.genres import lodo_section

__all__ = [
    "aggregate_table",
    "markdown",
    "summary_table",
    "system_table",
    "versus_first_model_table",
]

STATISTICS = (
    ("spearman", "Spearman's rho over all outputs"),
    ("kendall", "mean per-input Kendall tau-b"),
    ("pairwise", "pairwise accuracy inside inputs"),
)


def _num(value: float | None, digits: int = 3) -> str:
    if value is None or not math.isfinite(value):
        return "–"
    return f"{value:.{digits}f}"


def _diff(d) -> str:
    if d is None:
        return "–"
    return f"{d.difference:+.3f} [{d.ci_low:+.3f}, {d.ci_high:+.3f}]"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(row) + " |" for row in rows]
    return out


def _summary(run: BenchmarkRun, model: str) -> list[str]:
    rows = []
    for f in run.files:
        a = f.table[model]
        c = f.counts
        left = f"{c['n_empty']} + {c['n_references']}"
        cells = [f.name, str(c["n_kept"]), left, _num(a.spearman)]
        for what in ("spearman", "kendall"):
            best = f.best[what]
            value = getattr(f.table[best], what) if best else None
            d = f.differences[model].get(what)
            if what == "kendall":
                cells.append(_num(a.kendall))
            cells += [f"{best} {_num(value)}" if best else "–", _diff(d)]
        cells.append(_num(a.pairwise))
        rows.append(cells)
    header = [
        "file",
        "n kept",
        "left out (empty + refs)",
        "rho",
        "best baseline, rho",
        "rho: model - best [95% CI]",
        "per-input tau",
        "best baseline, tau",
        "tau: model - best [95% CI]",
        "pairwise acc.",
    ]
    return _table(header, rows)


def _signs(run: BenchmarkRun, column: str) -> str:
    marks = []
    for f in run.files:
        s = f.signs.get(column)
        marks.append("+" if s == 1 else "-" if s == -1 else ".")
    return "".join(marks)


def _full(run: BenchmarkRun, what: str) -> list[str]:
    columns = list(dict.fromkeys(k for f in run.files for k in f.table))
    kinds = {k: f.kinds[k] for f in run.files for k in f.kinds}
    rows = []
    for k in columns:
        label = f"**{k}**" if kinds[k] == "model" else k
        sign = _signs(run, k) if kinds[k] == "feature" else kinds[k]
        cells = [label, sign]
        for f in run.files:
            a = f.table.get(k)
            cells.append(_num(getattr(a, what)) if a else "–")
        rows.append(cells)
    return _table(["column", "direction", *(f.name for f in run.files)], rows)


def versus_first_model_table(run: BenchmarkRun) -> list[str]:
    """Each model after the first minus the first, rho and per-input tau, on the same bootstrap
    draws: rows "model: statistic", files as columns, cells the difference [95% CI]."""
    rows = [
        [f"{model}: {title}"]
        + [_diff(f.versus_first_model.get(model, {}).get(what)) for f in run.files]
        for model in run.models[1:]
        for what, title in STATISTICS[:2]
    ]
    return _table(["model: statistic", *(f.name for f in run.files)], rows)


def markdown(run: BenchmarkRun, *, full: bool = True, level: int = 3) -> str:
    """The run as Markdown: summaries, then (with `full`) every column on every file; headings
    from `level` down."""
    h, sub = "#" * level, "#" * (level + 1)
    out = [f"{h} Aggregate `{run.aggregate}`", ""]
    out.append(
        f"Paired bootstrap: {run.n_samples} resamples of inputs (of outputs where a file has no "
        f"groups), seed {run.seed}; intervals are 95% percentile intervals."
    )
    out += [f"Note: {n}" for n in run.notes]
    out += lodo_section(run, sub)
    for model in run.models:
        out += ["", f"{sub} {model}: the model beside the best baseline of each file", ""]
        out += _summary(run, model)
    out += ["", f"{sub} System level: each system's mean score against its mean human score", ""]
    out += system_table(run)
    if len(run.models) > 1:
        first = run.models[0]
        out += ["", f"{sub} Each model minus `{first}` [95% CI], same draws", ""]
        out += versus_first_model_table(run)
    if full:
        for what, title in STATISTICS:
            out += ["", f"{sub} {title}", ""]
            out.append(
                "direction: per file, the sign a feature was used with (from the other files); "
                "a model or baseline is used as it is."
            )
            out.append("")
            out += _full(run, what)
        out += ["", f"{sub} System level: pair accuracy of system means, every column", ""]
        out += _full_systems(run)
    return "\n".join(out) + "\n"


def _full_systems(run: BenchmarkRun) -> list[str]:
    files = [f for f in run.files if f.systems]
    if not files:
        return ["No file has six or more systems."]
    columns = list(dict.fromkeys(k for f in files for k in f.systems))
    kinds = {k: f.kinds[k] for f in files for k in f.kinds}
    rows = []
    for k in columns:
        label = f"**{k}**" if kinds.get(k) == "model" else k
        cells = [label, _signs(run, k) if kinds.get(k) == "feature" else kinds.get(k, "")]
        cells += [_num(f.systems[k].accuracy) if k in f.systems else "–" for f in files]
        rows.append(cells)
    return _table(["column", "direction", *(f.name for f in files)], rows)


def _acc(a) -> str:
    if a is None:
        return "–"
    low, high = a.accuracy_95
    ci = f" [{_num(low)}, {_num(high)}]" if math.isfinite(low) else ""
    return f"{_num(a.accuracy)}{ci}"


def system_table(run: BenchmarkRun) -> list[str]:
    """Per file with a system-level view: the share of system pairs each model orders as people
    do [95% CI over inputs] and the Spearman of system means, beside minus the length, chrF
    (where the file has references) and the best single feature; then each file skipped and
    why."""
    rows, skipped = [], []
    for f in run.files:
        if not f.systems:
            skipped.append(f"- {f.name}: skipped, {f.systems_skipped or 'no systems'}")
            continue
        a0 = next(iter(f.systems.values()))
        cells = [f.name, str(a0.n_systems), str(a0.n_pairs)]
        for m in run.models:
            a = f.systems.get(m)
            cells.append(f"{_acc(a)}; {_num(a.spearman) if a else '–'}")
        for base in ("minus length", "chrF"):
            a = f.systems.get(base)
            cells.append(f"{_acc(a)}; {_num(a.spearman)}" if a else "–")
        features = [k for k in f.systems if f.kinds.get(k) == "feature"]
        top = max(features, key=lambda k: _key(f.systems[k].accuracy), default=None)
        cells.append(
            f"{top} {_num(f.systems[top].accuracy)}; {_num(f.systems[top].spearman)}"
            if top
            else "–"
        )
        rows.append(cells)
    header = ["file", "systems", "pairs apart"]
    header += [f"{m}: accuracy [95%]; rho" for m in run.models]
    header += ["minus length", "chrF (references)", "best single feature"]
    out = [
        "Pairs of systems ordered as people order them by their means (pairs people rate "
        "equal left out, a tie one half) [95% bootstrap interval over inputs]; rho: Spearman "
        "of the system means. Human references are not systems here.",
        "",
    ]
    out += _table(header, rows) if rows else ["No file has six or more systems."]
    if skipped:
        out += ["", "Files without a system-level view:", "", *skipped]
    return out


def _key(value: float) -> float:
    return value if math.isfinite(value) else -math.inf


def aggregate_table(runs: Sequence[BenchmarkRun]) -> str:
    """Each model under each aggregate, files as columns: rho and per-input tau."""
    if not runs:
        return ""
    names = [f.name for f in runs[0].files]
    out = []
    for what, title in STATISTICS[:2]:
        rows = []
        for run in runs:
            for model in run.models:
                rows.append(
                    [f"{model} `{run.aggregate}`"]
                    + [_num(getattr(f.table[model], what)) for f in run.files]
                )
        best = [runs[0].files[i].best[what] for i in range(len(names))]
        rows.append(
            ["best baseline (`" + runs[0].aggregate + "`)"]
            + [
                _num(getattr(f.table[b], what)) if b else "–"
                for f, b in zip(runs[0].files, best, strict=True)
            ]
        )
        out += ["", f"{title}:", ""]
        out += _table(["model, aggregate", *names], rows)
        rows = []
        for run in runs[1:]:
            for model in run.models:
                diffs = run.versus_first.get(model, {})
                rows.append(
                    [f"{model} `{run.aggregate}` - `{runs[0].aggregate}`"]
                    + [_diff(diffs.get(n, {}).get(what)) for n in names]
                )
        if rows:
            out += ["", f"{title}, difference from `{runs[0].aggregate}` [95% CI]:", ""]
            out += _table(["model, aggregate", *names], rows)
    return "\n".join(out).lstrip("\n") + "\n"


def _mean(values: Sequence[float | None]) -> tuple[float | None, int]:
    kept = [v for v in values if v is not None and math.isfinite(v)]
    return (sum(kept) / len(kept) if kept else None), len(kept)


def summary_table(run: BenchmarkRun) -> list[str]:
    """Per statistic, files as rows: every model, the best baseline of the file, and the mean
    over the files that have the statistic."""
    out = []
    for what, title in STATISTICS:
        rows = []
        for f in run.files:
            best = f.best.get(what)
            value = getattr(f.table[best], what) if best else None
            cells = [f.name, str(f.counts["n_kept"])]
            cells += [_num(getattr(f.table[m], what)) for m in run.models]
            if what != "pairwise":
                cells.append(f"{best} {_num(value)}" if best else "–")
            rows.append(cells)
        means = [_mean([getattr(f.table[m], what) for f in run.files]) for m in run.models]
        n_files = max(n for _, n in means)
        last = [f"mean ({n_files} files)", ""] + [_num(m) for m, _ in means]
        header = ["file", "n kept", *run.models]
        if what != "pairwise":
            best_values = [
                getattr(f.table[f.best[what]], what) if f.best.get(what) else None
                for f in run.files
            ]
            last.append(_num(_mean(best_values)[0]))
            header.append("best baseline of the file")
        out += ["", f"{title}:", ""]
        out += _table(header, [*rows, last])
    return out[1:]
