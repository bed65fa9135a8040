"""The default tier's taught heads as candidates of the one chooser
(`training.heads.selection.choose.choose`, its `learned`): for one unit (the general head, one
genre out; a genre's head, one dataset of the genre out) the student of each held-out genre is
fitted to a teacher refitted without that genre, on texts outside it
(`training.heads.taught.teacher`, `training.heads.taught.student`), judged on the chooser's
evidence against the head it would replace, minus the length, its best single input and its
teacher, per text and per system, and decided by the one ship rule
(`training.heads.selection.ship_rule.ships`) with the checks every head passes (shuffles, runs,
loops, said again). Each student reads the reading (whole, weighted, sum) that reproduces its
teacher best on sets of texts it left out. Where it ships, the head written is the student of
the teacher fitted on every file, taught on every text.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from scorer.heads import Head
from scorer.readings import SAID_AGAIN
from training.heads.data.checks import ScrambleCheck
from training.heads.data.files import MINUS_LENGTH
from training.heads.data.said_again import KINDS as SAID_AGAIN_KINDS
from training.heads.learned.candidates import Decided, weight_cost, with_said_again
from training.heads.learned.choice import below, current_setting, record_checks
from training.heads.learned.rows import StateFile
from training.heads.report.tables import row
from training.heads.selection.evidence import Evidence
from training.heads.selection.ship_rule import Candidate, best_single, ships, wins
from training.heads.taught.prepare import Prepared, prepare
from training.heads.taught.student import Student, fit_student, student_inputs
from training.heads.taught.teacher import Teacher, fit_teacher

__all__ = ["TAUGHT", "TaughtCandidates", "follows", "read_taught"]

TAUGHT = "taught head"  # its record's name in the chooser's evidence
TEACHER = "teacher (neural learned head)"
CURRENT = "current head"


@dataclass
class TaughtCandidates:
    """The taught heads of a run: what they learn from (`prepared`), the development files'
    outputs as the teacher is fitted on them (`teacher_files`, one `StateFile` a judged file, in
    the judged files' order), the teacher's `setting` (the neural card's general head's `states`
    entry), the default card's `heads`, the scramble `check`, its `floor` and the `command`."""

    prepared: Prepared
    teacher_files: list[StateFile]
    setting: Mapping
    heads: Mapping[str, Head]
    check: ScrambleCheck | None
    floor: float
    command: str
    readings: tuple[str, ...] = ("whole", "weighted", "sum")
    # the shipped learned head's weights on the states, which the teacher fitted on every file
    # should reproduce (None: not known)
    shipped: np.ndarray | None = None
    _teachers: dict = field(default_factory=dict, repr=False)
    _students: dict = field(default_factory=dict, repr=False)

    def teacher(self, without: str) -> Teacher:
        """The teacher fitted on every judged file outside the genre `without` ("": all)."""
        if without not in self._teachers:
            self._teachers[without] = fit_teacher(self.teacher_files, self.setting, without)
        return self._teachers[without]

    def student(self, without: str) -> Student:
        """The student of `teacher(without)`, taught on every text outside the genre `without`:
        each genre's outputs weigh the same, datasets the same within a genre, the corpus's
        sentences as much as one genre; of its readings (`readings`), the one that reproduces
        the teacher best on sets of texts left out (no human rating decides it)."""
        if without not in self._students:
            teacher = self.teacher(without)
            sets = [s for s in self.prepared.sets if not (without and s.genre == without)]
            per_genre: dict[str, int] = {}
            for s in sets:
                per_genre[s.genre] = per_genre.get(s.genre, 0) + 1
            targets = [teacher.scores(self.prepared.states[s.name]) for s in sets]
            weights = [1.0 / per_genre[s.genre] for s in sets]
            found = []
            for reading in self.readings:
                cols = [self.prepared.columns[s.name][reading] for s in sets]
                inputs = student_inputs(cols[0])
                found.append(fit_student(cols, targets, weights, inputs, reading=reading))
            self._students[without] = max(found, key=lambda s: s.fidelity)
        return self._students[without]

    def held_out(self, evidence: Evidence) -> tuple[dict, dict]:
        """({file: the student's held-out scores}, {file: its teacher's}): each file scored by
        the student and teacher that never saw its genre."""
        students, teachers = {}, {}
        for f in evidence.files:
            students[f.name] = self.student(f.genre).predict(f.columns)
            teachers[f.name] = self.teacher(f.genre).scores(self.prepared.states[f.name])
            if len(teachers[f.name]) != len(f.human):
                raise RuntimeError(f"{f.name}: the teacher's texts are not the judged ones")
        return students, teachers

    def decide(self, evidence: Evidence, head: tuple[str, tuple] | None) -> Decided | None:
        """The taught head of the unit `evidence` holds, decided against `head` ((reading,
        inputs) of the head it would replace; None: the card's head for the unit), its record
        kept in `evidence`."""
        files, by_genre, view = evidence.files, evidence.by_genre, evidence.view
        unit = "general" if by_genre else files[0].genre
        if not all(f.name in self.prepared.states for f in files):
            return None  # folds of one file, or files the texts were not prepared for
        bare, teachers = self.held_out(evidence)
        served = self.student("")
        weight = self.check.said_again_weight(served.head.predict) if self.check else 0.0
        head_served = served.head.with_weight(SAID_AGAIN, -weight) if weight else served.head
        preds = with_said_again(bare, files, -weight) if weight else bare
        checked = below(head_served, self.check) if self.check is not None else {}
        reading, inputs = current_setting(self.heads.get(unit) or self.heads["general"])
        if head is not None:
            reading, inputs = head
        singles = {k: c for k, c in evidence.singles.items() if c.reading == served.head.reading}
        best = best_single(singles) if singles else None
        comparisons = {
            MINUS_LENGTH: {f.name: f.baselines[MINUS_LENGTH] for f in files},
            CURRENT: evidence.held(reading, list(inputs)),
            TEACHER: teachers,
        }
        if best is not None:
            comparisons[best] = evidence.held(served.head.reading, list(singles[best].inputs))
        refs = {k: evidence.judge(v) for k, v in comparisons.items()}
        judgement = evidence.judge(preds)
        gap = view.gain(preds, comparisons[CURRENT]) if (view and by_genre) else None
        shares = dict(checked)
        share = shares.pop("shuffles", None)
        again = {k: shares.pop(k) for k in list(shares) if k in SAID_AGAIN_KINDS}
        ruling = ships(
            judgement,
            minus=refs[MINUS_LENGTH],
            best_input=None if best is None else (best, refs[best]),
            current=refs[CURRENT],
            system_gap=gap,
            scrambles=share,
            floor=self.floor,
            degenerate=shares or None,
            said_again=again or None,
            evidence={"minus the length" if k == MINUS_LENGTH else k: j for k, j in refs.items()},
        )
        others = {k: refs[k] for k in (MINUS_LENGTH, CURRENT, TEACHER)}

        def table_row(label, p):
            j = evidence.judge(p)
            system = view.figures(p).as_dict() if view else None
            mine = {k: wins(j, o) for k, o in others.items()}
            return row(label, j, evidence.interval(p), system=system, wins=mine)

        rows = [table_row("head", preds)]
        rows[0]["wins"]["files"] = len(files)
        for label, p in comparisons.items():
            if label == CURRENT:
                label = f"current head ({', '.join(inputs)}, {reading})"
            elif label == best:
                label = f"best single input: {label}"
            rows.append(table_row(label, p))
        held = "one genre out, over every genre" if by_genre else "one dataset of the genre out"
        n_inputs = len(served.head.read())
        entry = {
            "decision": (
                f"{'shipped' if ruling.ok else 'not shipped'}: a ridge on {n_inputs} of the "
                f"tier's columns, read {served.head.reading}, taught by the neural tier's "
                f"learned head; "
                f"{ruling.why}"
            ),
            "rule": "training.heads.selection.ship_rule.ships",
            "reading": served.head.reading,
            "inputs": list(served.head.inputs),
            "held_out": held,
            "table": rows,
            "taught": self.taught_entry(files),
            "follows_teacher": follows(bare, teachers),
            "system_level_skipped": dict(view.skipped) if view else {},
        }
        record_checks(entry, share, shares, again)
        if weight:
            entry["said_again"] = {
                "weight": round(weight, 6),
                "held_out": weight_cost(preds, bare, evidence),
            }
        found = Decided(entry, ruling.ok, None, ("taught",), {}, {})
        found.preds, found.current = preds, comparisons[CURRENT]
        found.refs, found.checks = refs, checked
        found.record = Candidate(
            served.head.reading,
            tuple(served.head.inputs),
            judgement,
            robust=share is None or share >= self.floor,
            system_gain=gap,
            name=TAUGHT,
        )
        evidence.add(found.record, preds)
        if ruling.ok:
            found.section = self.section(head_served, unit, held, entry)
        return found

    def taught_entry(self, files) -> dict[str, dict]:
        """What each held-out genre's student learned from and how closely it follows its
        teacher, and the served student's."""
        genres = sorted({f.genre for f in files})
        out = {}
        for g in [*genres, ""]:
            s = self.student(g)
            out[g or "served (every genre)"] = {
                "texts": s.n_texts,
                "reading": s.head.reading,
                "alpha": s.alpha,
                "fidelity_r2": round(s.fidelity, 4),
            }
        if self.shipped is not None:  # the teacher of every file against the shipped head
            mine = self.teacher("").head.coef
            r = float(np.corrcoef(mine, self.shipped)[0, 1])
            out["served (every genre)"]["teacher_vs_shipped_r"] = round(r, 4)
        return out

    def section(self, head: Head, unit: str, held: str, entry: Mapping) -> dict:
        served = self.student("")
        kinds = {}
        for s in self.prepared.sets:
            for k in s.kinds:
                key = "development output" if k == "output" else k
                kinds[key] = kinds.get(key, 0) + 1
        selection = {k: v for k, v in entry.items() if k != "table"}
        return head.to_section(
            unit,
            target="the neural tier's learned general head's score (the human score, "
            "z-normalised within each dataset, as it predicts it)",
            regressor=(
                f"a ridge (alpha {served.alpha:g} per 1,000 weighted texts) on the tier's "
                f"standardised columns, read {head.reading}, each clipped to the range of the "
                f"{served.n_texts} texts it learned from, fitted to the teacher's scores"
            ),
            taught={
                "teacher": dict(self.setting),
                "texts": kinds,
                "fidelity_r2": round(served.fidelity, 4),
            },
            held_out=held,
            selection=selection,
            files={f.name: len(f.human) for f in self.teacher_files},
            command=self.command,
        )


def follows(students: Mapping[str, np.ndarray], teachers: Mapping[str, np.ndarray]) -> dict:
    """How closely the students follow their teachers on the files they never saw: Spearman's
    rho of the two held-out scores in each file, and their mean over files."""
    from scipy.stats import spearmanr

    each = {k: round(float(spearmanr(students[k], teachers[k])[0]), 4) for k in students}
    return {"mean": round(sum(each.values()) / len(each), 4), "per_file": each}


def read_taught(scorer, args: argparse.Namespace, files: Sequence, command: str):
    """The taught candidates of a run of `scorer` (the default tier) on the judged `files`
    (`training.heads.data.files.read_head_files`, read with `args`), their scramble check
    still to be set: the texts prepared (`prepare`), the teacher's setting from the neural
    bundle's card."""
    from scorer import load_scorer
    from scorer.evidence.benchmark_run import judgement_files
    from scorer.heads import card_heads

    neural = load_scorer("neural")
    setting = card_heads(neural.card)["general"].get("states")
    if not setting:
        raise ValueError("the neural bundle's general head is not a learned head: no teacher")
    paths = judgement_files(args.dev, args.files)
    genres = {f.name: f.genre for f in files}
    prepared = prepare(scorer, neural, paths, genres, args)
    teacher_files = []
    for f in files:
        states = prepared.states[f.name]
        mine = prepared.columns[f.name]["whole"]["gleu"]
        if len(mine) != len(f.human) or not np.allclose(mine, f.columns["whole"]["gleu"]):
            raise RuntimeError(f"{f.name}: the texts prepared are not the judged ones")
        teacher_files.append(
            StateFile(
                f.name,
                f.genre,
                np.asarray(f.human, dtype=float),
                states.states[:, None, None, :],
                states.logprob,
                np.arange(len(f.human)),
            )
        )
    heads = {g: Head.from_section(s, label=f"head {g}") for g, s in card_heads(scorer.card).items()}
    from features.neural_states import STATE_NAMES

    shipped = Head.from_section(card_heads(neural.card)["general"])
    weights = np.array([shipped.weight(f"neural_states.v1/{n}") for n in STATE_NAMES])
    return TaughtCandidates(
        prepared, teacher_files, setting, heads, None, args.floor, command, shipped=weights
    )
