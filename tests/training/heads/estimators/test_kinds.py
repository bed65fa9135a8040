"""The one held-out loop (`training.heads.estimators.kinds.held_out`) and the kinds of candidate it
holds: each file is predicted by a fit without its unit, whatever the kind, and each kind's held-out
predictions are its own fit on the other units."""

from __future__ import annotations

import numpy as np
import pytest

from scorer.heads import Head
from training.heads.data.judged import HeadFile
from training.heads.estimators.kinds import held_out, units
from training.heads.estimators.select import LinearKind, fit_head
from training.heads.estimators.select import held_out as linear_held_out
from training.heads.learned.residual import ResidualKind, base_head, held_out_residual
from training.heads.learned.ridge import StateRidgeKind, fit_all, held_out_predictions
from training.heads.learned.rows import StateFile


class _Named:
    def __init__(self, name: str, genre: str):
        self.name, self.genre = name, genre


class _Recorder:
    """A kind that predicts, for every output, how many files it was fitted on, and keeps
    their names: what the loop fitted each unit on, seen from outside."""

    def fit(self, files):
        self.seen_ = sorted(f.name for f in files)
        return self

    def predict(self, file):
        return np.full(2, float(len(self.seen_)))


def test_each_unit_is_predicted_by_a_fit_on_the_others_whatever_the_kind():
    files = [_Named(n, g) for n, g in [("a1", "a"), ("b1", "b"), ("a2", "a"), ("c1", "c")]]
    assert units(files, True) == [{"a1", "a2"}, {"b1"}, {"c1"}]
    assert units(files, False) == [{"a1"}, {"b1"}, {"a2"}, {"c1"}]
    by_genre = held_out(_Recorder(), files, True)
    assert list(by_genre) == ["a1", "a2", "b1", "c1"]  # unit by unit
    assert {n: p[0] for n, p in by_genre.items()} == {"a1": 2, "a2": 2, "b1": 3, "c1": 3}
    by_file = held_out(_Recorder(), files, False)
    assert all(p[0] == 3 for p in by_file.values())
    # Fitted on other files than are judged: the units are the judged files', so a fit file
    # judged nowhere (b2) is in every fit.
    more = [*files, _Named("b2", "b")]
    fitted_on = held_out(_Recorder(), files, True, fit_files=more)
    assert {n: p[0] for n, p in fitted_on.items()} == {"a1": 3, "a2": 3, "b1": 4, "c1": 4}


def _head_files(seed: int = 0) -> list[HeadFile]:
    rng = np.random.default_rng(seed)
    out = []
    for k, genre in enumerate("aabc"):
        n = 120
        x1, x2 = rng.normal(size=n), rng.normal(size=n)
        states = {f"neural_states.v1/h{j:03d}": rng.normal(size=n) for j in range(4)}
        human = x1 + 0.5 * x2 + 0.5 * rng.normal(size=n)
        cols = {"gleu": x1, "x2": x2, **states}
        groups = [f"g{i // 4}" for i in range(n)]
        out.append(HeadFile(f"{genre}{k}", genre, human, groups, {"whole": cols}))
    return out


def test_a_linear_kind_held_out_is_the_ridge_or_the_sign_fitted_on_the_other_units():
    files = _head_files()
    preds = linear_held_out(files, "whole", ["gleu", "x2"], True)
    for unit in units(files, True):
        train = [f for f in files if f.name not in unit]
        head = fit_head(train, "whole", ["gleu", "x2"])
        for f in files:
            if f.name in unit:
                assert np.array_equal(preds[f.name], head.predict(f))
    flipped = [HeadFile(f.name, f.genre, -f.human, f.groups, f.columns) for f in files]
    alone = held_out(LinearKind("whole", ["gleu"]), flipped, False)
    assert all(np.array_equal(alone[f.name], -f.columns["whole"]["gleu"]) for f in files)


def test_a_state_ridge_kind_gives_one_column_a_setting_in_the_order_of_its_keys():
    rng = np.random.default_rng(1)
    files = [
        StateFile(f"f{k}", g, rng.normal(size=50), rng.normal(size=(50, 2, 1, 6)),
                  rng.normal(size=50), np.arange(0, 50, 2))
        for k, g in enumerate("aabb")
    ]  # fmt: skip
    kind = StateRidgeKind((1, 0), (8, 16), ("mean",), alphas=(1.0, 100.0))
    assert kind.keys == [(16, "mean", v, a) for a in (1.0, 100.0) for v in kind.variants]
    heads = fit_all(files[2:], (1, 0), (1.0, 100.0), (8, 16), ("mean",))
    pred = kind.fit(files[2:]).predict(files[0])
    assert pred.shape == (25, len(kind.keys))
    for k, head in enumerate(heads.values()):
        f = files[0]
        assert np.array_equal(
            pred[:, k], head.predict(f.states[f.judged, 1, 0], f.logprob[f.judged])
        )
    grid = held_out_predictions(files, True, (8, 16), ("mean",), alphas=(1.0, 100.0), grid=[(1, 0)])
    assert list(grid) == kind.keys
    assert np.array_equal(grid[kind.keys[0]]["f0"], pred[:, 0])


def test_a_residual_kind_refits_the_head_it_starts_from_on_the_fit_files():
    files = _head_files(2)
    current = Head(("gleu",), [0.5], 0.0, "whole", label="current")
    columns = tuple(c for c in files[0].columns["whole"] if c.startswith("neural_states"))
    kind = ResidualKind(current, columns, alphas=(1.0, 1e9)).fit(files[1:])
    assert np.array_equal(kind.base_.coef, base_head(files[1:], current).coef)
    assert kind.predict(files[0]).shape == (len(files[0].human), 2)
    found = held_out_residual(files, files, True, current, (20, "mean"), alphas=(1.0, 1e9))
    mine = held_out(ResidualKind(current, columns, alphas=(1.0, 1e9)), files, True)
    for (_, _, _, alpha), preds in found.items():
        k = (1.0, 1e9).index(alpha)
        assert all(np.array_equal(preds[n], mine[n][:, k]) for n in preds)


def test_the_evidence_holds_out_whatever_kind_its_record_carries():
    from training.heads.metrics.figures import Judgement
    from training.heads.selection.evidence import Evidence
    from training.heads.selection.ship_rule import Candidate

    files = _head_files()
    nothing = Judgement({}, 0.0, 0.0)
    ev = Evidence(files, True, 10, 0, None, {}, None, {}, {}, minus=nothing, view=None)
    learned = Candidate("whole", ("a learned head",), nothing, kind=_Recorder())
    assert {n: p[0] for n, p in ev.preds(learned).items()} == {
        n: p[0] for n, p in held_out(_Recorder(), files, True).items()
    }
    with pytest.raises(ValueError, match="without a kind"):
        ev.preds(Candidate("whole", ("x2",), nothing))
