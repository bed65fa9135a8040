"""The neural tier's learned head, a ridge on SmolLM2's states, fitted and held out.

Every other head reads a few of the GLEU stage's columns; this one reads what the language
model knows of the text: the hidden state after one of SmolLM2-135M's layers, pooled over the
text's tokens (`features.neural_states.pooled_states`, from the same passes as its
log-probabilities), 576 numbers a text, standardised, under a ridge fitted on people's ratings
of the development files (z-scored within each file; genres weighing the same, datasets the same
within a genre: `training.heads.metrics.figures.unit_weights`). A variant averages the ridge's
prediction, in z, with SmolLM2's summed log-probability of the text.

Chosen held out as every head is (`training.heads`): the general head by leaving one whole
genre out in turn. The layer, the pooling and the variant are the best held-out criterion
(mean rho + mean per-input tau over genres); the ridge's alpha is then the strongest whose
criterion is within one standard error (over files, paired) of the best alpha's: the best
point over-fits the development files. It is fitted on far more outputs a file
(`--train-outputs`) than it is judged on, and judged on the same outputs as the shipped heads
(`--max-outputs`/`--max-words`, the same seed: the judged outputs are among the fitted ones
of their file, which is never in the fit that judges it).

The command (`python -m training.heads.learned`) holds these variants out beside a third, the
current head plus a ridge on the states fitted to what it leaves
(`training.heads.learned.residual`), and ships the chosen one through the one ship rule
(`training.heads.selection.ship_rule.ships`); a head on the states alone is written as an ordinary
linear head over the GLEU score (weight 0), the 576 state columns (`neural_states.v1`) and the
summed log-probability, read whole.

    python -m training.heads.learned --model neural --jobs 2 --write
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from tqdm import tqdm

from training.heads.data.judged import HeadFile
from training.heads.estimators.kinds import held_out, units
from training.heads.estimators.ridge import ALPHAS, fit_ridge, within_one_se
from training.heads.learned.rows import StateFile
from training.heads.metrics.figures import Judgement, criteria, unit_weights

__all__ = [
    "ALPHAS",
    "VARIANTS",
    "StateHead",
    "StateRidgeKind",
    "choose",
    "fit",
    "fit_all",
    "held_out_predictions",
    "row_weights",
]

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
    (`estimators.ridge.fit_ridge`); "states + logprob" averages its prediction in z with
    the summed log-probability's z (both z on the fit rows, weighted). Returned in the inputs'
    units."""
    X = np.concatenate([f.states[:, at[0], at[1]] for f in files]).astype(np.float64)
    y = np.concatenate([f.target for f in files])
    lp = np.concatenate([f.logprob for f in files])
    w = row_weights(files)
    strengths = np.asarray(alphas, dtype=float) * len(y) / 1000.0
    coefs, intercepts = fit_ridge(X, y, w, strengths)
    lp_mean, lp_sd = _wstats(lp, w)
    out = {}
    for k, alpha in enumerate(alphas):
        coef, intercept = coefs[k], float(intercepts[k])
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


def row_weights(files: Sequence[StateFile]) -> np.ndarray:
    """Each fitted output's weight: genres weigh the same, datasets the same within a genre."""
    stand_ins = [HeadFile(f.name, f.genre, f.human, [], {}) for f in files]
    return unit_weights(stand_ins)


class StateRidgeKind:
    """A kind of candidate (`estimators.kinds`): a ridge on the states at `at` (layer index,
    pooling index), every alpha and variant from one fit (`fit_all`); predicts one column a
    setting of `keys`, on a file's judged outputs."""

    def __init__(
        self,
        at: tuple[int, int],
        layers: Sequence[int],
        poolings: Sequence[str],
        alphas: Sequence[float] = ALPHAS,
        variants: Sequence[str] = VARIANTS,
    ):
        self.at, self.layers, self.poolings = at, layers, poolings
        self.alphas, self.variants = alphas, variants

    @property
    def keys(self) -> list[tuple]:
        """(layer, pooling, variant, alpha) of each column `predict` gives, as `fit_all` orders
        its heads."""
        layer, pooling = self.layers[self.at[0]], self.poolings[self.at[1]]
        return [(layer, pooling, v, float(a)) for a in self.alphas for v in self.variants]

    def fit(self, files: Sequence[StateFile]) -> StateRidgeKind:
        at, layers, poolings = self.at, self.layers, self.poolings
        self.heads_ = fit_all(files, at, self.alphas, layers, poolings, self.variants)
        return self

    def predict(self, file: StateFile) -> np.ndarray:
        states = file.states[file.judged, self.at[0], self.at[1]]
        lp = file.logprob[file.judged]
        return np.column_stack([h.predict(states, lp) for h in self.heads_.values()])


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
    n_units = len(units(files, by_genre))
    with tqdm(total=len(grid) * n_units, desc="held-out fits", unit=" fold") as bar:
        for at in grid:
            kind = StateRidgeKind(at, layers, poolings, alphas, variants)
            found = held_out(kind, files, by_genre)
            for k, key in enumerate(kind.keys):
                out[key] = {name: np.ascontiguousarray(p[:, k]) for name, p in found.items()}
            bar.update(n_units)
    return out


def choose(
    judged: Mapping[tuple, Judgement], alphas: Sequence[float] = ALPHAS
) -> tuple[tuple, dict]:
    """The chosen (layer, pooling, variant, alpha) and how: the best held-out criterion picks
    the layer, pooling and variant; among their alphas, the strongest whose per-file criteria
    are, paired with the best alpha's, at most one standard error below on average. Any key
    whose last item is the regularisation, larger stronger, is chosen the same way."""
    best = max(judged, key=lambda k: np.nan_to_num(judged[k].criterion, nan=-9))
    top = criteria(judged[best])
    tried = [a for a in alphas if (*best[:-1], a) in judged]
    paired = np.array([[criteria(judged[(*best[:-1], a)])[n] - top[n] for n in top] for a in tried])
    gaps = paired.mean(axis=1)
    within = within_one_se(tried, gaps, paired)
    chosen = (*best[:-1], max(within))
    how = {
        "best": {"key": list(best), "criterion": round(judged[best].criterion, 4)},
        "alphas_within_one_se": within,
        "chosen": list(chosen),
        "criterion": round(judged[chosen].criterion, 4),
    }
    return chosen, how
