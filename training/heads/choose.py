"""Choosing a head afresh on judged datasets, the one path every shipped head is chosen on:
the judged files as `training.heads.figures.HeadFile`s held out by a protocol (one file cut into
folds of whole inputs, else one genre or one dataset out), the selection (`select_head`), then
the evidence (`training.heads.evidence.gather`), the rule that picks (a parameter;
`training.heads.ship_rule.pick`), the report and its tables (`training.heads.tables`); last, the
head fitted on every file. `python -m training.heads` chooses each genre's head so, and `fluency
benchmark --protocol lodo` (`training.heads.held_out`); `fluency calibrate` starts from a shipped
head instead (`training.calibration.start`), and reads the folds from here."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from features.errors import InputError
from training.heads.evidence import gather
from training.heads.figures import HeadFile
from training.heads.files import READINGS
from training.heads.select import Fitted, ScrambleCheck, fit_head, select_head
from training.heads.ship_rule import pick
from training.heads.tables import decision_report

__all__ = ["FOLDS", "Choice", "choose", "fold_rows", "hold_out", "input_folds", "subset"]

FOLDS = 5


def subset(file: HeadFile, rows: Sequence[int], name: str | None = None) -> HeadFile:
    """The outputs `rows` of `file`, with their columns and baselines."""
    rows = np.asarray(rows, dtype=int)
    return HeadFile(
        name or file.name,
        file.genre,
        file.human[rows],
        [file.groups[i] for i in rows],
        {r: {c: v[rows] for c, v in cols.items()} for r, cols in file.columns.items()},
        {b: v[rows] for b, v in file.baselines.items()},
        [file.systems[i] for i in rows] if file.systems else [],
    )


def fold_rows(groups: Sequence[str], k: int, *, seed: int = 0) -> list[np.ndarray]:
    """The rows of each of `k` folds of whole inputs (scikit-learn's `GroupKFold`, shuffled
    with `seed`: folds of about as many outputs each)."""
    from sklearn.model_selection import GroupKFold

    if k < 2:
        raise InputError(f"folds must be at least 2, got {k}")
    n_inputs = len(set(groups))
    if n_inputs < k:
        raise InputError(
            f"{n_inputs} input(s), fewer than {k} folds: name the inputs (--group-column), ask "
            "for fewer folds (--folds), or rate more inputs"
        )
    split = GroupKFold(k, shuffle=True, random_state=seed).split(groups, groups=list(groups))
    return [np.sort(rows) for _, rows in split]


def input_folds(file: HeadFile, k: int = FOLDS, *, seed: int = 0) -> list[HeadFile]:
    """`file` cut into `k` folds of whole inputs named NAME#1..NAME#k, each held out as a
    dataset would be."""
    rows = fold_rows(file.groups, k, seed=seed)
    return [subset(file, r, f"{file.name}#{i + 1}") for i, r in enumerate(rows)]


@dataclass(frozen=True)
class Choice:
    """What `choose` found: the decision (ship or not, and the held-out
    table), the head forward selection ended on before it, and the decided head fitted on every
    file (None where no input passes the scramble check)."""

    decision: dict
    selected: tuple[str, tuple[str, ...]] | None  # (reading, inputs)
    fitted: Fitted | None

    @property
    def ships(self) -> bool:
        return bool(self.decision["ship"])

    @property
    def fell_back(self) -> bool:
        """The selection's head lost to a single input, which is the head instead."""
        if self.selected is None or self.fitted is None:
            return False
        return (self.fitted.reading, self.fitted.inputs) != self.selected

    @property
    def label(self) -> str:
        if self.fitted is None:
            return "none"
        return f"{' + '.join(self.fitted.inputs)} ({self.fitted.reading})"


def hold_out(
    files: Sequence[HeadFile], *, folds: int = FOLDS, by_genre: bool = False, seed: int = 12345
) -> tuple[list[HeadFile], str, bool]:
    """The protocol: the units held out one at a time, the protocol in words, and whether the
    units are whole genres. One file is cut into `folds` folds of whole inputs; several are
    held out one genre at a time (with `by_genre`, over two or more genres), else one file."""
    if not files:
        raise InputError("give at least one judgement file")
    if len(files) == 1:
        held = f"{folds} folds of the inputs of {files[0].name}"
        return input_folds(files[0], folds, seed=seed), held, False
    if by_genre and len({f.genre for f in files}) > 1:
        return list(files), "one genre out", True
    return list(files), "one dataset out", False


def choose(
    files: Sequence[HeadFile],
    readings: Sequence[str] = READINGS,
    *,
    folds: int = FOLDS,
    by_genre: bool = False,
    check: ScrambleCheck | None = None,
    max_inputs: int = 4,
    n_samples: int = 200,
    seed: int = 12345,
    progress=None,
    held: str | None = None,
    rule: Callable = pick,
) -> Choice:
    """The head `rule` picks on `files` held out as `hold_out` holds them (the report says
    `held` where given, else the protocol), then fitted on every file: first the evidence, each
    candidate's held-out figures (`training.heads.evidence.gather`), then `rule` over them
    (`training.heads.ship_rule.pick`, or a function of the same arguments), then the report and its
    tables (`training.heads.tables.decision_report`)."""
    units, protocol, by_genre = hold_out(files, folds=folds, by_genre=by_genre, seed=seed)
    candidates = {r: list(units[0].columns[r]) for r in readings}
    same = {"by_genre": by_genre, "n_samples": n_samples, "seed": seed}
    selection, by_reading = select_head(
        units, readings, candidates, max_inputs=max_inputs, progress=progress, check=check, **same
    )
    floor = None if check is None else check.floor
    evidence = gather(units, selection, by_reading, floor=floor, **same)
    verdict = rule(evidence.fitted, evidence.singles, evidence.minus, floor=floor)
    decision = decision_report(evidence, verdict)
    decision["held_out"] = held or protocol
    fitted = None
    if decision.get("inputs"):
        fitted = fit_head(files, decision["reading"], decision["inputs"])
    selected = None if selection is None else (selection.reading, tuple(selection.inputs))
    return Choice(decision, selected, fitted)
