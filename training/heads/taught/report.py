"""`python -m training.heads.taught.report REPORT.json`: the taught heads' tables from a heads
report (`python -m training.heads --model default --taught --json REPORT.json`), as markdown:
each head's held-out rows (the taught head, the head it faced, its teacher, minus the length,
its best single input) per text and per system, with 95% intervals and per-file wins, and where
the student lands between the head it faced (0) and its teacher (1)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = ["landing", "main", "taught_entries", "unit_table"]

TEACHER = "teacher (neural learned head)"


def taught_entries(report: Mapping) -> dict[str, dict]:
    """{head: the taught head's entry} of a heads report: the decision where it shipped, else
    the entry kept beside it (`also_tried`)."""
    out = {}
    for unit, decision in report.items():
        for entry in [decision, *decision.get("also_tried", [])]:
            if "taught" in entry and "table" in entry:
                out[unit] = entry
                break
    return out


def _figures(row: Mapping) -> tuple[float | None, float | None, float | None]:
    system = row.get("system") or {}
    return row.get("rho"), row.get("tau"), system.get("accuracy")


def landing(entry: Mapping) -> dict[str, float | str]:
    """{"rho", "tau", "systems": (student - current) / (teacher - current)}: 0 at the head it
    faced, 1 at its teacher; "teacher not above" where the teacher is not above that head
    (there is no way between them to land on), "n/a" where a figure is missing."""
    rows = {r["label"]: r for r in entry["table"]}
    student = _figures(rows["head"])
    current = _figures(next(r for k, r in rows.items() if k.startswith("current head")))
    teacher = _figures(rows[TEACHER])
    out = {}
    for k, s, c, t in zip(("rho", "tau", "systems"), student, current, teacher, strict=True):
        if None in (s, c, t):
            out[k] = "n/a"
        else:
            out[k] = round((s - c) / (t - c), 2) if t > c else "teacher not above"
    return out


def _ci(pair) -> str:
    return f" [{pair[0]:.3f}, {pair[1]:.3f}]" if pair else ""


def unit_table(unit: str, entry: Mapping) -> list[str]:
    """The markdown lines of one head's entry."""
    lines = [f"**{unit}** ({entry['held_out']}): {entry['decision']}", ""]
    lines += ["| row | rho [95%] | tau [95%] | system pairs [95%] | wins of the taught head |"]
    lines += ["|---|---|---|---|---|"]
    for row in entry["table"]:
        system = row.get("system") or {}
        acc = system.get("accuracy")
        systems = "" if acc is None else f"{acc:.3f}{_ci(system.get('accuracy_95'))}"
        tau = "" if row["tau"] is None else f"{row['tau']:.3f}{_ci(row.get('tau_95'))}"
        wins = ", ".join(f"{k} {v}" for k, v in (row.get("wins") or {}).items())
        rho = f"{row['rho']:.3f}{_ci(row.get('rho_95'))}"
        lines.append(f"| {row['label']} | {rho} | {tau} | {systems} | {wins} |")
    land = landing(entry)
    lines += ["", "where it lands between the head it faced (0) and its teacher (1): "]
    lines[-1] += ", ".join(f"{k} {v}" for k, v in land.items())
    taught = ", ".join(
        f"{g}: {v['texts']} texts, read {v.get('reading', 'whole')}, alpha {v['alpha']:g}, "
        f"R^2 {v['fidelity_r2']}"
        for g, v in entry["taught"].items()
    )
    served = entry["taught"].get("served (every genre)", {})
    if "teacher_vs_shipped_r" in served:
        lines += [
            "",
            "the teacher fitted on every file against the shipped learned head: its weights on "
            f"the states correlate {served['teacher_vs_shipped_r']:.4f}",
        ]
    follow = entry.get("follows_teacher") or {}
    lines += ["", f"students (teacher refitted without the genre; R^2 on a set left out): {taught}"]
    if follow:
        lines += [
            "",
            f"Spearman with its teacher on the files it never saw: mean {follow['mean']:.3f} "
            f"({', '.join(f'{k} {v:.3f}' for k, v in follow['per_file'].items())})",
        ]
    return [*lines, ""]


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m training.heads.taught.report", description=__doc__)
    ap.add_argument("report", help="a heads report written with --taught --json")
    args = ap.parse_args(argv)
    report = json.loads(Path(args.report).read_text(encoding="utf-8"))
    entries = taught_entries(report)
    if not entries:
        print(f"{args.report}: no taught head in it (run python -m training.heads --taught)")
        return 1
    for unit, entry in entries.items():
        print("\n".join(unit_table(unit, entry)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
