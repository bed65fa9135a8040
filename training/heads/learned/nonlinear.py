"""Nonlinear heads on SmolLM2's states, held out beside the shipped ridge and decided under the
one rule: a kernel ridge through a Nyström map (RBF kernel, gamma 1 / the columns) and a small
multi-layer perceptron, each a scikit-learn pipeline on the standardised states the ridge reads
(layer 20, mean-pooled), fitted on the same weighted rows (`ridge.row_weights`).

For each unit (the general head, one genre out; a genre's head, one dataset of it out) every
setting is held out (`training.heads.estimators.kinds.held_out`); the best criterion picks the
family, and within it the strongest regularisation within one standard error of the best
(`training.heads.learned.ridge.choose`). The head chosen then faces the ridge on the
states as the current head under `training.heads.selection.ship_rule.ships`: criterion, minus
the length and SmolLM2's summed log-probability on both means, the system order (paired 95%
interval), shuffles, runs, loops and what is said again (its own fixed weight). A bundle
serves linear heads only, as NumPy arithmetic: a nonlinear head that passes is reported as
such, not written.

    python -m training.heads.learned.nonlinear --model neural --max-outputs 300 \\
        --max-words 8000 --train-outputs 1500 --train-words 40000 --jobs 2 \\
        --json build/heads/nonlinear.json
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np
from tqdm import tqdm

from training.heads.estimators.kinds import held_out, units
from training.heads.learned.ridge import StateRidgeKind, choose, row_weights
from training.heads.learned.rows import StateFile
from training.heads.metrics.figures import interval, judge
from training.heads.report.tables import row, table_markdown
from training.heads.selection.ship_rule import ships

__all__ = ["FAMILIES", "PipelineKind", "decide", "main", "settings"]

RIDGE = "ridge on the states"
FAMILIES = ("kernel ridge (Nystroem, RBF)", "MLP")


def settings(n_components: int = 1000, seed: int = 12345) -> dict[tuple[str, float], Callable]:
    """{(family, regularisation): a function making its unfitted pipeline}, each family's
    settings from the weakest regularisation to the strongest."""
    from sklearn.kernel_approximation import Nystroem
    from sklearn.linear_model import Ridge
    from sklearn.neural_network import MLPRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    def kernel(alpha):
        return lambda: make_pipeline(
            StandardScaler(),
            Nystroem(kernel="rbf", n_components=n_components, random_state=seed),
            Ridge(alpha=alpha),
        )

    def mlp(alpha):
        return lambda: make_pipeline(
            StandardScaler(),
            MLPRegressor(
                hidden_layer_sizes=(64,),
                alpha=alpha,
                early_stopping=True,
                max_iter=200,
                random_state=seed,
            ),
        )

    out = {(FAMILIES[0], a): kernel(a) for a in (1.0, 10.0, 100.0, 1000.0)}
    out |= {(FAMILIES[1], a): mlp(a) for a in (1.0, 10.0, 100.0)}
    return out


class PipelineKind:
    """A kind of candidate (`training.heads.estimators.kinds`): a scikit-learn pipeline made by
    `make`, fitted on the states at `at` (layer index, pooling index) of the files' fitted
    outputs, each weighted as the ridge weighs it, predicting their judged outputs."""

    def __init__(self, make: Callable, at: tuple[int, int]):
        self.make, self.at = make, at

    def fit(self, files: Sequence[StateFile]) -> PipelineKind:
        X = np.concatenate([f.states[:, self.at[0], self.at[1]] for f in files])
        y = np.concatenate([f.target for f in files])
        w = row_weights(files)
        model = self.make()
        last = model.steps[-1][0]
        model.fit(X.astype(np.float64), y, **{f"{last}__sample_weight": w * len(w) / w.sum()})
        self.model_ = model
        return self

    def predict(self, file: StateFile) -> np.ndarray:
        states = file.states[file.judged, self.at[0], self.at[1]].astype(np.float64)
        return self.model_.predict(states)

    def scores(self, states: np.ndarray) -> np.ndarray:
        return self.model_.predict(np.asarray(states, dtype=np.float64))


def decide(
    files: Sequence[StateFile],
    judged: Sequence,
    by_genre: bool,
    at: tuple[int, int],
    ridge: tuple[Sequence[int], Sequence[str], float],
    *,
    check=None,
    made: Mapping[tuple[str, float], Callable] | None = None,
    samples: int = 200,
    seed: int = 12345,
    floor: float = 0.95,
) -> dict:
    """The nonlinear head of one unit, chosen held out and decided against the ridge on the
    states (`ridge`: the layers and poolings the files hold and its alpha): its report entry
    (decision, table, chosen setting, every setting's criterion)."""
    from features.neural_states import STATE_NAMES
    from training.heads.data.files import MINUS_LENGTH
    from training.heads.data.said_again import KINDS
    from training.heads.estimators.select import held_out as held_out_columns
    from training.heads.metrics.systems import system_view

    made = settings(seed=seed) if made is None else made
    layers, poolings, alpha = ridge
    base = StateRidgeKind(at, layers, poolings, alphas=(alpha,), variants=("states",))
    preds = {RIDGE: {k: p[:, 0] for k, p in held_out(base, files, by_genre).items()}}
    n = len(units(files, by_genre)) * len(made)
    with tqdm(total=n, desc="nonlinear held-out fits", unit=" fold") as bar:
        for key, make in made.items():
            preds[key] = held_out(PipelineKind(make, at), files, by_genre)
            bar.update(len(units(files, by_genre)))
    scores = {k: judge(p, judged, by_genre) for k, p in preds.items()}
    chosen, _ = choose(
        {k: v for k, v in scores.items() if k != RIDGE}, alphas=sorted({k[1] for k in made})
    )
    view = system_view(judged, by_genre, n_samples=samples, seed=seed)
    minus = judge({f.name: f.baselines[MINUS_LENGTH] for f in judged}, judged, by_genre)
    logprob = held_out_columns(judged, "whole", ["neural.v2/logprob_sum"], by_genre)
    shares: dict[str, float] = {}
    if check is not None:
        head = PipelineKind(made[chosen], at).fit(files)

        def on(cols):
            whole = cols["whole"]
            return head.scores(
                np.column_stack([whole[f"neural_states.v1/{c}"] for c in STATE_NAMES])
            )

        shares = check.shares(on)
    again = {k: v for k, v in shares.items() if k in KINDS}
    loops = {k: v for k, v in shares.items() if k not in KINDS and k != "shuffles"}
    ruling = ships(
        scores[chosen],
        minus=minus,
        best_input=("SmolLM2 logprob sum", judge(logprob, judged, by_genre)),
        current=scores[RIDGE],
        system_gap=view.gain(preds[chosen], preds[RIDGE]) if view.draws else None,
        scrambles=shares.get("shuffles"),
        floor=floor,
        degenerate=loops or None,
        said_again=again or None,
    )
    label = f"{chosen[0]}, regularisation {chosen[1]:g}"
    rows = []
    for name, p in (
        ("head: " + label, preds[chosen]),
        (RIDGE + f" (alpha {alpha:g})", preds[RIDGE]),
        *[(f"{k[0]}, {k[1]:g}", preds[k]) for k in made if k != chosen],
        ("minus the length", {f.name: f.baselines[MINUS_LENGTH] for f in judged}),
        ("SmolLM2 logprob sum", logprob),
    ):
        j = judge(p, judged, by_genre)
        ci = interval(p, judged, by_genre, n_samples=samples, seed=seed)
        system = view.figures(p).as_dict() if view.draws else None
        rows.append(row(name, j, ci, system=system))
    served = "; a bundle serves linear heads only, so it is not written" if ruling.ok else ""
    return {
        "decision": f"{'passes' if ruling.ok else 'not shipped'}: {label}; {ruling.why}{served}",
        "chosen": list(chosen),
        "table": rows,
        "checks": shares,
        "grid": {
            f"{k[0]} {k[1]:g}": round(v.criterion, 4) for k, v in scores.items() if k != RIDGE
        },
    }


def main(argv: Sequence[str] | None = None) -> int:
    from features.neural_lm import STATE_LAYER, STATE_POOLING
    from scorer.bundles import load_configured_all
    from scorer.config import from_env
    from training.heads.data.files import READING_MODES, add_rows_options, read_scrambles
    from training.heads.learned.candidates import add_learned_options, read_learned

    ap = argparse.ArgumentParser(
        prog="python -m training.heads.learned.nonlinear", description=__doc__
    )
    ap.add_argument("--model", default="neural", help="the tier's bundle")
    add_rows_options(ap)
    ap.set_defaults(max_outputs=300, max_words=8000)
    add_learned_options(ap)
    ap.add_argument("--samples", type=int, default=200, help="bootstrap samples")
    ap.add_argument("--scrambles", default="../shared/corpora/reuters21578/test.txt")
    ap.add_argument("--floor", type=float, default=0.95)
    ap.add_argument("--json", help="write the report here")
    args = ap.parse_args(argv)
    if not args.train_outputs:
        ap.error("give --train-outputs: the states of every layer are read from there")
    (scorer,) = load_configured_all([args.model], from_env())
    learned, judged = read_learned(scorer, args, READING_MODES, "")
    check = read_scrambles(scorer, args, READING_MODES)
    at = (list(learned.layers).index(STATE_LAYER), list(learned.poolings).index(STATE_POOLING))
    heads = learned.heads
    report = {}
    for unit in ["general", *[g for g in args.genres if any(f.genre == g for f in judged)]]:
        by_genre = unit == "general"
        mine = [f for f in learned.files if by_genre or f.genre == unit]
        shown = [f for f in judged if by_genre or f.genre == unit]
        if len({f.genre if by_genre else f.name for f in mine}) < 2:
            continue
        current = heads.get(unit) or heads["general"]
        alpha = float((current.states or heads["general"].states or {}).get("alpha", 3000.0))
        entry = decide(
            mine,
            shown,
            by_genre,
            at,
            (learned.layers, learned.poolings, alpha),
            check=check,
            samples=args.samples,
            seed=args.seed,
            floor=args.floor,
        )
        report[unit] = entry
        print(f"\n## {unit}: {entry['decision']}\n")
        print("\n".join(table_markdown(entry["table"], rows=len(entry["table"]))))
        sys.stdout.flush()
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
