"""`python -m training.state_head`: the neural tier's learned head, a ridge on SmolLM2's states.

Every other head reads a few of the GLEU stage's columns; this one reads what the language
model knows of the text: the hidden state after one of SmolLM2-135M's layers, pooled over the
text's tokens (`features.neural_lm.pooled_states`, from the same passes as its
log-probabilities), 576 numbers a text, standardised, under a ridge fitted on people's ratings
of the development files (z-scored within each file; genres weighing the same, datasets the same
within a genre: `training.heads_select.unit_weights`). A variant averages the ridge's prediction,
in z, with SmolLM2's summed log-probability of the text.

Chosen held out as every head is (`training.heads`): the general head by leaving one whole
genre out in turn. The layer, the pooling and the variant are the best held-out criterion
(mean rho + mean per-input tau over genres); the ridge's alpha is then the strongest whose
criterion is within one standard error (over files, paired) of the best alpha's: the best
point over-fits the development files. It is fitted on far more outputs a file
(`--train-outputs`) than it is judged on, and judged on the same outputs as the shipped heads
(`--max-outputs`/`--max-words`, the same seed: the judged outputs are among the fitted ones
of their file, which is never in the fit that judges it).

Like every head it must score real sentences above their shuffles (`--scrambles`: 200
held-out Reuters sentences, at least `--floor` of the pairs). A head ships when, held out, it
beats minus the length and the summed log-probability on both means and beats the current
head on more than half of the files (`ships`; the general head also per system); its card
section is an ordinary linear head over the GLEU score (weight 0),
the 576 state columns (`neural_states.v1`) and the summed log-probability, read whole.

    python -m training.state_head --model neural --jobs 2 --write
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tqdm import tqdm

from scorer.calibration import card_heads
from training.heads import MINUS_LENGTH, READINGS, baseline
from training.heads_select import HeadFile, Judgement, held_out, judge, unit_weights
from training.state_report import (
    criteria,
    per_file_lines,
    row,
    section,
    table_lines,
    wins,
    write_heads,
)
from training.state_rows import StateFile, state_files, text_states

__all__ = ["StateHead", "choose", "evaluate", "fit", "fit_all", "main", "ships"]

LOGPROB = "neural.v2/logprob_sum"
LOGPROB_LABEL = "SmolLM2 logprob sum"
CURRENT = "current head (GLEU, weighted)"
STATES = "neural_states.v1"
# Ridge strengths tried, per 1,000 weighted rows (scaled with the rows of each fit).
ALPHAS = (10.0, 30.0, 100.0, 300.0, 1000.0, 3000.0, 10000.0, 30000.0)
VARIANTS = ("states", "states + logprob")


@dataclass(frozen=True)
class StateHead:
    """A fitted head: prediction = states @ coef + logprob * logprob_coef + intercept."""

    layer: int
    pooling: str
    variant: str
    alpha: float
    coef: np.ndarray  # 576, on the states in their own units
    logprob_coef: float
    intercept: float

    def predict(self, states: np.ndarray, logprob: np.ndarray) -> np.ndarray:
        return states.astype(np.float64) @ self.coef + logprob * self.logprob_coef + self.intercept


def fit(
    files: Sequence[StateFile],
    at: tuple[int, int],
    variant: str,
    alpha: float,
    layers: Sequence[int],
    poolings: Sequence[str],
) -> StateHead:
    """The head of one variant and alpha (`fit_all`)."""
    return fit_all(files, at, [alpha], layers, poolings, variants=(variant,))[variant, alpha]


def fit_all(
    files: Sequence[StateFile],
    at: tuple[int, int],
    alphas: Sequence[float],
    layers: Sequence[int],
    poolings: Sequence[str],
    variants: Sequence[str] = VARIANTS,
) -> dict[tuple[str, float], StateHead]:
    """{(variant, alpha): head} on the states at (layer index, pooling index) of `files`: a
    ridge on the standardised states, alpha per 1,000 weighted rows, one fit for every alpha
    (scikit-learn's `Ridge` with an alpha a target, the targets the same ratings: one Gram
    matrix for all); "states + logprob" averages its prediction in z with the summed
    log-probability's z (both z on the fit rows, weighted). Returned in the inputs' units."""
    from sklearn.linear_model import Ridge
    from sklearn.preprocessing import StandardScaler

    X = np.concatenate([f.states[:, at[0], at[1]] for f in files]).astype(np.float64)
    y = np.concatenate([f.target for f in files])
    lp = np.concatenate([f.logprob for f in files])
    w = _weights(files)
    scaler = StandardScaler().fit(X, sample_weight=w)
    scale = np.where(scaler.scale_ > 0, scaler.scale_, 1.0)
    strengths = np.asarray(alphas, dtype=float) * len(y) / 1000.0
    ridge = Ridge(alpha=strengths).fit(
        (X - scaler.mean_) / scale, np.tile(y[:, None], len(alphas)), sample_weight=w
    )
    lp_mean, lp_sd = _wstats(lp, w)
    coefs, intercepts = np.atleast_2d(ridge.coef_), np.atleast_1d(ridge.intercept_)  # 1 alpha: 1-d
    out = {}
    for k, alpha in enumerate(alphas):
        coef = coefs[k] / scale
        intercept = float(intercepts[k] - coef @ scaler.mean_)
        for variant in variants:
            c, b, lp_coef = coef, intercept, 0.0
            if variant == "states + logprob":
                r_mean, r_sd = _wstats(X @ coef + intercept, w)
                c, lp_coef = 0.5 * coef / r_sd, 0.5 / lp_sd
                b = 0.5 * (intercept - r_mean) / r_sd - 0.5 * lp_mean / lp_sd
            out[variant, float(alpha)] = StateHead(
                layers[at[0]], poolings[at[1]], variant, float(alpha), c, lp_coef, b
            )
    return out


def _wstats(x: np.ndarray, w: np.ndarray) -> tuple[float, float]:
    mean = float(np.average(x, weights=w))
    sd = math.sqrt(float(np.average((x - mean) ** 2, weights=w)))
    return mean, sd if sd > 0 else 1.0


def _weights(files: Sequence[StateFile]) -> np.ndarray:
    stand_ins = [HeadFile(f.name, f.genre, f.human, [], {}) for f in files]
    return unit_weights(stand_ins)


def _units(files: Sequence[StateFile], by_genre: bool) -> list[list[str]]:
    if not by_genre:
        return [[f.name] for f in files]
    genres = list(dict.fromkeys(f.genre for f in files))
    return [[f.name for f in files if f.genre == g] for g in genres]


def held_out_predictions(
    files: Sequence[StateFile],
    by_genre: bool,
    layers: Sequence[int],
    poolings: Sequence[str],
    alphas: Sequence[float] = ALPHAS,
    variants: Sequence[str] = VARIANTS,
    grid: Sequence[tuple[int, int]] | None = None,
) -> dict[tuple, dict[str, np.ndarray]]:
    """{(layer, pooling, variant, alpha): {file: predictions on its judged outputs by the head
    fitted without its unit (genre, or dataset)}}, over `grid` ((layer, pooling) positions;
    None: all)."""
    out: dict[tuple, dict[str, np.ndarray]] = {}
    if grid is None:
        grid = [(a, p) for a in range(len(layers)) for p in range(len(poolings))]
    units = _units(files, by_genre)
    with tqdm(total=len(grid) * len(units), desc="held-out fits", unit=" fold") as bar:
        for at in grid:
            for unit in units:
                train = [f for f in files if f.name not in unit]
                heads = fit_all(train, at, alphas, layers, poolings, variants)
                for (variant, alpha), head in heads.items():
                    key = (layers[at[0]], poolings[at[1]], variant, alpha)
                    for f in files:
                        if f.name in unit:
                            rows = f.judged
                            out.setdefault(key, {})[f.name] = head.predict(
                                f.states[rows, at[0], at[1]], f.logprob[rows]
                            )
                bar.update()
    return out


def choose(
    judged: Mapping[tuple, Judgement], alphas: Sequence[float] = ALPHAS
) -> tuple[tuple, dict]:
    """The chosen (layer, pooling, variant, alpha) and how: the best held-out criterion picks
    the layer, pooling and variant; among their alphas, the strongest whose per-file criteria
    are, paired with the best alpha's, at most one standard error below on average."""
    best = max(judged, key=lambda k: np.nan_to_num(judged[k].criterion, nan=-9))
    top = criteria(judged[best])
    within = []
    for alpha in alphas:
        key = (*best[:3], alpha)
        if key not in judged:
            continue
        mine = criteria(judged[key])
        diffs = np.array([mine[n] - top[n] for n in top])
        se = float(diffs.std(ddof=1) / math.sqrt(len(diffs))) if len(diffs) > 1 else 0.0
        if diffs.mean() + se >= 0:
            within.append(alpha)
    chosen = (*best[:3], max(within))
    how = {
        "best": {"key": list(best), "criterion": round(judged[best].criterion, 4)},
        "alphas_within_one_se": within,
        "chosen": list(chosen),
        "criterion": round(judged[chosen].criterion, 4),
    }
    return chosen, how


def _above(a: Judgement, b: Judgement) -> bool:
    """a's mean rho above b's, and its mean tau where both have one (files of single outputs
    have none)."""
    taus = not (math.isnan(a.tau) or math.isnan(b.tau))
    return a.rho > b.rho and (a.tau > b.tau if taus else True)


def ships(
    head: Judgement,
    minus: Judgement,
    logprob: Judgement,
    current: Judgement,
    *,
    system_gap: tuple[float, float] | None = None,
) -> tuple[bool, str]:
    """(ships, why): above minus the length and the summed log-probability on both means,
    above the current head on more than half of the files, and (the general head is what
    systems are compared with) not below it per system with a paired interval under zero
    (`system_gap`: the 95% interval of its pair accuracy minus the current head's)."""
    n = len(head.per_file)
    checks = [
        (_above(head, minus), "minus the length on both means"),
        (_above(head, logprob), "the summed log-probability on both means"),
        (2 * wins(head, current) > n, f"the current head on more than half of {n} files"),
    ]
    failed = [what for ok, what in checks if not ok]
    if failed:
        return False, "held out it does not beat " + "; ".join(failed)
    if system_gap is not None and system_gap[1] < 0:
        return False, (
            f"it orders systems worse than the current head, pair accuracy "
            f"[{system_gap[0]:+.3f}, {system_gap[1]:+.3f}] (95%)"
        )
    return True, (
        f"held out it beats minus the length and the summed log-probability on both means, "
        f"and the current head on {wins(head, current)} of {n} files"
        + (
            ""
            if system_gap is None
            else f"; pair accuracy against it [{system_gap[0]:+.3f}, {system_gap[1]:+.3f}]"
        )
    )


def main(argv: Sequence[str] | None = None) -> int:
    from features.neural_lm import POOLINGS, STATE_LAYER, STATE_POOLING, load_neural
    from features.placeholders import fill_placeholders
    from features.rows import default_cache_dir
    from scorer.bundles import load_configured_all
    from scorer.config import from_env
    from scorer.evidence.benchmark_run import judgement_files
    from scorer.evidence.genres import GENRES, genres_of
    from training.head_files import add_rows_options, read_head_files, scramble_pairs

    ap = argparse.ArgumentParser(prog="python -m training.state_head", description=__doc__)
    ap.add_argument("--model", default="neural", help="the tier's bundle")
    add_rows_options(ap)  # --dev, --files, --max-outputs, --max-words, --seed, --jobs, --cache
    # Judged on the cut the neural tier's other heads were judged on; fitted on more of each file.
    ap.set_defaults(max_outputs=300, max_words=8000)
    ap.add_argument("--train-outputs", type=int, default=3000, help="fitted outputs a file")
    ap.add_argument("--train-words", type=int, default=80000, help="fitted words a file")
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
    args = ap.parse_args(argv)
    config = from_env()
    (scorer,) = load_configured_all([args.model], config)
    paths = judgement_files(args.dev, args.files)
    genres = genres_of([p.stem for p in paths], GENRES)
    judged = read_head_files(scorer, args, READINGS)
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
    if args.states_only:
        return 0
    lm = scorer.resources.get("neural", load_neural)
    pairs = None
    if args.scrambles:  # real sentences and their shuffles: the states of both, once
        real, shuffled = scramble_pairs(args.scrambles, n=200, seed=args.seed)
        texts = fill_placeholders(real + shuffled, scorer.placeholders)
        states, logprob, _ = text_states(texts, args.jobs)
        pairs = (
            states[: len(real)],
            logprob[: len(real)],
            states[len(real) :],
            logprob[len(real) :],
        )
    current = {g: _current(h) for g, h in card_heads(scorer.card).items()}
    units = ["general", *[g for g in dict.fromkeys(genres.values()) if g in args.genres]]
    sections, entries, grids = {}, {}, {}
    for unit in units:
        by_genre = unit == "general"
        mine = files if by_genre else [f for f in files if f.genre == unit]
        shown = judged if by_genre else [f for f in judged if f.genre == unit]
        if len({f.genre if by_genre else f.name for f in mine}) < 2:
            print(f"\n## {unit}: one {'genre' if by_genre else 'dataset'}, nothing to hold out")
            continue
        # A genre head reads the states the general head chose (one extractor a bundle).
        at = None if by_genre else (lm.layers.index(STATE_LAYER), POOLINGS.index(STATE_POOLING))
        reading, inputs = current.get(unit) or current["general"]
        result = evaluate(
            mine,
            shown,
            by_genre,
            lm.layers,
            (reading, inputs),
            samples=args.samples,
            seed=args.seed,
            at=at,
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
        layer, pooling, variant, alpha = chosen
        if (layer, pooling) != (STATE_LAYER, STATE_POOLING):
            print(
                f"{unit}: the chosen states (layer {layer}, {pooling}) are not neural_states.v1's "
                f"(layer {STATE_LAYER}, {STATE_POOLING}): change features/neural_lm.py first",
                file=sys.stderr,
            )
            continue
        at = (lm.layers.index(layer), POOLINGS.index(pooling))
        head = fit(mine, at, variant, alpha, lm.layers, POOLINGS)
        if pairs is not None:
            entry["scrambles"] = share = scrambles_below(head, pairs, at)
            if share < args.floor:
                entry["decision"] = entry["decision"].replace("shipped", "not shipped", 1) + (
                    f"; but it scores real sentences above their shuffles for only {share:.1%}"
                )
                print(f"{unit}: {entry['decision']}")
                continue
        command = "python -m training.state_head " + shlex.join(
            list(argv) if argv is not None else sys.argv[1:]
        )
        decision = {**result["how"], "decision": entry["decision"]}
        sections[unit] = section(head, mine, decision, command, genre=unit, held=entry["held_out"])
        entries[unit] = entry
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({"shipped": entries, "grid": grids}, indent=1))
    if args.write and sections:
        write_heads(scorer, sections, entries)
    return 0


def scrambles_below(head: StateHead, pairs: tuple, at: tuple[int, int]) -> float:
    """The share of real sentences the head scores above their shuffles (a tie one half):
    `pairs` their (states, logprob sums) and the shuffles'."""
    real_states, real_lp, shuffled_states, shuffled_lp = pairs
    real = head.predict(real_states[:, at[0], at[1]], real_lp)
    shuffled = head.predict(shuffled_states[:, at[0], at[1]], shuffled_lp)
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
    layers: Sequence[int],
    current: tuple[str, Sequence[str]],
    *,
    samples: int,
    seed: int,
    at: tuple[int, int] | None = None,
) -> dict:
    """The learned head for `files` held out (one genre out with `by_genre`, else one dataset
    out), chosen (`choose`), judged against minus the length, the summed log-probability and
    the `current` head ((reading, inputs), refitted held out the same way), per text and per
    system, and the ship rule's decision (`ships`): {"chosen", "how", "ok", "entry" (the
    report's entry, its table headed by the head), "grid" (every setting's criterion)}."""
    from features.neural_lm import POOLINGS
    from training.heads_systems import system_view

    grid = None if at is None else [at]
    preds = held_out_predictions(files, by_genre, layers, POOLINGS, grid=grid)
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
        "GLEU, whole": held_out(judged, "whole", ["gleu"], by_genre),
    }
    refs = {k: judge(v, judged, by_genre) for k, v in comparisons.items()}
    others = {
        MINUS_LENGTH: refs[MINUS_LENGTH],
        "logprob sum": refs[LOGPROB_LABEL],
        "current head": refs[CURRENT],
    }
    best_of = {}
    for variant in VARIANTS:  # each variant at its own best layer, pooling and alpha
        best_of[variant], _ = choose({k: v for k, v in scores.items() if k[2] == variant})
    labels = {
        v: f"ridge on the states{' + logprob sum, in z' if '+' in v else ''}" for v in VARIANTS
    }
    gap = view.gain(preds[chosen], comparisons[CURRENT]) if (view and by_genre) else None
    ok, why = ships(
        scores[chosen], refs[MINUS_LENGTH], refs[LOGPROB_LABEL], refs[CURRENT], system_gap=gap
    )
    rows = []
    for variant, key in [(chosen[2], chosen), *[(v, k) for v, k in best_of.items() if k != chosen]]:
        label = "head" if key == chosen else f"{labels[variant]} (layer {key[0]}, {key[1]})"
        mine, _ = row(label, preds[key], judged, by_genre, view, others, samples, seed)
        rows.append(mine)
        if key == chosen:  # what the README's table reads: the head against its inputs
            mine["wins"] |= {"best single input": mine["wins"]["logprob sum"], "files": len(judged)}
            for label, p in comparisons.items():
                if label == CURRENT:
                    label = f"current head ({', '.join(map(str, inputs))}, {reading})"
                if label == LOGPROB_LABEL:
                    label = f"best single input: {label}"
                rows.append(row(label, p, judged, by_genre, view, others, samples, seed)[0])
    layer, pooling, variant, alpha = chosen
    held = "one genre out, over every genre" if by_genre else "one dataset of the genre out"
    entry = {
        "decision": (
            f"{'shipped' if ok else 'not shipped'}: {labels[variant]} (SmolLM2 layer {layer} "
            f"of 30, {pooling}-pooled, alpha {alpha:g} per 1,000 rows); {why}"
        ),
        "reading": "whole",
        "inputs": [f"SmolLM2 states (layer {layer}, {pooling})"]
        + ([LOGPROB] if "+" in variant else []),
        "held_out": held,
        "table": rows,
        "system_level_skipped": dict(view.skipped) if view else {},
    }
    grid_out = {f"{k[0]}/{k[1]}/{k[2]}/{k[3]:g}": round(j.criterion, 4) for k, j in scores.items()}
    return {"chosen": chosen, "how": how, "ok": ok, "entry": entry, "grid": grid_out}


if __name__ == "__main__":
    raise SystemExit(main())
