"""`python -m training.heads.learned`: the neural tier's learned heads chosen held out, judged and,
with `--write`, shipped (`training.heads.learned.ridge` fits them).

For each unit (the general head, one genre out; each genre's head, one dataset of the genre
out) the variants are held out side by side: the ridge on the states alone, averaged in z with
the summed log-probability (`training.heads.learned.ridge`), and the current head plus a ridge on
the states fitted to what it leaves (`training.heads.learned.residual`). All are fitted on the
files read with the columns only a learned head reads (`--residual-outputs`/`--residual-words` a
file, the rows `python -m training.calibration.learning_curve` reads on the neural tier), at the
states extractor's layer and pooling; `--train-outputs N` fits the ridges on the states alone
on N outputs a file instead, every layer and pooling the graph returns computed and kept under
`build/states` (a SmolLM2 pass over each whole text: about 7 ms a word on two cores).

The best held-out criterion picks the variant (and layer and pooling), the strongest alpha within
one standard error of the best its alpha (`training.heads.learned.ridge.choose`). These are the
learned candidates of the one chooser (`training.heads.selection.choose.choose`, its `learned`:
`training.heads.learned.candidates`), here without the linear ones; `python -m training.heads
--learned` runs both in one run. The head then faces the one ship rule every chooser applies
(`training.heads.selection.ship_rule.ships`): above the current head's criterion, above minus the
length and its best single input (the summed log-probability or the GLEU score, whole) on both
means, per system not worse than the current head (the general head), and real sentences above their
shuffles and above their runs and loops (`--loops` of them, each run or looped to three times its
length and to the service's longest text). Per-file wins against each of them are written beside the
means, as evidence.

    python -m training.heads.learned --model neural --jobs 2 --write
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from training.heads.data.files import READING_MODES
from training.heads.learned.candidates import add_learned_options, read_learned
from training.heads.learned.report import write_heads
from training.heads.report.tables import per_file_markdown, table_markdown
from training.heads.selection.choose import choose

__all__ = ["main"]


def _options(argv: Sequence[str] | None) -> argparse.Namespace:
    from training.heads.data.files import add_rows_options

    ap = argparse.ArgumentParser(prog="python -m training.heads.learned", description=__doc__)
    ap.add_argument("--model", default="neural", help="the tier's bundle")
    add_rows_options(ap)  # --dev, --files, --max-outputs, --max-words, --seed, --jobs, --cache
    # Judged on the cut the neural tier's other heads were judged on; fitted on more of each file.
    ap.set_defaults(max_outputs=300, max_words=8000)
    add_learned_options(ap)  # --train-outputs, --residual-outputs, --genres, --loops, ...
    ap.add_argument("--samples", type=int, default=200, help="bootstrap samples")
    ap.add_argument(
        "--scrambles",
        default="../shared/corpora/reuters21578/test.txt",
        help="held-out real text whose shuffles a head must score lower ('' for none)",
    )
    ap.add_argument(
        "--floor", type=float, default=0.95, help="share of shuffles, runs and loops scored lower"
    )
    ap.add_argument("--states-only", action="store_true", help="compute the states, then stop")
    ap.add_argument("--json", help="write the report here")
    ap.add_argument("--write", action="store_true", help="ship the head when it passes")
    return ap.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    from scorer.bundles import load_configured_all
    from scorer.config import from_env
    from scorer.evidence.benchmark_run import judgement_files
    from scorer.evidence.genres import GENRES, genres_of
    from training.heads.data.files import read_scrambles

    args = _options(argv)
    (scorer,) = load_configured_all([args.model], from_env())
    paths = judgement_files(args.dev, args.files)
    genres = genres_of([p.stem for p in paths], GENRES)
    command = "python -m training.heads.learned " + shlex.join(
        list(argv) if argv is not None else sys.argv[1:]
    )
    learned, judged = read_learned(scorer, args, READING_MODES, command)
    if args.states_only:
        return 0
    learned.check = read_scrambles(scorer, args, READING_MODES)
    units = ["general", *[g for g in dict.fromkeys(genres.values()) if g in args.genres]]
    sections, entries, grids, judged_units = {}, {}, {}, {}
    for unit in units:
        by_genre = unit == "general"
        mine = learned.files if by_genre else [f for f in learned.files if f.genre == unit]
        shown = judged if by_genre else [f for f in judged if f.genre == unit]
        if len({f.genre if by_genre else f.name for f in mine}) < 2:
            print(f"\n## {unit}: one {'genre' if by_genre else 'dataset'}, nothing to hold out")
            continue
        found = choose(
            shown, (), by_genre=by_genre, n_samples=args.samples, seed=args.seed, learned=learned
        ).learned
        entry = found.entry
        grids[unit] = found.grid
        judged_units[unit] = entry
        print(f"\n## {unit}: {entry['decision']}")
        print("\n".join(table_markdown(entry["table"], rows=len(entry["table"]))))
        print()
        print("\n".join(per_file_markdown(entry["table"])))
        print(f"chosen {found.chosen}: {json.dumps(found.how)}")
        if found.problem:
            print(found.problem, file=sys.stderr)
        if found.section is None:
            continue
        sections[unit] = found.section
        entries[unit] = entry
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(
            json.dumps({"shipped": entries, "judged": judged_units, "grid": grids}, indent=1)
        )
    if args.write and sections:
        write_heads(scorer, sections, entries)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
