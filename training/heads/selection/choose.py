"""Choosing a head afresh on judged datasets, the one path every shipped head is chosen on: the
judged files as `training.heads.data.judged.HeadFile`s held out by a protocol (one file cut into
folds of whole inputs, else one genre or one dataset out), the selection (`select_head`), then the
evidence (`training.heads.selection.evidence.gather`), the rule that picks (a parameter;
`training.heads.selection.ship_rule.pick`), the report and its tables
(`training.heads.report.tables`); last, the head fitted on every file. The learned heads on
SmolLM2's states (`learned`, `training.heads.learned.candidates`) are chosen among their own
settings held out, then judged on the same evidence, their record kept in it beside the linear ones,
and face the same rule against that head, their rows written by the same writer. `python -m
training.heads` chooses each genre's head so (with `--learned`, the learned heads beside the linear
ones), `python -m training.heads.learned` the learned heads alone, and `fluency benchmark --protocol
lodo` (`training.heads.selection.held_out`); `fluency calibrate` starts from a shipped head instead
(`training.calibration.start`), and reads the folds from here."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from features.errors import InputError
from scorer.contributions import group_of
from scorer.readings import TEXT_READINGS
from training.heads.data.checks import ScrambleCheck
from training.heads.data.files import READING_MODES
from training.heads.data.judged import FOLDS, HeadFile, input_folds
from training.heads.estimators.select import Fitted, fit_head, select_head
from training.heads.metrics.figures import judge
from training.heads.report.tables import decision_report, rounded
from training.heads.selection.evidence import Evidence, gather
from training.heads.selection.ship_rule import FITTED, pick

__all__ = ["Choice", "choose", "hold_out"]


@dataclass(frozen=True)
class Choice:
    """What `choose` found: the decision (ship or not, and the held-out table), the head forward
    selection ended on before it, and the decided head fitted on every file (None where no input
    passes the scramble check); the learned head's result (`learned`: `entry`, `ships`,
    `section`, `preds`; None where none was tried for the unit), and the evidence all were
    judged on. Where the learned head took the linear head's place, `linear` keeps the linear
    decision's (decision, held-out predictions) where it would have shipped."""

    decision: dict
    selected: tuple[str, tuple[str, ...]] | None  # (reading, inputs)
    fitted: Fitted | None
    learned: Any = None
    # {file: the decided head's held-out predictions, the learned head's where it won}
    # (None: none ships)
    preds: dict | None = None
    evidence: Evidence | None = None
    linear: tuple[dict, dict] | None = None

    @property
    def won(self):
        """The learned head's result where it took the linear head's place, else None."""
        return self.learned if self.learned is not None and self.learned.ships else None

    @property
    def ships(self) -> bool:
        return bool(self.decision["ship"])

    @property
    def fell_back(self) -> bool:
        """The selection's head lost to a single input, which is the head instead."""
        if self.selected is None or self.fitted is None or self.won is not None:
            return False
        return (self.fitted.reading, self.fitted.inputs) != self.selected

    @property
    def label(self) -> str:
        if self.won is not None:
            return f"{' + '.join(self.decision['inputs'])} ({self.decision['reading']})"
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
    readings: Sequence[str] = READING_MODES,
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
    learned=None,
) -> Choice:
    """The head `rule` picks on `files` held out as `hold_out` holds them (the report says
    `held` where given, else the protocol), then fitted on every file: first the evidence, each
    candidate's held-out figures (`training.heads.selection.evidence.gather`), then `rule` over them
    (`training.heads.selection.ship_rule.pick`, or a function of the same arguments), then the
    report and its tables (`training.heads.report.tables.decision_report`). Then the `learned`
    heads (`training.heads.learned.candidates.LearnedCandidates`) decide on the same evidence
    against that head where it ships (else against the card's head it would replace): where
    theirs passes the rule it is the decision instead, the linear decision kept beside it
    (`also_tried`). No `readings`: the learned heads alone."""
    units, protocol, by_genre = hold_out(files, folds=folds, by_genre=by_genre, seed=seed)
    decision, selected, fitted = {"ship": False, "decision": "no linear candidates"}, None, None
    preds = None
    same = {"by_genre": by_genre, "n_samples": n_samples, "seed": seed}
    if readings:
        evidence, decision, selection, preds = _linear(
            units, readings, check, max_inputs, progress, rule, same
        )
        decision["held_out"] = held or protocol
        if decision.get("inputs"):
            fitted = fit_head(files, decision["reading"], decision["inputs"])
            if check is not None and check.said_again is not None:
                fitted = check.settle(fitted)
                decision["said_again"] = said_again_entry(check, fitted)
                if fitted.penalty:
                    decision["said_again"]["held_out"] = weight_cost(
                        units, fitted, check, by_genre, n_samples, seed
                    )
        selected = None if selection is None else (selection.reading, tuple(selection.inputs))
    else:
        evidence = gather(units, None, {}, **same)
    head = (decision["reading"], tuple(decision["inputs"])) if decision["ship"] else None
    found = None if learned is None else learned.decide(evidence, head)
    won = found if found is not None and found.ships else None
    linear = (decision, preds) if won is not None and readings and decision["ship"] else None
    tried = [found.entry] if found is not None and won is None else []
    if won is not None:
        tried = [decision] if readings else []
        decision = {"ship": True, **won.entry, "held_out": held or won.entry["held_out"]}
    elif tried and not readings:
        decision = {"ship": False, **tried.pop(0)}
    if tried:
        decision["also_tried"] = tried
    if won is not None:
        preds = won.preds
    elif not (readings and decision["ship"]):
        preds = None
    return Choice(decision, selected, fitted, found, preds, evidence, linear)


def said_again_entry(check: ScrambleCheck, head: Fitted) -> dict:
    """The report's record of `head`'s said-again check: its fixed weight on the share of the
    text said again (0: none needed) and, per kind, the share of held paragraphs whose version
    it scores at or below the original."""
    shares = check.said_again_shares(head)
    return {"weight": round(head.penalty, 6), "shares": {k: round(v, 4) for k, v in shares.items()}}


def weight_cost(units, head: Fitted, check: ScrambleCheck, by_genre: bool, n_samples, seed):
    """What `head`'s weight on what is said again costs held out: its held-out figures (mean
    rho, mean per-input tau, system pair accuracy) with each fold's head carrying its weight,
    and without any."""
    from training.heads.estimators.kinds import held_out
    from training.heads.estimators.select import LinearKind
    from training.heads.metrics.systems import system_view

    view = system_view(units, by_genre, n_samples=n_samples, seed=seed)
    out = {}
    for name, kind in (
        ("with", LinearKind(head.reading, head.inputs, check)),
        ("without", LinearKind(head.reading, head.inputs)),
    ):
        out[name] = figures(held_out(kind, units, by_genre), units, by_genre, view)
    return out


def figures(preds, units, by_genre: bool, view) -> dict:
    """The report's three figures of held-out `preds`: mean rho, mean per-input tau and, where
    `view` (`training.heads.metrics.systems.system_view`) has draws, system pair accuracy."""
    j = judge(preds, units, by_genre)
    systems = rounded(view.point(preds).accuracy) if view.draws else None
    return {"rho": rounded(j.rho), "tau": rounded(j.tau), "systems": systems}


def _linear(units, readings, check, max_inputs, progress, rule, same):
    """The evidence on `units`, the linear candidates' decision (forward selection, evidence,
    rule, report), the selection it started from, and the decided head's held-out predictions
    ({} for none)."""
    candidates = {
        r: [c for c in units[0].columns[r] if group_of(c) is None and c not in TEXT_READINGS]
        for r in readings
    }
    selection, by_reading = select_head(
        units, readings, candidates, max_inputs=max_inputs, progress=progress, check=check, **same
    )
    floor = None if check is None else check.floor
    evidence = gather(units, selection, by_reading, floor=floor, check=check, **same)
    verdict = rule(evidence.fitted, evidence.singles, evidence.minus, floor=floor)
    head = evidence.fitted if verdict.head == FITTED else evidence.singles.get(verdict.head)
    preds = evidence.preds(head) if head is not None and head.kind is not None else {}
    return evidence, decision_report(evidence, verdict), selection, preds
