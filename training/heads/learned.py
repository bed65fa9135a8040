"""`python -m training.heads.learned`: the neural tier's learned heads chosen held out, judged and,
with `--write`, shipped (`training.heads.state_ridge` fits them).

For each unit (the general head, one genre out; each genre's head, one dataset of the genre
out) the variants are held out side by side: the ridge on the states alone, averaged in z with
the summed log-probability (`training.heads.state_ridge`), and the current head plus a ridge on
the states fitted to what it leaves (`training.heads.state_residual`). All are fitted on the
files read with the columns only a learned head reads (`--residual-outputs`/`--residual-words` a
file, the rows `python -m training.calibration.learning_curve` reads on the neural tier), at the
states extractor's layer and pooling; `--train-outputs N` fits the ridges on the states alone
on N outputs a file instead, every layer and pooling the graph returns computed and kept under
`build/states` (a SmolLM2 pass over each whole text: about 7 ms a word on two cores).

The best held-out criterion picks the variant (and layer and pooling), the strongest alpha
within one standard error of the best its alpha (`training.heads.state_ridge.choose`). The head
then faces the one ship rule every chooser applies (`training.heads.ship_rule.ships`): above the
current head's criterion, above minus the length and its best single input (the summed
log-probability or the GLEU score, whole) on both means, per system not worse than the current
head (the general head), and real sentences above their shuffles and above their runs and loops
(`--loops` of them, each run or looped to three times its length and to the service's longest
text). Per-file wins against each of
them are written beside the means, as evidence.

    python -m training.heads.learned --model neural --jobs 2 --write
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from scorer.calibration import card_heads
from scorer.errors import InputError
from training.heads.figures import HeadFile
from training.heads.files import READINGS
from training.heads.linear import Linear
from training.heads.state_choice import CURRENT, below, current_setting, evaluate
from training.heads.state_report import per_file_lines, section, table_lines, write_heads
from training.heads.state_residual import (
    RESIDUAL,
    base_section,
    current_from,
    fit_residual,
)
from training.heads.state_ridge import StateHead, fit
from training.heads.state_rows import state_files, state_files_from_rows

__all__ = ["main"]


def _options(argv: Sequence[str] | None) -> argparse.Namespace:
    from training.heads.files import add_rows_options

    ap = argparse.ArgumentParser(prog="python -m training.heads.learned", description=__doc__)
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
    ap.add_argument(
        "--floor", type=float, default=0.95, help="share of shuffles, runs and loops scored lower"
    )
    ap.add_argument(
        "--loops",
        type=int,
        default=50,
        help="of the scramble check's sentences, how many are also run and looped, up to the "
        "service's longest text (0: none)",
    )
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
    from training.heads.files import read_head_files, read_scrambles

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
    command = "python -m training.heads.learned " + shlex.join(
        list(argv) if argv is not None else sys.argv[1:]
    )
    sections, entries, grids, judged_units = {}, {}, {}, {}
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
            return below(make(key), check)

        result = evaluate(
            mine,
            shown,
            by_genre,
            (layers, poolings),
            current_setting(current_section),
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
        judged_units[unit] = entry
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
        Path(args.json).write_text(
            json.dumps({"shipped": entries, "judged": judged_units, "grid": grids}, indent=1)
        )
    if args.write and sections:
        write_heads(scorer, sections, entries)
    return 0


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


if __name__ == "__main__":
    raise SystemExit(main())
