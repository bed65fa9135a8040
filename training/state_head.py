"""`python -m training.state_head`: the neural tier's learned heads chosen held out, judged and,
with `--write`, shipped (`training.state_fit` fits them).

For each unit (the general head, one genre out; each genre's head, one dataset of the genre
out) the variants are held out side by side: the ridge on the states alone, averaged in z with
the summed log-probability (`training.state_fit`), and the current head plus a ridge on the
states fitted to what it leaves (`training.state_residual`). All are fitted on the files read
with the columns only a learned head reads (`--residual-outputs`/`--residual-words` a file, the
rows `python -m training.learning_curve` reads on the neural tier), at the states extractor's
layer and pooling; `--train-outputs N` fits the ridges on the states alone on N outputs a file
instead, every layer and pooling the graph returns computed and kept under `build/states` (a
SmolLM2 pass over each whole text: about 7 ms a word on two cores).

The best held-out criterion picks the variant (and layer and pooling), the strongest alpha
within one standard error of the best its alpha (`training.state_fit.choose`). The head then
faces the one ship rule every chooser applies (`training.ship_rule.ships`): above the current
head's criterion, above minus the length and its best single input (the summed log-probability
or the GLEU score, whole) on both means, per system not worse than the current head (the
general head), and real sentences above their shuffles. Per-file wins against each of them are
written beside the means, as evidence.

    python -m training.state_head --model neural --jobs 2 --write
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np

from scorer.calibration import card_heads
from scorer.errors import InputError
from training.heads import MINUS_LENGTH, READINGS, baseline
from training.heads_select import HeadFile, held_out, judge
from training.linear_head import Linear
from training.ship_rule import ships, wins
from training.state_fit import VARIANTS, StateHead, choose, fit, held_out_predictions
from training.state_report import per_file_lines, row, section, table_lines, write_heads
from training.state_residual import (
    RESIDUAL,
    base_section,
    current_from,
    fit_residual,
    held_out_residual,
)
from training.state_rows import StateFile, state_files, state_files_from_rows

__all__ = ["evaluate", "main", "scrambles_below"]

LOGPROB = "neural.v2/logprob_sum"
LOGPROB_LABEL = "SmolLM2 logprob sum"
GLEU_WHOLE = "GLEU, whole"
CURRENT = "current head"
LABELS = {
    "states": "ridge on the states",
    "states + logprob": "ridge on the states + logprob sum, in z",
    RESIDUAL: "current head + a ridge on the states, fitted to what it leaves",
}


def _options(argv: Sequence[str] | None) -> argparse.Namespace:
    from training.head_files import add_rows_options

    ap = argparse.ArgumentParser(prog="python -m training.state_head", description=__doc__)
    ap.add_argument("--model", default="neural", help="the tier's bundle")
    add_rows_options(ap)  # --dev, --files, --max-outputs, --max-words, --seed, --jobs, --cache
    # Judged on the cut the neural tier's other heads were judged on; fitted on more of each file.
    ap.set_defaults(max_outputs=300, max_words=8000)
    ap.add_argument(
        "--train-outputs",
        type=int,
        default=0,
        help="outputs a file the ridges on the states alone are fitted on, their states of "
        "every layer and pooling computed and kept under build/states (0: the residual "
        "variant's rows, the states extractor's layer and pooling alone)",
    )
    ap.add_argument("--train-words", type=int, default=80000, help="their words a file")
    ap.add_argument(
        "--residual-outputs",
        type=int,
        default=600,
        help="outputs a file the residual variant is fitted on (0: variant not tried)",
    )
    ap.add_argument("--residual-words", type=int, default=16000, help="their words a file")
    ap.add_argument("--samples", type=int, default=200, help="bootstrap samples")
    ap.add_argument(
        "--genres",
        nargs="*",
        default=["data-to-text", "mt", "summaries", "dialogue", "acceptability"],
        help="genre heads tried beside the general head (one dataset out)",
    )
    ap.add_argument(
        "--scrambles",
        default="../shared/corpora/reuters21578/test.txt",
        help="held-out real text whose shuffles a head must score lower ('' for none)",
    )
    ap.add_argument("--floor", type=float, default=0.95, help="share of shuffles scored lower")
    ap.add_argument("--states-only", action="store_true", help="compute the states, then stop")
    ap.add_argument("--json", help="write the report here")
    ap.add_argument("--write", action="store_true", help="ship the head when it passes")
    return ap.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    from features.neural_lm import POOLINGS, STATE_LAYER, STATE_POOLING, load_neural
    from features.rows import default_cache_dir
    from scorer.bundles import load_configured_all
    from scorer.config import from_env
    from scorer.evidence.benchmark_run import judgement_files
    from scorer.evidence.genres import GENRES, genres_of
    from training.head_files import read_head_files, read_scrambles

    args = _options(argv)
    (scorer,) = load_configured_all([args.model], from_env())
    paths = judgement_files(args.dev, args.files)
    genres = genres_of([p.stem for p in paths], GENRES)
    residual = args.residual_outputs > 0
    if not (residual or args.train_outputs):
        raise InputError("--train-outputs 0 fits on the residual variant's rows: give them")
    # With the residual variant, the judged outputs carry the states under every reading too.
    judged = read_head_files(scorer, args, READINGS, heads=residual)
    fit_files: list[HeadFile] = []
    if residual:
        cut = argparse.Namespace(
            **{**vars(args), "max_outputs": args.residual_outputs, "max_words": args.residual_words}
        )
        fit_files = read_head_files(scorer, cut, READINGS, heads=True)
    if args.train_outputs:  # every layer and pooling, SmolLM2 run again on the whole texts
        layers, poolings = scorer.resources.get("neural", load_neural).layers, POOLINGS
        files = state_files(
            scorer,
            paths,
            genres,
            judged,
            train_outputs=args.train_outputs,
            train_words=args.train_words,
            max_outputs=args.max_outputs,
            max_words=args.max_words,
            seed=args.seed,
            jobs=args.jobs,
            cache_dir=Path(args.cache or default_cache_dir()).parent / "states",
        )
    else:  # the states extractor's, read from the residual variant's rows
        layers, poolings = (STATE_LAYER,), (STATE_POOLING,)
        files = state_files_from_rows(
            fit_files,
            judged,
            paths,
            fit_cut=(args.residual_outputs, args.residual_words),
            judged_cut=(args.max_outputs, args.max_words),
            seed=args.seed,
        )
    if args.states_only:
        return 0
    check = read_scrambles(scorer, args, READINGS) if args.scrambles else None
    states_at = (layers.index(STATE_LAYER), poolings.index(STATE_POOLING))
    heads = card_heads(scorer.card)
    units = ["general", *[g for g in dict.fromkeys(genres.values()) if g in args.genres]]
    command = "python -m training.state_head " + shlex.join(
        list(argv) if argv is not None else sys.argv[1:]
    )
    sections, entries, grids = {}, {}, {}
    for unit in units:
        by_genre = unit == "general"
        mine = files if by_genre else [f for f in files if f.genre == unit]
        shown = judged if by_genre else [f for f in judged if f.genre == unit]
        if len({f.genre if by_genre else f.name for f in mine}) < 2:
            print(f"\n## {unit}: one {'genre' if by_genre else 'dataset'}, nothing to hold out")
            continue
        current_section = heads.get(unit) or heads["general"]
        base = _residual_base(current_section) if residual else None
        fitted_on = [f for f in fit_files if f.name in {s.name for s in shown}]
        fitted: dict[tuple, StateHead | Linear] = {}

        def make(key, mine=mine, fitted_on=fitted_on, base=base, fitted=fitted):
            if key not in fitted:
                layer, pooling, variant, alpha = key
                if variant == RESIDUAL:
                    fitted[key] = fit_residual(fitted_on, base, alpha)
                else:
                    at = (layers.index(layer), poolings.index(pooling))
                    fitted[key] = fit(mine, at, variant, alpha, layers, poolings)
            return fitted[key]

        def share(key, make=make):
            if check is None or (key[0], key[1]) != (STATE_LAYER, STATE_POOLING):
                return None  # a head on other states cannot ship (one extractor a bundle)
            head = make(key)
            if isinstance(head, Linear):
                return _linear_share(head, check)
            return scrambles_below(head, check)

        result = evaluate(
            mine,
            shown,
            by_genre,
            (layers, poolings),
            _current(current_section),
            samples=args.samples,
            seed=args.seed,
            # A genre head reads the states the general head chose (one extractor a bundle).
            at=None if by_genre else states_at,
            residual=None if base is None else (fitted_on, base, (STATE_LAYER, STATE_POOLING)),
            scrambles=share if args.scrambles else None,
            floor=args.floor,
        )
        grids[unit] = result.pop("grid")
        entry, chosen = result["entry"], result["chosen"]
        print(f"\n## {unit}: {entry['decision']}")
        print("\n".join(table_lines(entry["table"], len(shown))))
        print()
        print("\n".join(per_file_lines(entry["table"])))
        print(f"chosen {chosen}: {json.dumps(result['how'])}")
        if not result["ok"]:
            continue
        if (chosen[0], chosen[1]) != (STATE_LAYER, STATE_POOLING):
            print(
                f"{unit}: the chosen states (layer {chosen[0]}, {chosen[1]}) are not "
                f"neural_states.v1's (layer {STATE_LAYER}, {STATE_POOLING}): change "
                "features/neural_lm.py first",
                file=sys.stderr,
            )
            continue
        decision = {**result["how"], "decision": entry["decision"]}
        head = make(chosen)
        if isinstance(head, Linear):
            sections[unit] = _residual_section(
                head, chosen, base, fitted_on, decision, command, unit, entry["held_out"]
            )
        else:
            sections[unit] = section(
                head, mine, decision, command, genre=unit, held=entry["held_out"]
            )
        entries[unit] = entry
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({"shipped": entries, "grid": grids}, indent=1))
    if args.write and sections:
        write_heads(scorer, sections, entries)
    return 0


def _linear_share(head: Linear, check) -> float:
    a, b = head.predict(check.real), head.predict(check.shuffled)
    return float(np.mean(a > b) + 0.5 * np.mean(a == b))


def _residual_base(section: Mapping) -> Linear | None:
    """The head the residual variant starts from: the current head where it is linear over the
    GLEU stage's columns, the head a residual head started from; None for a ridge on the states
    alone (a ridge on the states added to one is another alpha of the same ridge)."""
    states = section.get("states")
    if states is None:
        return Linear.from_section(CURRENT, section)
    if states.get("variant") == RESIDUAL:
        return current_from(section)
    return None


def _residual_section(
    head: Linear, chosen, base: Linear, files, decision, command, genre, held
) -> dict:
    layer, pooling, variant, alpha = chosen
    return head.section(
        genre,
        target="the human score, z-normalised within each dataset",
        regressor=(
            f"the current head ({base.weights()}) plus a ridge (alpha {alpha:g} per 1,000 "
            f"weighted rows) on SmolLM2's standardised layer-{layer} states, {pooling}-pooled, "
            "fitted to what it leaves"
        ),
        states={
            "layer": layer,
            "pooling": pooling,
            "alpha": alpha,
            "variant": variant,
            "base": base_section(base),
        },
        held_out=held,
        selection=dict(decision),
        files={f.name: len(f.human) for f in files},
        command=command,
    )


def scrambles_below(head: StateHead, check) -> float:
    """The share of real sentences the head (on the states extractor's layer and pooling)
    scores above their shuffles, a tie one half: `check` holds both as columns read whole
    (`training.head_files.scramble_check`, with the columns only a learned head reads)."""
    from features.neural_lm import STATE_NAMES

    def scores(cols):
        whole = cols["whole"]
        states = np.column_stack([whole[f"neural_states.v1/{n}"] for n in STATE_NAMES])
        return head.predict(states, whole[LOGPROB])

    real, shuffled = scores(check.real), scores(check.shuffled)
    return float(np.mean(real > shuffled) + 0.5 * np.mean(real == shuffled))


def _current(section: Mapping) -> tuple[str, list]:
    """(reading, inputs) of a card head, refitted held out to judge against; a learned head
    ("states", its layer, pooling, variant and alpha): its own held-out predictions."""
    if "states" in section:
        s = section["states"]
        return "states", [s["layer"], s["pooling"], s["variant"], float(s["alpha"])]
    return section["aggregate"], _inputs(section)


def _inputs(section: Mapping) -> list[str]:
    """A card head's inputs with a weight (the GLEU score is every head's first, often 0)."""
    return [c for c, w in zip(section["inputs"], section["linear"]["coef"], strict=True) if w]


def evaluate(
    files: Sequence[StateFile],
    judged: Sequence[HeadFile],
    by_genre: bool,
    grid_axes: tuple[Sequence[int], Sequence[str]],
    current: tuple[str, Sequence],
    *,
    samples: int,
    seed: int,
    at: tuple[int, int] | None = None,
    residual: tuple | None = None,
    scrambles: Callable[[tuple], float | None] | None = None,
    floor: float = 0.95,
) -> dict:
    """The learned head for `files` held out (one genre out with `by_genre`, else one dataset
    out; `grid_axes`: the layers and poolings the files' states hold), chosen
    (`training.state_fit.choose`), judged against minus the length, the summed
    log-probability, the GLEU score and the `current` head ((reading, inputs), refitted held out
    the same way), per text and per system, and the ship rule's decision
    (`training.ship_rule.ships`). `residual`: (fit files, the head it starts from, (layer,
    pooling)) for the residual variant (None: not tried); `scrambles(key)`: the share of real
    sentences the head of that setting scores above their shuffles. Returns {"chosen", "how",
    "ok", "entry" (the report's entry, its table headed by the head), "grid" (every setting's
    criterion)}."""
    from training.heads_systems import system_view

    layers, poolings = grid_axes
    grid = None if at is None else [at]
    preds = held_out_predictions(files, by_genre, layers, poolings, grid=grid)
    variants = list(VARIANTS)
    if residual is not None:
        fit_files, base, where = residual
        preds |= held_out_residual(fit_files, judged, by_genre, base, where)
        variants.append(RESIDUAL)
    scores = {k: judge(p, judged, by_genre) for k, p in preds.items()}
    chosen, how = choose(scores)
    view = system_view(judged, by_genre, n_samples=samples, seed=seed)
    reading, inputs = current  # reading "states": a learned head, inputs its settings
    comparisons = {
        MINUS_LENGTH: baseline(judged, MINUS_LENGTH),
        LOGPROB_LABEL: held_out(judged, "whole", [LOGPROB], by_genre),
        CURRENT: (
            preds[tuple(inputs)]
            if reading == "states"
            else held_out(judged, reading, list(inputs), by_genre)
        ),
        GLEU_WHOLE: held_out(judged, "whole", ["gleu"], by_genre),
    }
    refs = {k: judge(v, judged, by_genre) for k, v in comparisons.items()}
    best_input = max((LOGPROB_LABEL, GLEU_WHOLE), key=lambda k: refs[k].criterion)
    others = {
        MINUS_LENGTH: refs[MINUS_LENGTH],
        "logprob sum": refs[LOGPROB_LABEL],
        "current head": refs[CURRENT],
    }
    best_of = {}
    for variant in variants:  # each variant at its own best layer, pooling and alpha
        best_of[variant], _ = choose({k: v for k, v in scores.items() if k[2] == variant})
    gap = view.gain(preds[chosen], comparisons[CURRENT]) if (view and by_genre) else None
    share = scrambles(chosen) if scrambles is not None else None
    ruling = ships(
        scores[chosen],
        minus=refs[MINUS_LENGTH],
        best_input=(best_input, refs[best_input]),
        current=refs[CURRENT],
        system_gap=gap,
        scrambles=share,
        floor=floor,
        evidence={"minus the length" if k == MINUS_LENGTH else k: j for k, j in refs.items()},
    )
    rows = []
    for variant, key in [(chosen[2], chosen), *[(v, k) for v, k in best_of.items() if k != chosen]]:
        label = "head" if key == chosen else f"{LABELS[variant]} (layer {key[0]}, {key[1]})"
        mine, _ = row(label, preds[key], judged, by_genre, view, others, samples, seed)
        rows.append(mine)
        if key == chosen:  # what the README's table reads: the head against its inputs
            mine["wins"] |= {
                "best single input": wins(scores[chosen], refs[best_input]),
                "files": len(judged),
            }
            for label, p in comparisons.items():
                if label == CURRENT:
                    label = f"current head ({', '.join(map(str, inputs))}, {reading})"
                if label == best_input:
                    label = f"best single input: {label}"
                rows.append(row(label, p, judged, by_genre, view, others, samples, seed)[0])
    layer, pooling, variant, alpha = chosen
    held = "one genre out, over every genre" if by_genre else "one dataset of the genre out"
    entry = {
        "decision": (
            f"{'shipped' if ruling.ok else 'not shipped'}: {LABELS[variant]} (SmolLM2 layer "
            f"{layer} of 30, {pooling}-pooled, alpha {alpha:g} per 1,000 rows); {ruling.why}"
        ),
        "rule": "training.ship_rule.ships",
        "reading": "whole" if variant != RESIDUAL else residual[1].reading,
        "inputs": (list(residual[1].inputs) if variant == RESIDUAL else [])
        + [f"SmolLM2 states (layer {layer}, {pooling})"]
        + ([LOGPROB] if "+" in variant else []),
        "held_out": held,
        "table": rows,
        "system_level_skipped": dict(view.skipped) if view else {},
    }
    if share is not None:
        entry["scrambles"] = share
    grid_out = {f"{k[0]}/{k[1]}/{k[2]}/{k[3]:g}": round(j.criterion, 4) for k, j in scores.items()}
    return {"chosen": chosen, "how": how, "ok": ruling.ok, "entry": entry, "grid": grid_out}


if __name__ == "__main__":
    raise SystemExit(main())
