"""The evidence a head is chosen on: for each candidate (the head forward selection ended on,
every single input, minus the length, chrF where the files have references), its held-out
figures per text and per file (`training.heads.metrics.figures.Judgement`), whether it scores real
sentences above their shuffles, and per system (`training.heads.metrics.systems`); the rule
(`training.heads.selection.ship_rule.pick`) reads them, the tables (`training.heads.report.tables`)
are written from them. Predictions are held out once for each candidate asked about and kept.
The learned head (`training.heads.learned.candidates.LearnedCandidates.decide`) is judged on the
same evidence: its references (minus the length, the head it would replace, single inputs) held
out here once, the same system draws, and its record (`learned`) kept beside the linear ones.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from training.heads.data.checks import ScrambleCheck
from training.heads.data.files import MINUS_LENGTH
from training.heads.data.judged import HeadFile
from training.heads.estimators.kinds import held_out
from training.heads.estimators.select import LinearKind, Selection, beats
from training.heads.metrics.figures import Judgement, interval, judge
from training.heads.metrics.systems import SystemView, system_view
from training.heads.selection.ship_rule import Candidate, best_single

__all__ = ["Evidence", "gather"]


@dataclass
class Evidence:
    """What `gather` found on `files`, held out one genre (`by_genre`) or one file out."""

    files: Sequence[HeadFile]
    by_genre: bool
    n_samples: int
    seed: int
    selection: Selection | None
    by_reading: Mapping[str, Selection]
    fitted: Candidate | None  # the head forward selection ended on (None: no input passes)
    singles: dict[str, Candidate]  # "input (reading)" -> the input alone
    scrambles: dict[str, float]  # "input (reading)" -> share of shuffles scored lower
    minus: Judgement  # minus the length
    view: SystemView
    learned: Candidate | None = None  # the learned head's record, where one was decided (`add`)
    _preds: dict = field(default_factory=dict, repr=False)

    @property
    def best(self) -> str:
        return best_single(self.singles)

    def preds(self, c: Candidate) -> dict[str, np.ndarray]:
        """{file: `c`'s held-out predictions}, its kind held out as any kind is
        (`training.heads.estimators.kinds.held_out`)."""
        checked = getattr(c.kind, "check", None) is not None
        key = (c.name,) if c.name else (c.reading, c.inputs, checked)
        if key not in self._preds:
            if c.kind is None:
                raise ValueError(f"{c.label}: a candidate without a kind cannot be held out")
            self._preds[key] = held_out(c.kind, self.files, self.by_genre)
        return self._preds[key]

    def held(self, reading: str, inputs: Sequence[str]) -> dict[str, np.ndarray]:
        """{file: held-out predictions} of `inputs` under `reading` combined linearly, fitted
        without any weight on what is said again (what a learned head is judged against)."""
        key = (reading, tuple(inputs), False)
        if key not in self._preds:
            kind = LinearKind(reading, tuple(inputs))
            self._preds[key] = held_out(kind, self.files, self.by_genre)
        return self._preds[key]

    def add(self, c: Candidate, preds: Mapping[str, np.ndarray]) -> None:
        """Keep the learned head's record `c` (known by its name) and its held-out `preds`."""
        self.learned = c
        self._preds[(c.name,)] = dict(preds)

    def interval(self, preds: Mapping[str, np.ndarray]) -> dict[str, tuple[float, float]]:
        """95% intervals of the mean rho and tau of `preds`
        (`training.heads.metrics.figures.interval`)."""
        return interval(preds, self.files, self.by_genre, n_samples=self.n_samples, seed=self.seed)

    def judge(self, preds: Mapping[str, np.ndarray]) -> Judgement:
        return judge(preds, self.files, self.by_genre)


def gather(
    files: Sequence[HeadFile],
    selection: Selection | None,
    by_reading: Mapping[str, Selection],
    *,
    by_genre: bool,
    n_samples: int,
    seed: int,
    floor: float | None = None,
    check: ScrambleCheck | None = None,
) -> Evidence:
    """The candidates of `selection` and `by_reading` (`estimators.select.select_head`) with
    their held-out figures. Where the head is gated per system (`by_genre`, on files naming six or
    more systems) the fitted head, and each single input above it on both means, carry the 95%
    interval of their system-level accuracy less the best single input's."""
    checked = {
        f"{inputs[0]} ({reading})": acc
        for reading, sel in by_reading.items()
        for inputs, acc in sel.scrambles.items()
        if len(inputs) == 1
    }
    singles = {
        f"{name} ({reading})": Candidate(
            reading,
            (name,),
            j,
            robust=floor is None or checked.get(f"{name} ({reading})", 1.0) >= floor,
            kind=LinearKind(reading, (name,), check),
        )
        for reading, sel in by_reading.items()
        for name, j in sel.singles.items()
    }
    fitted = None
    if selection is not None:
        inputs = tuple(selection.inputs)
        kind = LinearKind(selection.reading, inputs, check)
        fitted = Candidate(selection.reading, inputs, selection.judgement, kind=kind)
    minus = judge({f.name: f.baselines[MINUS_LENGTH] for f in files}, files, by_genre)
    view = system_view(files, by_genre, n_samples=n_samples, seed=seed)
    found = Evidence(
        files,
        by_genre,
        n_samples,
        seed,
        selection,
        by_reading,
        fitted=fitted,
        singles=singles,
        scrambles=checked,
        minus=minus,
        view=view,
    )
    if by_genre and view and fitted is not None:
        best_preds = found.preds(singles[found.best])
        gated = [k for k, c in singles.items() if c.robust and beats(c.judgement, fitted.judgement)]
        for k in gated:
            gain = view.gain(found.preds(singles[k]), best_preds)
            singles[k] = dataclasses.replace(singles[k], system_gain=gain)
        gain = view.gain(found.preds(fitted), best_preds)
        found.fitted = dataclasses.replace(fitted, system_gain=gain)
    return found
