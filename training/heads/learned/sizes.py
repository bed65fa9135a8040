"""`python -m training.heads.learned.sizes`: the learned heads against the size of what they are
fitted on, and the size the one ship rule prefers.

At each `--sizes` cut of every development file (N outputs and W words a file, by whole inputs,
the same seed; `all`: every rated output) the learned heads are chosen as `python -m
training.heads.learned` chooses them (the ridge on the states alone or averaged with the summed
log-probability; layer, pooling, variant and alpha held out), the states read from the store
of every rated output (`training.heads.learned.store`). Every cut is judged on the same outputs
(`--max-outputs`/`--max-words`), held out the same way: the general head one genre out, a
genre's head one dataset of the genre out.

Each unit's bar is its current head as it was fitted: a learned head by its held-out scores at
the cut its card says it was fitted on (the cut whose outputs a file match the card's), any
other head refitted held out. Every cut's head then faces the one ship rule
(`training.heads.selection.ship_rule.ships`) against that bar; the highest criterion among
those that pass is the size the rule prefers, and `--write` ships it.

    python -m training.heads.learned.sizes --model neural --sizes 600:16000 1500:40000 \\
        3000:80000 all --jobs 2 --json build/heads/sizes.json --plot docs/state_head_sizes.png
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from training.heads.data.files import MINUS_LENGTH, READING_MODES
from training.heads.learned.choice import LOGPROB_LABEL
from training.heads.metrics.figures import interval, judge
from training.heads.selection.ship_rule import ships

__all__ = ["Fit", "main", "parse_size", "rule"]


def parse_size(value: str) -> tuple[int, int]:
    """`--sizes` item: "N:W" (N outputs and W words a file), "N" (no word limit) or "all"."""
    if value == "all":
        return -1, 0
    n, _, w = value.partition(":")
    try:
        out = int(n), int(w or 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r}: give N:W, N or all") from None
    if out[0] <= 0 or out[1] < 0:
        raise argparse.ArgumentTypeError(f"{value!r}: give a positive count")
    return out


def _label(size: tuple[int, int]) -> str:
    return "all" if size[0] < 0 else f"{size[0]}:{size[1]}"


@dataclass
class Fit:
    """One unit's learned head at one cut: the outputs each file gave the fit, and what
    `training.heads.learned.candidates.LearnedCandidates.decide` found."""

    size: tuple[int, int]
    fitted: dict[str, int]
    found: object  # candidates.Decided


def rule(
    fits: Sequence[Fit], shown, by_genre: bool, bar: dict, floor: float, view, seed: int
) -> list[dict]:
    """Each cut's head against `bar` (the current head's held-out scores) under the one ship
    rule, with its figures per text and per system."""
    from training.heads.data.said_again import KINDS as SAID_AGAIN_KINDS

    bar_j = judge(bar, shown, by_genre)
    out = []
    for fit in fits:
        d = fit.found
        j = judge(d.preds, shown, by_genre)
        checks = dict(d.checks or {})
        share = checks.pop("shuffles", None)
        again = {k: checks.pop(k) for k in list(checks) if k in SAID_AGAIN_KINDS}
        gap = view.gain(d.preds, bar) if (view and by_genre) else None
        ruling = ships(
            j,
            minus=d.refs[MINUS_LENGTH],
            best_input=(LOGPROB_LABEL, d.refs[LOGPROB_LABEL]),
            current=bar_j,
            system_gap=gap,
            scrambles=share,
            floor=floor,
            degenerate=checks or None,
            said_again=again or None,
        )
        ci = interval(d.preds, shown, by_genre, n_samples=view.n_samples, seed=seed)
        system = view.figures(d.preds).as_dict() if view else {}
        out.append(
            {
                "size": _label(fit.size),
                "outputs": sum(fit.fitted.values()),
                "chosen": list(d.chosen),
                "rho": round(j.rho, 4),
                "tau": round(j.tau, 4),
                "criterion": round(j.criterion, 4),
                "rho_95": [round(x, 4) for x in ci["rho"]],
                "tau_95": [round(x, 4) for x in ci["tau"]],
                "systems": system.get("accuracy"),
                "systems_95": system.get("accuracy_95"),
                "against_current": None if gap is None else [round(x, 4) for x in gap],
                "ships": ruling.ok,
                "failed": list(ruling.failed),
                "why": ruling.why,
            }
        )
    return out


def _bar(unit: str, fits: Sequence[Fit], heads) -> tuple[dict, str]:
    """The unit's current head's held-out scores as it was fitted, and where they come from."""
    head = heads.get(unit) or heads["general"]
    if head.states is not None:
        want = {k: int(v) for k, v in (head.about.get("files") or {}).items()}
        for fit in fits:  # the files both name (`--files` may name a few) as the card counts
            common = set(fit.fitted) & set(want)
            if common and all(fit.fitted[k] == want[k] for k in common):
                return fit.found.current, f"its card's cut, {_label(fit.size)}"
        raise RuntimeError(
            f"{unit}: no cut of --sizes gives the outputs its card says it was fitted on ({want})"
        )
    return fits[0].found.current, "refitted held out"


def _table(rows: Sequence[dict]) -> list[str]:
    lines = [
        "| size | outputs | rho [95%] | tau [95%] | system pairs [95%] | vs current | ships |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        sys_ = "" if r["systems"] is None else f"{r['systems']:.3f}"
        if r["systems_95"]:
            sys_ += f" [{r['systems_95'][0]:.3f}, {r['systems_95'][1]:.3f}]"
        gap = r["against_current"]
        vs = "" if gap is None else f"[{gap[0]:+.3f}, {gap[1]:+.3f}]"
        lines.append(
            f"| {r['size']} | {r['outputs']:,} | {r['rho']:.3f} [{r['rho_95'][0]:.3f}, "
            f"{r['rho_95'][1]:.3f}] | {r['tau']:.3f} [{r['tau_95'][0]:.3f}, {r['tau_95'][1]:.3f}]"
            f" | {sys_} | {vs} | {'yes' if r['ships'] else 'no: ' + ', '.join(r['failed'])} |"
        )
    return lines


def plot(report: dict, path: Path) -> None:
    """Held-out mean rho + tau per text and system pair accuracy against the outputs fitted,
    one line a unit (dotted: its current head), with the 95% interval of the general head's
    system figure."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (text, system) = plt.subplots(1, 2, figsize=(10, 4))
    for unit, found in report["units"].items():
        rows = found["rows"]
        x = [r["outputs"] for r in rows]
        (line,) = text.plot(x, [r["criterion"] for r in rows], marker="o", label=unit)
        text.axhline(found["current"], color=line.get_color(), linestyle=":", linewidth=1)
        ys = [r["systems"] for r in rows]
        if unit == "general" and all(y is not None for y in ys):
            system.plot(x, ys, marker="o", label=unit)
            if all(r["systems_95"] for r in rows):
                low = [r["systems_95"][0] for r in rows]
                high = [r["systems_95"][1] for r in rows]
                system.fill_between(x, low, high, alpha=0.2)
    text.set(xscale="log", xlabel="rated outputs fitted on", ylabel="held out: mean rho + tau")
    system.set(xscale="log", xlabel="rated outputs fitted on", ylabel="system pairs ordered")
    text.set_title("per text")
    system.set_title("per system (general head, one genre out)")
    text.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _write_phase(winners, fits, heads, learned_at, judged, args, same) -> tuple[dict, dict]:
    """The heads to write: each unit's at the size the rule prefers, decided again against its
    bar; a genre's head then faces the general head on the genre's files (the new general head
    where it is written, else the current one held out), as `python -m training.heads` has it
    (`training.heads.tier.against_general`), and is written only where it is above it."""
    from training.heads.selection.choose import choose
    from training.heads.tier import against_general

    chosen = {unit: size for size, units in winners.items() for unit in units}
    general = _bar("general", fits["general"], heads)[0] if "general" in fits else None
    sections, entries = {}, {}
    for unit in sorted(chosen, key=lambda u: u != "general"):
        learned = learned_at[chosen[unit]]
        learned.bars = {unit: _bar(unit, fits[unit], heads)[0]}
        by_genre = unit == "general"
        shown = judged if by_genre else [f for f in judged if f.genre == unit]
        found = choose(shown, (), by_genre=by_genre, learned=learned, **same).learned
        if found is None or found.section is None:
            continue
        if by_genre:
            general = found.preds
        elif general is not None:
            ruling, figures = against_general(found.preds, general, shown, args.samples, args.seed)
            found.entry["against_general"] = figures
            if not ruling.ok:
                print(f"{unit}: not written, not above the general head on its files: {ruling.why}")
                continue
        sections[unit], entries[unit] = found.section, found.entry
    return sections, entries


def _options(argv: Sequence[str] | None) -> argparse.Namespace:
    from training.heads.data.files import add_rows_options
    from training.heads.learned.candidates import add_learned_options

    ap = argparse.ArgumentParser(prog="python -m training.heads.learned.sizes", description=__doc__)
    ap.add_argument("--model", default="neural", help="the tier's bundle")
    add_rows_options(ap)
    add_learned_options(ap)
    ap.set_defaults(max_outputs=300, max_words=8000, residual_outputs=0)
    ap.add_argument(
        "--sizes",
        nargs="+",
        type=parse_size,
        default=[(600, 16000), (1500, 40000), (3000, 80000), (-1, 0)],
        help="cuts a file to fit on: N:W (outputs and words), N, or all",
    )
    ap.add_argument("--samples", type=int, default=200, help="bootstrap samples")
    ap.add_argument(
        "--scrambles",
        default="../shared/corpora/reuters21578/test.txt",
        help="held-out real text whose shuffles a head must score lower ('' for none)",
    )
    ap.add_argument("--floor", type=float, default=0.95, help="share of checks scored lower")
    ap.add_argument("--json", help="write the report here")
    ap.add_argument("--plot", help="write the plot here (PNG)")
    ap.add_argument("--write", action="store_true", help="ship the size the rule prefers")
    return ap.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    from scorer.bundles import load_configured_all
    from scorer.config import from_env
    from scorer.heads import Head, card_heads
    from training.heads.data.files import read_scrambles
    from training.heads.learned.candidates import read_learned
    from training.heads.learned.report import write_heads
    from training.heads.metrics.systems import system_view
    from training.heads.selection.choose import choose

    args = _options(argv)
    (scorer,) = load_configured_all([args.model], from_env())
    heads = {g: Head.from_section(s) for g, s in card_heads(scorer.card).items()}
    command = "python -m training.heads.learned.sizes " + shlex.join(
        list(argv) if argv is not None else sys.argv[1:]
    )
    fits: dict[str, list[Fit]] = {}
    same = {"n_samples": args.samples, "seed": args.seed}
    check, judged, learned_at = None, None, {}
    for size in args.sizes:
        args.train_outputs, args.train_words = size
        learned, judged = read_learned(scorer, args, READING_MODES, command)
        check = check or read_scrambles(scorer, args, READING_MODES)
        learned.check = check
        learned_at[size] = learned
        genres = dict.fromkeys(f.genre for f in judged)
        units = ["general", *[g for g in genres if g in args.genres]]
        for unit in units:
            by_genre = unit == "general"
            shown = judged if by_genre else [f for f in judged if f.genre == unit]
            if len({f.genre if by_genre else f.name for f in shown}) < 2:
                continue
            found = choose(shown, (), by_genre=by_genre, learned=learned, **same).learned
            names = {f.name for f in shown}
            fitted = {f.name: len(f.human) for f in learned.files if f.name in names}
            fits.setdefault(unit, []).append(Fit(size, fitted, found))
            print(f"{unit} at {_label(size)}: {found.entry['decision']}", flush=True)
    report = {"command": command, "units": {}}
    winners: dict[tuple, list[str]] = {}
    for unit, mine in fits.items():
        by_genre = unit == "general"
        shown = judged if by_genre else [f for f in judged if f.genre == unit]
        bar, where = _bar(unit, mine, heads)
        view = system_view(shown, by_genre, n_samples=args.samples, seed=args.seed)
        rows = rule(mine, shown, by_genre, bar, args.floor, view, args.seed)
        passing = [k for k, r in enumerate(rows) if r["ships"]]
        best = max(passing, key=lambda k: rows[k]["criterion"]) if passing else None
        report["units"][unit] = {
            "bar": where,
            "current": judge(bar, shown, by_genre).criterion,
            "rows": rows,
            "prefers": None if best is None else rows[best]["size"],
        }
        if best is not None:
            winners.setdefault(mine[best].size, []).append(unit)
        print(f"\n## {unit} (bar: the current head, {where})")
        print("\n".join(_table(rows)))
        print(f"the rule prefers: {report['units'][unit]['prefers'] or 'the current head'}")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(report, indent=1))
    if args.plot:
        plot(report, Path(args.plot))
    if args.write and winners:
        sections, entries = _write_phase(winners, fits, heads, learned_at, judged, args, same)
        if "general" in sections:  # a genre the general head serves is served by the new one
            for genre, entry in scorer.heads_report().items():
                served = str(entry.get("decision", "")).startswith("shipped the general head")
                if served and genre not in sections:
                    sections[genre] = Head.from_section(sections["general"]).to_section(genre)
                    entries[genre] = entry
        if sections:
            write_heads(scorer, sections, entries)
            print(f"written: {', '.join(sections)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
