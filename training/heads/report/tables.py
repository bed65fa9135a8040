"""The writing of a head's choice: its report (`decision_report`: the decision and the held-out
table it was made on, from `training.heads.selection.evidence.Evidence` and the rule's
`training.heads.selection.ship_rule.Verdict`) and that table as Markdown (`table_markdown`,
`print_report`).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping, Sequence

import numpy as np

from training.heads.data.files import CHRF, MINUS_LENGTH
from training.heads.metrics.figures import Judgement, judge
from training.heads.metrics.systems import system_view
from training.heads.selection.evidence import Evidence
from training.heads.selection.ship_rule import FITTED, Verdict, wins

__all__ = [
    "cell",
    "decision_report",
    "lead_rows",
    "per_file_markdown",
    "print_report",
    "rounded",
    "row",
    "table_markdown",
]


def cell(v: float) -> str:
    return "–" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.3f}"


def _ci(pair) -> list[float | None]:
    return [None if math.isnan(x) else round(float(x), 4) for x in pair]


def row(
    label: str,
    j: Judgement,
    ci: Mapping | None = None,
    *,
    scrambles: float | None = None,
    system: Mapping | None = None,
    wins: Mapping[str, int | None] | None = None,
) -> dict:
    """One row of a head's table, whatever kind of head it is: held-out mean rho and mean
    per-input tau (tau None where no input has two outputs rated apart), their 95% intervals
    where computed (`ci`: {"rho": (low, high), "tau": (low, high)}), rho and tau per file, and
    where given the share of real sentences scored above their shuffles, the figures per system
    (`metrics.systems.SystemFigures.as_dict`) and the per-file wins against other rows."""
    out = {
        "label": label,
        "rho": round(j.rho, 4),
        "tau": None if math.isnan(j.tau) else round(j.tau, 4),
    }
    if ci is not None:
        out["rho_95"], out["tau_95"] = _ci(ci["rho"]), _ci(ci["tau"])
    out["per_file"] = {k: [rounded(r), rounded(t)] for k, (r, t) in j.per_file.items()}
    if scrambles is not None:
        out["scrambles"] = scrambles
    if system is not None:
        out["system"] = dict(system)
    if wins is not None:
        out["wins"] = dict(wins)
    return out


def rounded(x: float) -> float | None:
    return None if math.isnan(x) else round(float(x), 4)


def decision_report(ev: Evidence, verdict: Verdict) -> dict:
    """The decision and the table it is judged in: the head, minus the length, chrF where every
    file has references, the best single input and every single input, held out the same way,
    per text (rho, per-input tau) and per system (`training.heads.metrics.systems`), with 95%
    intervals, the share of real sentences each scores above their shuffles (`scrambles`), and
    on how many held-out files the head beats minus the length and its best single input
    (`wins`)."""
    head = None
    if verdict.head is not None:
        head = ev.fitted if verdict.head == FITTED else ev.singles[verdict.head]
    best_label = ev.best
    best = ev.singles[best_label]
    table = []
    if head is not None:
        preds = ev.preds(head)
        won = {
            MINUS_LENGTH: wins(head.judgement, ev.minus),
            "best single input": None if verdict.is_best else wins(head.judgement, best.judgement),
            "files": len(ev.files),
        }
        table.append(
            row("head", head.judgement, ev.interval(preds), system=_system(ev, preds), wins=won)
        )
    table.append(_baseline_row(ev, MINUS_LENGTH, ev.minus))
    table += _chrf_rows(ev)
    preds = ev.preds(best)
    label = f"best single input: {best_label}"
    table.append(row(label, best.judgement, ev.interval(preds), system=_system(ev, preds)))
    for k in sorted(ev.singles, key=lambda k: -_criterion(ev.singles[k])):
        point = None
        if ev.view:
            point = ev.view.point(ev.preds(ev.singles[k])).as_dict()
            point = {x: v for x, v in point.items() if x != "per_file"}
        share = round(ev.scrambles[k], 4) if k in ev.scrambles else None
        table.append(row(k, ev.singles[k].judgement, scrambles=share, system=point))
    skipped = dict(ev.view.skipped)
    if head is None:
        return {
            "ship": False,
            "decision": verdict.decision,
            "table": table,
            "system_level_skipped": skipped,
        }
    steps = ev.selection.steps if ev.selection is not None and not verdict.note else []
    return {
        "ship": verdict.ship,
        "decision": verdict.decision,
        "reading": head.reading,
        "inputs": list(head.inputs),
        "scrambles": rounded(ev.by_reading[head.reading].scrambles.get(head.inputs, math.nan)),
        "steps": [
            {
                "inputs": list(s.inputs),
                "rho": rounded(s.judgement.rho),
                "tau": rounded(s.judgement.tau),
                "criterion_gain_95": None if s.gain_interval is None else _ci(s.gain_interval),
            }
            for s in steps
        ],
        "readings": {
            r: {
                "inputs": list(s.inputs) if s.steps else [],
                "criterion": rounded(s.judgement.criterion) if s.steps else None,
            }
            for r, s in ev.by_reading.items()
        },
        "table": table,
        "system_level_skipped": skipped,
    }


def _criterion(c) -> float:
    return float(np.nan_to_num(c.judgement.criterion, nan=-9))


def _system(ev: Evidence, preds: Mapping[str, np.ndarray]) -> dict | None:
    """The figures per system of `preds`, with intervals (None: the files name too few)."""
    return ev.view.figures(preds).as_dict() if ev.view else None


def _baseline_row(ev: Evidence, label: str, j: Judgement) -> dict:
    preds = {f.name: f.baselines[label] for f in ev.files}
    return row(label, j, ev.interval(preds), system=_system(ev, preds))


def _chrf_rows(ev: Evidence) -> list[dict]:
    """chrF's row where the files have references: with intervals where every file has them,
    point figures on those alone where some have."""
    with_refs = [f for f in ev.files if CHRF in f.baselines]
    if with_refs and len(with_refs) == len(ev.files):
        return [_baseline_row(ev, CHRF, ev.judge({f.name: f.baselines[CHRF] for f in ev.files}))]
    if not with_refs:
        return []
    preds = {f.name: f.baselines[CHRF] for f in with_refs}
    j = judge(preds, with_refs, ev.by_genre)
    part = system_view(with_refs, ev.by_genre, n_samples=0, seed=ev.seed)
    label = f"{CHRF}, {len(with_refs)} of {len(ev.files)} files"
    return [row(label, j, system=part.point(preds).as_dict() if part else None)]


def lead_rows(table: Sequence[Mapping]) -> list[Mapping]:
    """The rows a head is judged against: itself, the plain baselines, its best single input."""
    out = []
    for row in table:
        out.append(row)
        if row["label"].startswith("best single"):
            break
    return out


def _system_cell(row: Mapping) -> str:
    sys_ = row.get("system")
    if not sys_:
        return "–"
    ci = sys_.get("accuracy_95")
    acc = cell(sys_["accuracy"]) + (f" [{cell(ci[0])}, {cell(ci[1])}]" if ci else "")
    return f"{acc} | {cell(sys_['rho'])}"


def table_markdown(table: Sequence[Mapping], rows: int | None = None) -> list[str]:
    """A head's table as Markdown: per text (mean rho, mean per-input tau) and per system
    (pairwise accuracy of system means, Spearman of system means), held out, with 95%
    intervals where computed, and the head's per-file wins."""
    out = [
        "| | mean rho [95%] | mean tau [95%] | systems: pair accuracy [95%] | systems: rho |",
        "|---|---|---|---|---|",
    ]
    chosen = lead_rows(table) if rows is None else list(table)[:rows]
    for row in chosen:
        rci = row.get("rho_95") or [None, None]
        tci = row.get("tau_95") or [None, None]
        rho = cell(row["rho"]) + (
            f" [{cell(rci[0])}, {cell(rci[1])}]" if rci[0] is not None else ""
        )
        tau = cell(row["tau"]) + (
            f" [{cell(tci[0])}, {cell(tci[1])}]" if tci[0] is not None else ""
        )
        system = _system_cell(row)
        out.append(f"| {row['label']} | {rho} | {tau} | {system if system != '–' else '– | –'} |")
    head = next((r for r in table if r["label"] == "head"), None)
    if head and head.get("wins"):
        w = head["wins"]
        versus_best = (
            "(the head is its best single input)"
            if w["best single input"] is None
            else f"and its best single input on {w['best single input']}"
        )
        current = w.get("current head")
        versus_current = "" if current is None else f", and the current head on {current}"
        out += [
            "",
            f"Per file (rho + per-input tau), the head beats minus the length on "
            f"{w[MINUS_LENGTH]} of {w['files']} held-out files {versus_best}{versus_current}.",
        ]
    return out


def per_file_markdown(table: Sequence[Mapping]) -> list[str]:
    """Every row's held-out rho / per-input tau on each file, one file a line."""
    files = list(table[0]["per_file"])
    out = ["| file | " + " | ".join(r["label"] for r in table) + " |"]
    out.append("|---|" + "---|" * len(table))
    for name in files:
        cells = []
        for r in table:
            rho, tau = r["per_file"][name]
            cells.append(cell(rho) + ("" if tau is None else f" / {cell(tau)}"))
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    return out


def said_again_line(entry: Mapping) -> str:
    """One line of a head's said-again check: its weight, its lowest share, and what the weight
    costs held out (mean rho / tau, system pair accuracy with it and without)."""
    shares = entry.get("shares") or {}
    line = f"said again: weight {entry['weight']:.3f}"
    if shares:
        kind = min(shares, key=shares.get)
        line += f", lowest share at or below the text {shares[kind]:.3f} ({kind})"
    cost = entry.get("held_out")
    if cost:
        w, wo = cost["with"], cost["without"]
        line += (
            f"; held out with it {_cell(w['rho'])} / {_cell(w['tau'])}, "
            f"systems {_cell(w['systems'])}; without {_cell(wo['rho'])} / {_cell(wo['tau'])}, "
            f"systems {_cell(wo['systems'])}"
        )
    return line


def against_general_line(figures: Mapping) -> str:
    """One line of a genre head against the general head on the genre's files."""

    def cell(x: Mapping) -> str:
        return f"{_cell(x.get('rho'))} / {_cell(x.get('tau'))}, systems {_cell(x.get('systems'))}"

    verdict = "above it" if figures["ok"] else "not above it"
    return (
        f"against the general head on its files ({verdict}): head {cell(figures['head'])}; "
        f"general {cell(figures['general'])}"
    )


def _cell(x) -> str:
    return "–" if x is None else f"{x:.3f}"


def print_report(report: Mapping[str, Mapping], out=sys.stdout) -> None:
    """Each head's held-out means beside minus the length and its best single input."""
    for name, r in report.items():
        print(f"\n## {name}: {r['decision']}", file=out)
        if "table" not in r:
            continue
        if r.get("reading"):
            print(
                f"reading {r['reading']}, inputs {', '.join(r['inputs'])}; "
                f"held out: {r['held_out']}",
                file=out,
            )
        print("\n".join(table_markdown(r["table"])), file=out)
        if r.get("said_again"):
            print(said_again_line(r["said_again"]), file=out)
        if r.get("against_general"):
            print(against_general_line(r["against_general"]), file=out)
        for f, why in (r.get("system_level_skipped") or {}).items():
            print(f"system level: {f} skipped, {why}", file=out)
        for other in r.get("also_tried", ()):
            print(f"also tried: {other['decision']}", file=out)
