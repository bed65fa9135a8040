"""The writing of the chosen heads into a bundle: the card's `heads` and `summary`,
`heads_report.json` beside it (`write_card`), the heads as Markdown in the bundle's README
(`heads_markdown`, `write_readme`), and the cards' genre x tier table (`tier_table`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path

from scorer.heads import Head, card_heads
from training.heads.data.files import MINUS_LENGTH
from training.heads.report.tables import cell, lead_rows, table_markdown

__all__ = [
    "HEADS_BEGIN",
    "HEADS_END",
    "heads_markdown",
    "rewrite_heads",
    "tier_table",
    "write_card",
    "write_readme",
]

HEADS_BEGIN, HEADS_END = "<!-- heads: written by python -m training.heads -->", "<!-- /heads -->"


def heads_markdown(card: Mapping, report: Mapping | None = None) -> list[str]:
    """The card's heads as Markdown: per head, what it reads with which weight, and its held-out
    table (the head, minus the length, the best single input, then the next best inputs) from
    `report`, the full one (`scorer.heads_report.read_heads_report`; None: the card's own)."""
    out = ["## Heads", ""]
    heads = card_heads(card)
    report = card.get("heads_report", {}) if report is None else report
    for name in sorted(report, key=lambda g: (g != "general", g)):
        r = report[name]
        out.append(f"### {name}: {r['decision']}")
        out.append("")
        head = heads.get(name) if r["decision"].startswith("shipped") else None
        if head:
            weights = _weights_text(Head.from_section(head))
            scrambles = r.get("scrambles")
            checked = (
                f"; scores real sentences above their shuffles for {scrambles:.1%} of 200"
                if isinstance(scrambles, int | float) and math.isfinite(scrambles)
                else "; not checked on shuffled sentences"
            )
            out += [
                f"Reading `{head['aggregate']}`; held out: {r.get('held_out')}; weights {weights}, "
                f"intercept {head['linear']['intercept']:+.4g}{checked}.",
                "",
            ]
        if r.get("table"):
            lead = len(lead_rows(r["table"]))
            out += table_markdown(r["table"], rows=lead + 5)
            out.append("")
        for f, why in (r.get("system_level_skipped") or {}).items():
            out.append(f"- system level: {f} skipped, {why}")
        if r.get("system_level_skipped"):
            out.append("")
    command = next((h.get("command") for h in heads.values() if h.get("command")), None)
    if command:
        out += ["Chosen and fitted by", "", "```sh", command, "```", ""]
    return out


def _weights_text(head: Head) -> str:
    """A head's non-zero weights, the columns of each of `scorer.contributions.GROUPS` (the
    576 state columns of the learned head) counted as one."""
    from scorer.contributions import group_of

    parts, groups = [], {}
    for c, w in zip(head.inputs, head.coef.tolist(), strict=True):
        label = group_of(c)
        if label is not None and w:
            groups[label] = groups.get(label, 0) + 1
        elif w:
            parts.append(f"`{c}` {w:+.4g}")
    return ", ".join(parts + [f"`{g}` ({n} weights)" for g, n in groups.items()])


def write_readme(folder: Path, card: Mapping, report: Mapping | None = None) -> None:
    """The card's heads, in the bundle's README between the heads markers (appended once), with
    the tables of `report` (`heads_markdown`)."""
    path = folder / "README.md"
    text = path.read_text(encoding="utf-8") if path.is_file() else f"# {folder.name}\n"
    block = "\n".join([HEADS_BEGIN, *heads_markdown(card, report), HEADS_END])
    if HEADS_BEGIN in text and HEADS_END in text:
        before, rest = text.split(HEADS_BEGIN, 1)
        text = before + block + rest.split(HEADS_END, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    path.write_text(text, encoding="utf-8")


def write_card(folder: Path, sections: Mapping[str, dict], report: Mapping[str, dict]) -> None:
    """Every head chosen goes in the card's `heads`, the general one as `heads["general"]`, and
    replaces the card's heads, an older card's `calibration` among them; the report of every
    head tried (with the candidates kept beside each, `also_tried`) goes in `heads_report.json`
    beside the card, and in the card's `heads_report` without its tables
    (`scorer.heads_report.write_heads_report`); the card's `summary` is written from the heads
    (`scorer.summary`). An entry of `report` read from a lean card
    (its `head` without its `table`) keeps the table the bundle's report holds for it."""
    from scorer.bundle import CARD_FILE
    from scorer.head_weights import is_lean, join_weights, write_weights
    from scorer.heads import GENERAL
    from scorer.heads_report import read_heads_report, write_heads_report
    from scorer.summary import summarize

    card = join_weights(folder, json.loads((folder / CARD_FILE).read_text()))
    whole = card.get("heads") or {}  # a section read from a lean card takes its weights here
    sections = {k: whole[k] if is_lean(v) and k in whole else v for k, v in sections.items()}
    general = sections.get(GENERAL)  # a general head not chosen again is not kept
    card.pop("calibration", None)
    card["heads"] = {GENERAL: general} if general else {}
    card["heads"].update((k, v) for k, v in sections.items() if k != GENERAL)
    keys = (
        "decision",
        "reading",
        "inputs",
        "held_out",
        "scrambles",
        "table",
        "system_level_skipped",
        "said_again",
        "served",
        "against_general",
        "also_tried",
    )
    if any("head" in v and "table" not in v for v in report.values()):  # read from the card
        kept = read_heads_report(folder, card)
        report = {k: v if "table" in v else {**kept.get(k, {}), **v} for k, v in report.items()}
    full = {k: {x: v[x] for x in keys if x in v} for k, v in report.items()}
    card["heads"] = dict(sorted(card["heads"].items()))  # as the card is written and read
    write_heads_report(folder, card, full)
    card["summary"] = summarize(card)
    lean = write_weights(folder, card)
    (folder / CARD_FILE).write_text(json.dumps(lean, indent=2, sort_keys=True) + "\n")
    write_readme(folder, card, full)


def rewrite_heads(folder: Path, values: Mapping[str, object], change) -> None:
    """The card's heads named in `values` ({genre: value}) replaced by `change(section, value)`,
    the rest and the heads' report kept; the summary, the weights beside the card and the
    README written again from it."""
    from scorer.bundle import CARD_FILE
    from scorer.head_weights import join_weights, write_weights
    from scorer.heads_report import read_heads_report
    from scorer.summary import summarize

    card = join_weights(folder, json.loads((folder / CARD_FILE).read_text()))
    for genre, value in values.items():
        card["heads"][genre] = change(card["heads"][genre], value)
    card["summary"] = summarize(card)
    lean = write_weights(folder, card)
    (folder / CARD_FILE).write_text(json.dumps(lean, indent=2, sort_keys=True) + "\n")
    write_readme(folder, card, read_heads_report(folder, card))


def _sys(row: Mapping) -> str:
    """A table cell's system-level part: pair accuracy / rho of system means, held out."""
    sys_ = row.get("system")
    if not sys_:
        return ""
    return f"<br>systems {cell(sys_['accuracy'])} / {cell(sys_['rho'])}"


def tier_table(tiers: Sequence[str], models_dir: str | Path) -> list[str]:
    """Markdown, genre x tier, from the cards: each head's held-out rho / tau (per text) and
    pair accuracy / rho of system means (per system, where the genre's files have six or more
    systems) beside minus the length and the tier's best single input (held out the same way),
    or why it has none."""
    from scorer.bundle import CARD_FILE
    from scorer.heads_report import read_heads_report

    folders = {t: Path(models_dir) / t for t in tiers}
    reports = {
        t: read_heads_report(f, json.loads((f / CARD_FILE).read_text())) for t, f in folders.items()
    }
    genres = list(dict.fromkeys(g for r in reports.values() for g in r))
    genres.sort(key=lambda g: (g != "general", g))
    header = ["genre (held out)", *[f"`{t}`" for t in tiers], "minus length", "best single input"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for genre in genres:
        cells, minus, best = [], "", ""
        for t in tiers:
            r = reports[t].get(genre)
            if r is None:
                cells.append("–")
                continue
            table = {row["label"]: row for row in r.get("table", [])}
            row_minus = table.get(MINUS_LENGTH)
            if row_minus:  # tiers judged on the same sample share it; another is named
                value = f"{cell(row_minus['rho'])} / {cell(row_minus['tau'])}{_sys(row_minus)}"
                if not minus:
                    minus = value
                elif value not in minus:
                    minus += f"<br>{t}: {value}"
            top = next(
                (x for x in r.get("table", []) if x["label"].startswith("best single")), None
            )
            if top:
                name = top["label"].split(": ", 1)[1]
                best += f"{t}: {name} {cell(top['rho'])} / {cell(top['tau'])}{_sys(top)}<br>"
            cost = (r.get("said_again") or {}).get("held_out")
            if "served" in r and cost:  # no head shipped: the GLEU stage, said-again safe
                h = cost["with"]
                systems = f"<br>systems {cell(h['systems'])}" if h.get("systems") else ""
                cells.append(f"GLEU stage {cell(h['rho'])} / {cell(h['tau'])}{systems}")
            elif r["decision"].startswith("shipped") and "head" in table:
                h = table["head"]
                cells.append(f"**{cell(h['rho'])} / {cell(h['tau'])}**{_sys(h)}")
            else:
                why = r["decision"].removeprefix("not shipped: ")
                cells.append("none (one dataset)" if why.startswith("one dataset") else "none")
        held = (reports[tiers[0]].get(genre, {}).get("held_out") or "").replace(
            ", over every genre", ""
        )
        lines.append(
            f"| {genre} ({held or '–'}) | "
            + " | ".join(cells)
            + f" | {minus} | {best.removesuffix('<br>')} |"
        )
    return lines
