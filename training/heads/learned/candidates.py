"""The learned heads as candidates of the one chooser (`training.heads.selection.choose.choose`, its
`learned`): for one unit (the general head, one genre out; a genre's head, one dataset of the genre
out) the ridges on SmolLM2's states and the current head plus a ridge on what it leaves are held out
side by side, one chosen among them (`training.heads.learned.choice.evaluate`), and it faces the one
ship rule (`training.heads.selection.ship_rule.ships`) against the head it would replace: the head
the chooser decided on among the linear candidates where one ships, else the card's head for the
unit, on the chooser's evidence (`training.heads.selection.evidence.gather`), which keeps its record
(`training.heads.selection.ship_rule.Candidate`) beside the linear ones. `read_learned` reads what
they are fitted on, once for a run, with the options `add_learned_options` adds.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from scorer.errors import InputError
from scorer.heads import Head
from scorer.readings import SAID_AGAIN
from training.heads.data.checks import READ_WHOLE, ScrambleCheck
from training.heads.data.judged import HeadFile
from training.heads.learned.choice import CURRENT, below, current_setting, evaluate, head_scores
from training.heads.learned.report import section
from training.heads.learned.residual import RESIDUAL, current_from, fit_residual
from training.heads.learned.ridge import StateHead, fit
from training.heads.learned.rows import StateFile
from training.heads.selection.evidence import Evidence
from training.heads.selection.ship_rule import Candidate

__all__ = [
    "Decided",
    "LearnedCandidates",
    "add_learned_options",
    "read_learned",
    "residual_section",
]

GENRES = ("data-to-text", "mt", "summaries", "dialogue", "acceptability")
LEARNED = "learned head"  # its record's name in the chooser's evidence


def add_learned_options(ap: argparse.ArgumentParser) -> None:
    """What the learned candidates are fitted on (`--train-outputs`, `--residual-outputs` and
    their words), the genres they are tried for, how many sentences are run and looped, and how
    many paragraphs are said again (every head's check, learned or not)."""
    ap.add_argument(
        "--train-outputs",
        type=_outputs,
        default=0,
        help="outputs a file the ridges on the states alone are fitted on ('all': every rated "
        "output, whatever --train-words says), their states of every layer and pooling taken "
        "from build/states/store where it holds the file, else computed and kept under "
        "build/states (0: the residual variant's rows, the states extractor's layer and "
        "pooling alone)",
    )
    ap.add_argument("--train-words", type=int, default=80000, help="their words a file")
    ap.add_argument(
        "--residual-outputs",
        type=int,
        default=600,
        help="outputs a file the residual variant is fitted on (0: variant not tried)",
    )
    ap.add_argument("--residual-words", type=int, default=16000, help="their words a file")
    ap.add_argument(
        "--genres",
        nargs="*",
        default=list(GENRES),
        help="genre heads tried beside the general head (one dataset out)",
    )
    ap.add_argument(
        "--loops",
        type=int,
        default=50,
        help="of the scramble check's sentences, how many are also run and looped, up to the "
        "service's longest text (0: none)",
    )
    ap.add_argument(
        "--said-again",
        type=int,
        default=200,
        help="paragraphs of --scrambles whose said-again versions every head must score at or "
        "below them, and as many others its weight on what is said again is chosen on (0: none)",
    )


def _outputs(value: str) -> int:
    """`--train-outputs`: a count, or "all" (-1: every rated output of a file)."""
    if value == "all":
        return -1
    n = int(value)
    if n < 0:
        raise argparse.ArgumentTypeError("give a count of 0 or more, or 'all'")
    return n


@dataclass
class Decided:
    """What the learned candidates of one unit came to: the report's entry (its table headed
    by the head), whether the rule ships it, the card section to write (None: not shipped, or
    its states are not the states extractor's, which `problem` says), the chosen (layer,
    pooling, variant, alpha), how it was chosen, every setting's criterion, and the chosen
    head's held-out scores ({file: scores}, with its weight on what is said again as served),
    which a genre head faces the general head on (`training.heads.tier.against_general`), and
    its `record` as every candidate is kept (`training.heads.selection.ship_rule.Candidate`)."""

    entry: dict
    ok: bool
    section: dict | None
    chosen: tuple
    how: dict
    grid: dict
    problem: str = ""
    preds: dict | None = None
    current: dict | None = None  # the current head's held-out scores, {file: scores}
    refs: dict | None = None  # {label: Judgement} the head was judged against
    checks: dict | None = None  # its shares of shuffles, runs, loops and said again
    record: Candidate | None = None

    @property
    def ships(self) -> bool:
        return self.section is not None


@dataclass
class LearnedCandidates:
    """The learned heads of a run: `files` their states (one `StateFile` a judged file),
    `fit_files` the residual variant's rows (empty: not tried), the `layers` and `poolings` the
    states hold, the card's `heads`, the scramble `check` (None: none), the `genres` whose heads
    are tried beside the general head."""

    files: Sequence[StateFile]
    fit_files: Sequence[HeadFile]
    layers: Sequence[int]
    poolings: Sequence[str]
    heads: Mapping[str, Head]
    check: ScrambleCheck | None
    genres: Sequence[str]
    floor: float
    command: str
    # {unit: the current head's held-out scores as it was fitted}, where another cut fitted it
    bars: Mapping[str, dict] = field(default_factory=dict)

    def decide(self, evidence: Evidence, head: tuple[str, Sequence[str]] | None) -> Decided | None:
        """The learned head of the unit `evidence` holds (one genre out where it is held out by
        genre, else one dataset out), decided against `head` ((reading, inputs) of the head it
        would replace; None: the card's head for the unit), its record kept in `evidence`. None:
        the unit's genre is not tried, or its files have no states here (folds of one file)."""
        from features.neural_lm import STATE_LAYER, STATE_POOLING

        judged, by_genre = evidence.files, evidence.by_genre

        unit = "general" if by_genre else judged[0].genre
        if not by_genre and unit not in self.genres:
            return None
        names = {f.name for f in judged}
        mine = [f for f in self.files if f.name in names]
        if len(mine) < len(judged):  # folds of one file, or files read without their states
            return None
        current = self.heads.get(unit) or self.heads["general"]
        base = _residual_base(current) if self.fit_files else None
        fitted_on = [f for f in self.fit_files if f.name in names]
        at = (STATE_LAYER, STATE_POOLING)
        made: dict[tuple, StateHead | Head] = {}

        def make(key):
            if key not in made:
                layer, pooling, variant, alpha = key
                if variant == RESIDUAL:
                    made[key] = fit_residual(fitted_on, base, alpha)
                else:
                    where = (self.layers.index(layer), self.poolings.index(pooling))
                    made[key] = fit(mine, where, variant, alpha, self.layers, self.poolings)
            return made[key]

        def share(key):
            if (key[0], key[1]) != at:
                return None  # a head on other states cannot ship (one extractor a bundle)
            return below(make(key), self.check)

        result = evaluate(
            mine,
            judged,
            by_genre,
            (self.layers, self.poolings),
            current_setting(current) if head is None else (head[0], list(head[1])),
            evidence=evidence,
            # A genre head reads the states the general head chose (one extractor a bundle).
            at=None if by_genre else (self.layers.index(at[0]), self.poolings.index(at[1])),
            residual=None if base is None else (fitted_on, base, at),
            scrambles=share if self.check is not None else None,
            floor=self.floor,
            current_preds=self.bars.get(unit),
        )
        entry, chosen = result["entry"], result["chosen"]
        found = Decided(entry, result["ok"], None, chosen, result["how"], result["grid"])
        found.preds, found.current = result["preds"], result["current"]
        found.refs, found.checks = result["refs"], result["checks"]
        found.record = Candidate(
            entry["reading"],
            tuple(entry["inputs"]),
            result["judgement"],
            robust=found.checks.get("shuffles", 1.0) >= self.floor,
            system_gain=result["gap"],
            name=LEARNED,
        )
        evidence.add(found.record, found.preds)
        if not found.ok:
            return found
        if (chosen[0], chosen[1]) != at:
            found.problem = (
                f"{unit}: the chosen states (layer {chosen[0]}, {chosen[1]}) are not "
                f"neural_states.v1's (layer {at[0]}, {at[1]}): change features/neural_lm.py first"
            )
            return found
        decision = {**result["how"], "decision": entry["decision"]}
        learned = make(chosen)
        held = entry["held_out"]
        if isinstance(learned, Head):
            found.section = residual_section(
                learned, chosen, base, fitted_on, decision, self.command, unit, held
            )
        else:
            found.section = section(learned, mine, decision, self.command, genre=unit, held=held)
        weight = self.check.said_again_weight(head_scores(learned)) if self.check else 0.0
        if weight:  # as it was checked: with its weight on what is said again
            carried = Head.from_section(found.section).with_weight(SAID_AGAIN, -weight)
            found.section = carried.to_section()
            bare, found.preds = found.preds, with_said_again(found.preds, judged, -weight)
            entry["said_again"] = {
                "weight": round(weight, 6),
                "held_out": weight_cost(found.preds, bare, evidence),
            }
        return found


def with_said_again(preds: Mapping, judged: Sequence[HeadFile], weight: float) -> dict:
    """Held-out `preds` ({file: scores}) plus `weight` x each text's share said again: the
    head as served, its weight fixed on Reuters paragraphs, not fitted on the files."""
    return {f.name: preds[f.name] + weight * f.columns[READ_WHOLE][SAID_AGAIN] for f in judged}


def weight_cost(carried, bare, evidence: Evidence) -> dict:
    """What a learned head's weight on what is said again costs held out: its held-out
    figures (mean rho, mean per-input tau, system pair accuracy) with the weight and without."""
    from training.heads.selection.choose import figures

    files, by_genre, view = evidence.files, evidence.by_genre, evidence.view
    return {k: figures(p, files, by_genre, view) for k, p in (("with", carried), ("without", bare))}


def read_learned(
    scorer, args: argparse.Namespace, readings: Sequence[str], command: str
) -> tuple[LearnedCandidates, list[HeadFile]]:
    """The learned candidates of a run (their scramble `check` still to be set), and the judged
    files read under `readings` (with the columns only a learned head reads where the residual
    variant is tried): their states, those of the states extractor's layer and pooling from the
    residual variant's rows, or with `--train-outputs` every layer and pooling, SmolLM2 run
    again on the whole texts."""
    from features.neural_lm import POOLINGS, STATE_LAYER, STATE_POOLING, load_neural
    from features.rows import default_cache_dir
    from scorer.evidence.benchmark_run import judgement_files
    from scorer.evidence.genres import GENRES as GENRE_OF
    from scorer.evidence.genres import genres_of
    from scorer.heads import card_heads
    from training.heads.data.files import READING_MODES, read_head_files
    from training.heads.learned.rows import state_files, state_files_from_rows

    paths = judgement_files(args.dev, args.files)
    residual = args.residual_outputs > 0
    if not (residual or args.train_outputs):
        raise InputError("--train-outputs 0 fits on the residual variant's rows: give them")
    judged = read_head_files(scorer, args, readings, heads=residual)
    fit_files: list[HeadFile] = []
    if residual:
        cut = argparse.Namespace(
            **{**vars(args), "max_outputs": args.residual_outputs, "max_words": args.residual_words}
        )
        fit_files = read_head_files(scorer, cut, READING_MODES, heads=True)
    if args.train_outputs:
        layers, poolings = scorer.resources.get("neural", load_neural).layers, POOLINGS
        files = state_files(
            scorer,
            paths,
            genres_of([p.stem for p in paths], GENRE_OF),
            judged,
            train_outputs=args.train_outputs,
            train_words=args.train_words,
            max_outputs=args.max_outputs,
            max_words=args.max_words,
            seed=args.seed,
            jobs=args.jobs,
            cache_dir=Path(args.cache or default_cache_dir()).parent / "states",
        )
    else:
        layers, poolings = (STATE_LAYER,), (STATE_POOLING,)
        files = state_files_from_rows(
            fit_files,
            judged,
            paths,
            fit_cut=(args.residual_outputs, args.residual_words),
            judged_cut=(args.max_outputs, args.max_words),
            seed=args.seed,
        )
    learned = LearnedCandidates(
        files,
        fit_files,
        layers,
        poolings,
        {g: Head.from_section(s, label=f"head {g}") for g, s in card_heads(scorer.card).items()},
        None,
        args.genres,
        args.floor,
        command,
    )
    return learned, judged


def _residual_base(head: Head) -> Head | None:
    """The head the residual variant starts from: the current head where it is linear over the
    GLEU stage's columns, the head a residual head started from; None for a ridge on the states
    alone (a ridge on the states added to one is another alpha of the same ridge)."""
    if head.states is None:
        return replace(head, label=CURRENT)
    if head.states.get("variant") == RESIDUAL:
        return current_from(head)
    return None


def residual_section(head: Head, chosen, base: Head, files, decision, command, genre, held) -> dict:
    layer, pooling, variant, alpha = chosen
    return head.to_section(
        genre,
        target="the human score, z-normalised within each dataset",
        regressor=(
            f"the current head ({base.weights_text()}) plus a ridge (alpha {alpha:g} per 1,000 "
            f"weighted rows) on SmolLM2's standardised layer-{layer} states, {pooling}-pooled, "
            "fitted to what it leaves"
        ),
        states={
            "layer": layer,
            "pooling": pooling,
            "alpha": alpha,
            "variant": variant,
            "base": base.base_entry(),
        },
        held_out=held,
        selection=dict(decision),
        files={f.name: len(f.human) for f in files},
        command=command,
    )
