"""`training.recipes`: every file scored by a recipe fitted on the other genres of its fit set, a
genre left with nothing to fit on unscored, and the criterion weighing genres equally."""

from __future__ import annotations

import math

import pytest
from examples import judged_following

from training.recipes import Recipe, criterion, score_recipes, table

GENRES = {"a1": "A", "a2": "A", "b": "B", "c": "C"}


def _files():
    signs = {"a1": 1.0, "a2": 1.0, "b": 1.0, "c": -1.0}
    return [judged_following(name, sign, seed=k) for k, (name, sign) in enumerate(signs.items(), 1)]


def test_a_file_is_scored_by_a_fit_on_the_other_genres_of_the_recipe_only():
    files = _files()
    out = score_recipes(
        {"whole": files},
        GENRES,
        fit_sets=[("A", "B"), ("A", "C"), ("A",)],
        regressors=["ridge(alpha=1)"],
        input_sets=("features",),
    )
    ab = out[Recipe((("A", "B"), "ridge(alpha=1)", "features", "whole"))]
    # C is outside the fit set A + B: scored by a fit on A and B, who read f the other way.
    assert ab["c"]["spearman"] < -0.9
    # A's files are scored by a fit on B alone, never on each other: B agrees with them.
    assert ab["a1"]["spearman"] > 0.9 and ab["b"]["spearman"] > 0.9
    ac = out[Recipe((("A", "C"), "ridge(alpha=1)", "features", "whole"))]
    assert ac["a1"]["spearman"] < -0.9  # fitted on C alone, which reads f backwards
    alone = out[Recipe((("A",), "ridge(alpha=1)", "features", "whole"))]
    assert alone["a1"] is None and alone["a2"] is None  # nothing left to fit on
    assert math.isnan(criterion(alone, GENRES))
    assert criterion(ab, GENRES) > criterion(ac, GENRES)
    lines = table({r.label: per for r, per in out.items()}, GENRES)
    assert lines[0].startswith("| recipe") and "not scored" in lines[-1]


def test_the_criterion_weighs_each_genre_the_same():
    per = {
        "a1": {"spearman": 0.6, "group_kendall": 0.2},
        "a2": {"spearman": 0.4, "group_kendall": 0.0},
        "b": {"spearman": 0.0, "group_kendall": 0.4},
        "c": {"spearman": 0.2, "group_kendall": float("nan")},
    }
    # rho: (0.5 + 0.0 + 0.2) / 3; tau: (0.1 + 0.4) / 2 (C has none)
    assert criterion(per, GENRES) == pytest.approx(0.7 / 3 + 0.25)
