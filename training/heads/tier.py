"""`python -m training.heads`: a tier's second-stage heads, a general one and one per genre, each
chosen on held-out datasets, and written into the tier's card.

- A genre head is judged by leaving one dataset of its genre out (each in turn, datasets
  weighing the same); a genre of one dataset cannot be judged so and gets no head.
- The general head is judged by leaving one whole genre out, over every genre, datasets
  weighing the same within a genre and genres the same in the means.
- Candidates (`training.heads.estimators.select`): every reading of a text of several
  sentences asked for (`whole`, `weighted`, `sum`) and, under each, the GLEU score, every
  feature column and the n-gram LM's summed log-probability; a head starts from its best
  single input and adds one only where the held-out mean rises with an interval above zero;
  weights keep each input's own sign.
- Every head scores real sentences above their shuffles (`--scrambles`: held-out Reuters
  sentences, `--floor` of the pairs): what people rate is system output, rarely word salad, and
  an input such as the share of repeated bigrams agrees with them and reads salad as fluent.
- No head ships below its inputs: the chosen head's held-out means are printed beside every
  single input's and beside minus the length. A single input that beats the head on both
  means becomes the head; a genre head that does not beat minus the length and the best single
  input on both means (or is not that input) is not shipped, and the card says why.

`selection.choose.choose` holds the files out and decides (`selection.evidence`, then
`selection.ship_rule`, then `report.tables`); `report.cards` writes cards, `data.files` reads
(and cuts) judged files.

With `--learned` (the neural tier), the learned heads on SmolLM2's states are decided beside the
linear candidates of each head (`training.heads.learned.candidates`, with the options `python -m
training.heads.learned` takes): chosen among themselves held out, then against the head the
linear candidates give, through the same rule; one decision a head, the other kind's kept beside
it in the report (`also_tried`), judged as the learned command judges (the second line). With
`--taught` (the default tier), the heads taught by the neural tier's learned head are decided so
beside its linear candidates (`training.heads.taught`).

    python -m training.heads --model default --dev ../shared/dev --jobs 2 --write
    python -m training.heads --model neural --learned --max-outputs 300 --max-words 8000
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shlex
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from tqdm import tqdm

from scorer.heads import GLEU_INPUT, Head, card_heads
from scorer.readings import SAID_AGAIN
from training.heads.data.checks import ScrambleCheck
from training.heads.data.files import (
    READING_MODES,
    add_rows_options,
    read_head_files,
    read_scrambles,
)
from training.heads.data.judged import HeadFile
from training.heads.estimators.select import Fitted
from training.heads.learned.candidates import add_learned_options, read_learned
from training.heads.learned.report import add_states_family
from training.heads.metrics.figures import alone_rho, has_held_out_row
from training.heads.report.cards import (
    tier_table,
    write_card,
)
from training.heads.report.tables import print_report, rounded
from training.heads.selection.choose import choose
from training.heads.taught.candidates import read_taught
from training.heads.taught.prepare import add_prepare_options

__all__ = ["choose_genre_heads", "main", "section"]


def section(
    fitted: Fitted,
    files: Sequence[HeadFile],
    decision: Mapping,
    *,
    genre: str,
    held: str,
    command: str,
) -> dict:
    """A card section for one head (`Fitted.head`, as `scorer.heads.Head.to_section` writes it),
    with what it was fitted on and how it was chosen."""
    return fitted.head(files).to_section(
        genre,
        target="the human score, z-normalised within each dataset",
        regressor="non-negative ridge on standardised inputs turned by their own signs",
        alone={c: rounded(alone_rho(files, fitted.reading, c)) for c in fitted.inputs},
        held_out=held,
        selection=dict(decision),
        files={f.name: len(f.human) for f in files},
        command=command,
    )


def choose_genre_heads(
    files: Sequence[HeadFile],
    readings: Sequence[str],
    *,
    max_inputs: int = 4,
    n_samples: int = 200,
    seed: int = 12345,
    command: str = "",
    check: ScrambleCheck | None = None,
    learned=None,
    only: Sequence[str] = (),
    general_reported: Mapping | None = None,
    general_section: Mapping | None = None,
) -> tuple[dict, dict]:
    """({head name: card section} of the heads that ship, {head name: decision} of every head
    tried): "general" (whole genres held out), then each genre of two or more datasets; the
    `learned` heads (`training.heads.learned.candidates.LearnedCandidates`) decided beside the
    linear candidates of each. A genre's own head then faces the general head on the genre's
    files (`against_general`): where it is not above it, the linear head it displaced (where it
    would have shipped) faces the general head in turn, and where neither is above it, the
    general head is the genre's head. `only`: these heads alone; where the
    general head is not among them, `general_reported` (the bundle's heads report's entry for
    its general head) gives its held-out figures on each file, one genre out as when it was
    chosen: its scores as served saw the files, so they would overstate it; and
    `general_section` (its card section) serves a genre whose own head is not above it."""
    by_genre: dict[str, list[HeadFile]] = {}
    for f in files:
        by_genre.setdefault(f.genre, []).append(f)
    plans = [("general", list(files), True)]
    plans += [(g, fs, False) for g, fs in by_genre.items()]
    sections, report = {}, {}
    # The general head's held-out scores of every file: each genre head faces it on its files.
    general: Mapping | None = general_reported if only and "general" not in only else None
    options = {"check": check, "max_inputs": max_inputs, "n_samples": n_samples, "seed": seed}
    for name, fs, across in plans:
        if only and name not in only:
            continue
        if not across and len(fs) < 2:
            report[name] = {
                "ship": False,
                "decision": f"not shipped: one dataset ({fs[0].name}), nothing to hold out",
            }
            continue
        if across and len(by_genre) < 2:
            report[name] = {"ship": False, "decision": "not shipped: one genre, none to hold out"}
            continue
        held = "one genre out, over every genre" if across else f"one dataset of {name} out"
        total = sum(len(fs[0].columns[r]) for r in readings)
        with tqdm(total=total, desc=f"head {name}: single inputs", unit=" input") as bar:
            choice = choose(
                fs, readings, by_genre=across, held=held, progress=bar, learned=learned, **options
            )
        report[name] = choice.decision
        if choice.won is not None:
            sections[name] = choice.won.section
        elif choice.ships:
            sections[name] = section(
                choice.fitted, fs, choice.decision, genre=name, held=held, command=command
            )
        if across and name not in sections and check is not None:
            served = gleu_alone(fs, check, choice.decision, held=held, command=command)
            if served is not None:
                sections[name] = served
                report[name] = Head.from_section(served).about["selection"]
        if across:
            general = choice.preds or _served_preds(sections.get(name), fs)
        elif name in sections and general and choice.preds:
            ruling, figures = against_general(choice.preds, general, fs, n_samples, seed)
            report[name] = {**report[name], "against_general": figures}
            if not ruling.ok and choice.linear is not None:  # the linear head it displaced
                decision, preds = choice.linear
                ruling, figures = against_general(preds, general, fs, n_samples, seed)
                tried = {k: v for k, v in report[name].items() if k != "also_tried"}
                report[name] = {**decision, "against_general": figures, "also_tried": [tried]}
                sections[name] = section(
                    choice.fitted, fs, decision, genre=name, held=held, command=command
                )
            served = sections.get("general") or general_section
            if not ruling.ok and served:  # the general head serves it better
                report[name] |= {
                    "decision": f"shipped the general head: "
                    f"its own head is not above it on its files; {ruling.why}",
                }
                sections[name] = Head.from_section(served).to_section(name)
            elif not ruling.ok:
                report[name] |= {
                    "ship": False,
                    "decision": f"not shipped: not above the general head on its files; "
                    f"{ruling.why}",
                }
                del sections[name]
    return sections, report


def gleu_alone(
    files: Sequence[HeadFile],
    check: ScrambleCheck,
    decision: Mapping,
    *,
    held: str,
    command: str,
) -> dict | None:
    """Where no general head ships, the GLEU stage serves: the GLEU score alone, read as a text
    of several sentences is read by default. A mean over sentences rises when its better one is
    said again, so it too carries the weight on what a text says again its said-again check
    needs: the card section of that head, or None where it needs none."""
    from features.segment import DEFAULT_AGGREGATE

    bare = Fitted(DEFAULT_AGGREGATE, (GLEU_INPUT,), np.array([1.0]), 0.0, (1.0,))
    head = check.settle(bare)
    if not head.penalty:
        return None
    from training.heads.selection.choose import said_again_entry

    why = (
        f"{decision['decision']}; served: the GLEU score alone ({head.reading}), "
        f"with weight {head.penalty:.3f} on what the text says again"
    )
    entry = said_again_entry(check, head) | {"held_out": _weight_cost(files, head)}
    served = {**decision, "ship": True, "decision": why, "said_again": entry}
    served["served"] = {"reading": head.reading, "inputs": [GLEU_INPUT]}
    return section(head, files, served, genre="general", held=held, command=command)


def _weight_cost(files: Sequence[HeadFile], head: Fitted) -> dict:
    """`head`'s held-out figures over every genre (mean rho, mean per-input tau, system pair
    accuracy) with its weight on what is said again and without: nothing is fitted, so
    nothing is held out but the weight, chosen on Reuters paragraphs."""
    from training.heads.metrics.systems import system_view
    from training.heads.selection.choose import figures

    view = system_view(files, True, n_samples=200, seed=12345)
    bare = dataclasses.replace(head, penalty=0.0)
    return {
        name: figures({f.name: h.predict(f) for f in files}, files, True, view)
        for name, h in (("with", head), ("without", bare))
    }


def against_general(
    preds: Mapping[str, np.ndarray],
    general: Mapping,
    files: Sequence[HeadFile],
    n_samples: int,
    seed: int,
):
    """The one ship rule (`selection.ship_rule.ships`) on a genre's files for its own head
    (`preds`, one dataset out) against the general head (one genre out) as the head it would
    replace. `general`: its held-out scores ({file: scores}), or its heads report entry (no
    draws kept: per system, the head's 95% interval against its point). Ruling and figures."""
    from training.heads.data.files import MINUS_LENGTH
    from training.heads.metrics.figures import judge, reported_figures
    from training.heads.metrics.systems import system_view
    from training.heads.selection.choose import figures
    from training.heads.selection.ship_rule import ships

    mine = judge({f.name: preds[f.name] for f in files}, files, False)
    minus = judge({f.name: f.baselines[MINUS_LENGTH] for f in files}, files, False)
    view = system_view(files, False, n_samples=n_samples, seed=seed)
    found: dict = {"head": figures({f.name: preds[f.name] for f in files}, files, False, view)}
    if "table" in general:
        theirs, systems = reported_figures(general, [f.name for f in files], list(view.draws))
        gap = None
        if systems is not None and view.draws:  # its interval against their point
            gap = tuple(a - systems for a in view.figures(preds).accuracy_95)
        found["general"] = {
            "rho": rounded(theirs.rho),
            "tau": rounded(theirs.tau),
            "systems": systems,
            "from": "the heads report: held out one genre out",
        }
    else:
        theirs = judge({f.name: general[f.name] for f in files}, files, False)
        gap = view.gain(preds, general) if view.draws else None
        found["general"] = figures({f.name: general[f.name] for f in files}, files, False, view)
    ruling = ships(mine, minus=minus, current=theirs, system_gap=gap)
    return ruling, {"ok": ruling.ok, "why": ruling.why, **found}


def _served_preds(section: Mapping | None, files: Sequence[HeadFile]) -> dict | None:
    """{file: scores} of a card section that needs no fit (the GLEU stage `gleu_alone` gives)
    from the files' columns; None for none."""
    head = Head.from_section(section) if section else None
    if head is None or set(head.inputs) - {GLEU_INPUT, SAID_AGAIN}:
        return None
    coef = dict(zip(head.inputs, head.coef.tolist(), strict=True))
    cols = {f.name: f.columns[head.reading] for f in files}
    return {
        f.name: sum(w * cols[f.name][c] for c, w in coef.items()) + head.intercept for f in files
    }


def kept_heads(scorer, decided: Sequence[str], sections: Mapping, report: Mapping):
    """(sections, report) of every head: those `decided` again as given, the bundle's others as
    its card and its heads' report hold them."""
    old_report = scorer.heads_report()
    kept = {k: v for k, v in card_heads(scorer.card).items() if k not in decided}
    out_sections = {**kept, **{k: v for k, v in sections.items() if k in decided}}
    out_report = {k: v for k, v in old_report.items() if k not in decided}
    out_report.update((k, v) for k, v in report.items() if k in decided)
    return out_sections, out_report


def main(argv: Sequence[str] | None = None) -> int:
    from scorer.bundles import load_configured_all
    from scorer.config import from_env

    ap = argparse.ArgumentParser(prog="python -m training.heads", description=__doc__)
    ap.add_argument("--model", default="default", help="the tier's bundle (its GLEU stage)")
    add_rows_options(ap)
    ap.add_argument("--aggregate", action="append", choices=READING_MODES, help="readings tried")
    ap.add_argument("--max-inputs", type=int, default=4, help="inputs a head at most")
    ap.add_argument("--samples", type=int, default=200, help="bootstrap samples")
    ap.add_argument("--json", help="write every head's report here")
    ap.add_argument("--write", action="store_true", help="write the heads into the bundle's card")
    ap.add_argument("--rows-only", action="store_true", help="compute and cache rows, then stop")
    ap.add_argument(
        "--heads",
        nargs="*",
        default=(),
        metavar="HEAD",
        help="decide these heads only ('general' or a genre); with --write the card's others "
        "are kept as they are",
    )
    ap.add_argument(
        "--scrambles",
        default="../shared/corpora/reuters21578/test.txt",
        help="held-out real text whose shuffles every head must score lower ('' for none)",
    )
    ap.add_argument("--floor", type=float, default=0.95, help="share of shuffles scored lower")
    ap.add_argument(
        "--table", nargs="*", metavar="TIER", help="print the cards' genre x tier table"
    )
    ap.add_argument(
        "--learned",
        action="store_true",
        help="the learned heads on SmolLM2's states beside the linear candidates, one decision "
        "a head (the neural tier; the options below as python -m training.heads.learned takes "
        "them)",
    )
    add_learned_options(ap)
    add_prepare_options(ap)  # --taught
    args = ap.parse_args(argv)
    config = from_env()
    if args.table is not None:
        tiers = args.table or ["default", "fast", "full", "neural"]
        print("\n".join(tier_table(tiers, config["MODELS_DIR"])))
        return 0
    (scorer,) = load_configured_all([args.model], config)
    readings = args.aggregate or list(READING_MODES)
    command = "python -m training.heads " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:]))
    learned = None
    if args.learned:  # every reading read: a learned head and its residual's base read theirs
        learned, files = read_learned(scorer, args, READING_MODES, command)
    else:
        args.loops = args.loops if args.taught else 0  # checked on learned and taught heads
        files = read_head_files(scorer, args, readings)
    if args.taught and not args.rows_only:
        learned = read_taught(scorer, args, files, command)
    check = read_scrambles(scorer, args, READING_MODES if learned else readings)
    if args.rows_only:
        return 0
    if learned is not None:
        learned.check = check
    reported = scorer.heads_report().get("general") if args.heads else None
    if args.heads and not has_held_out_row(reported):
        print(
            "the bundle's heads report gives no held-out figures of its general head: the "
            "genre heads decided alone do not face it"
        )
        reported = None
    sections, report = choose_genre_heads(
        files,
        readings,
        max_inputs=args.max_inputs,
        n_samples=args.samples,
        seed=args.seed,
        command=command,
        check=check,
        learned=learned,
        only=args.heads,
        general_reported=reported,
        general_section=card_heads(scorer.card).get("general") if args.heads else None,
    )
    print_report(report)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
    if args.write:
        from scorer.bundle import bundle_folder

        folder = bundle_folder(args.model, config["MODELS_DIR"])
        if any("states" in s for s in sections.values()):
            add_states_family(folder)
        if args.heads:  # the heads not decided again stay as the card has them
            sections, report = kept_heads(scorer, args.heads, sections, report)
        write_card(folder, sections, report)
    return 0
