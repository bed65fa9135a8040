"""One chooser (`training.heads.selection.choose.choose`): the learned heads on SmolLM2's states
are decided on the linear candidates' evidence (`training.heads.selection.evidence`) against the
head the linear candidates give, through the same rule, their record kept in the evidence beside
theirs and their rows written by the same writer (`training.heads.report.tables.row`);
calibration's rounds hold the same record per candidate
(`training.heads.selection.ship_rule.Candidate`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from scorer.heads import Head
from training.heads.data.files import MINUS_LENGTH
from training.heads.data.judged import HeadFile
from training.heads.learned.candidates import LearnedCandidates
from training.heads.learned.choice import LOGPROB
from training.heads.learned.rows import StateFile
from training.heads.report.tables import row
from training.heads.selection.choose import choose
from training.heads.selection.evidence import gather
from training.heads.selection.ship_rule import Candidate
from training.heads.tier import choose_genre_heads

LAYERS, POOLINGS = (20,), ("mean",)  # the states extractor's layer and pooling
CURRENT = Head(("gleu", "x"), [0.5, 0.1], 0.0, "whole", None, label="head general")


def _files(n_files: int = 6, n: int = 120, seed: int = 0):
    """(judged files, their states): people follow one direction of the states; the GLEU score
    reads a part of it, `x` nothing; three genres of two datasets."""
    rng = np.random.default_rng(seed)
    direction = rng.normal(size=8)
    judged, states = [], []
    for k in range(n_files):
        st = rng.normal(size=(n, 1, 1, 8)).astype(np.float32)
        signal = st[:, 0, 0] @ direction
        human = signal + 0.8 * rng.normal(size=n) * signal.std()
        lp = -5.0 * rng.random(n) - 20 + 0.1 * signal
        genre = "abc"[k // 2]
        cols = {LOGPROB: lp, "gleu": 0.3 * signal + rng.normal(size=n), "x": rng.normal(size=n)}
        cols |= {f"neural_states.v1/h{i:03d}": st[:, 0, 0, i].astype(float) for i in range(8)}
        judged.append(
            HeadFile(
                f"f{k}",
                genre,
                human,
                [f"i{i // 4}" for i in range(n)],
                {"whole": cols},
                {MINUS_LENGTH: rng.normal(size=n)},
                [f"s{i % 6}" for i in range(n)],
            )
        )
        states.append(StateFile(f"f{k}", genre, human, st, lp, np.arange(n)))
    return judged, states


def _learned(judged, states, genres=("a",)) -> LearnedCandidates:
    heads = {"general": CURRENT}
    return LearnedCandidates(
        states, judged, LAYERS, POOLINGS, heads, None, genres, 0.95, "made here"
    )


@dataclass
class _Told:
    """Learned heads that record the evidence and the head they were decided against, and ship
    or not as told, with `preds` as their held-out scores (None: the people's scores, negated)."""

    ships: bool
    seen: list
    units: tuple = ("general", "a", "b", "c")

    def decide(self, evidence, head):
        files = evidence.files
        unit = "general" if evidence.by_genre else files[0].genre
        if unit not in self.units:
            return None
        self.seen.append((evidence, head))
        entry = {"decision": "told", "held_out": "its own", "reading": "r", "inputs": ["a"]}
        preds = {f.name: -f.human for f in files}
        return _Decided(self.ships, entry, {"genre": "x"} if self.ships else None, preds)


@dataclass
class _Decided:
    ships: bool
    entry: dict
    section: dict | None
    preds: dict


def test_a_learned_head_faces_the_linear_head_and_takes_its_place_only_where_it_ships():
    judged, _ = _files()
    linear = choose(judged, ["whole"], by_genre=True, n_samples=20)
    assert linear.ships and linear.won is None
    head = (linear.decision["reading"], tuple(linear.decision["inputs"]))
    # State columns are read by a learned head alone: never a linear candidate.
    assert not any(c.startswith("neural_states") for c in linear.decision["inputs"])
    for ships in (True, False):
        told = _Told(ships, [])
        choice = choose(judged, ["whole"], by_genre=True, n_samples=20, learned=told)
        [(evidence, seen)] = told.seen
        assert seen == head and evidence is choice.evidence  # the linear candidates' evidence
        if ships:
            assert choice.won is not None and choice.decision["decision"] == "told"
            assert choice.decision["also_tried"][0] == linear.decision
            assert choice.label == "a (r)"
            # The linear head it displaced is kept, for a genre head to fall back on.
            assert choice.linear[0] == linear.decision
            assert choice.linear[1] == evidence.preds(evidence.fitted)
        else:
            assert choice.won is None and choice.linear is None
            kept = {k: v for k, v in choice.decision.items() if k != "also_tried"}
            assert kept == linear.decision
            assert choice.decision["also_tried"][0]["decision"] == "told"


def test_without_linear_candidates_the_learned_head_alone_decides_against_the_cards_head():
    told = _Told(False, [])
    choice = choose(_files()[0][:2], (), learned=told)
    [(_, seen)] = told.seen
    assert seen is None
    assert choice.decision == {"ship": False, "decision": "told", "held_out": "its own",
                               "reading": "r", "inputs": ["a"]}  # fmt: skip


def test_the_learned_head_is_judged_on_the_chooser_evidence_and_kept_there_as_a_record():
    """What the learned head is judged against is held out once, on the evidence the linear
    candidates were chosen on; its record is a `Candidate` like theirs, its scores the
    evidence's."""
    judged, states = _files()
    choice = choose(
        judged, ["whole"], by_genre=True, n_samples=20, seed=3, learned=_learned(judged, states)
    )
    evidence, found = choice.evidence, choice.learned
    record = evidence.learned
    assert isinstance(record, Candidate) and record is found.record
    assert evidence.preds(record) == found.preds
    assert record.judgement == evidence.judge(found.preds)
    head = (choice.linear or (choice.decision, None))[0]
    # The head it faced: held out on the same evidence, once, not refitted again.
    assert found.current is evidence.held(head["reading"], head["inputs"])
    assert found.refs[MINUS_LENGTH] == evidence.minus
    assert found.entry["table"][0]["rho"] == round(record.judgement.rho, 4)


def test_a_genre_head_that_displaced_the_linear_head_and_loses_to_the_general_head_hands_back():
    """Where the learned genre head is not above the general head on its files, the linear head
    it displaced faces the general head in turn, the learned head's entry kept beside it."""
    judged, _ = _files()
    told = _Told(True, [], units=("a",))  # scores every text against the people: not above
    sections, report = choose_genre_heads(judged, ["whole"], n_samples=20, learned=told)
    linear, _ = choose_genre_heads(judged, ["whole"], n_samples=20)
    entry = report["a"]
    assert entry["also_tried"][0]["decision"] == "told"
    assert not entry["also_tried"][0]["against_general"]["ok"]
    if entry["against_general"]["ok"]:  # the linear head is above the general head: it ships
        assert sections["a"] == linear["a"]
    else:
        assert entry["decision"].startswith("shipped the general head")


def test_the_learned_heads_ship_through_the_one_chooser_with_rows_of_the_one_writer():
    judged, states = _files()
    learned = _learned(judged, states)
    alone = choose(judged, (), by_genre=True, n_samples=20, seed=3, learned=learned).learned
    assert alone.entry["rule"] == "training.heads.selection.ship_rule.ships"
    assert alone.ok and alone.section["states"]["layer"] == 20
    assert alone.entry["table"][3]["label"] == "current head (gleu, x, whole)"
    both = choose(judged, ["whole"], by_genre=True, n_samples=20, seed=3, learned=learned)
    assert both.won is not None and both.decision["ship"]
    linear = both.decision["also_tried"][0]
    # Decided against the head the linear candidates gave, not the card's.
    assert both.decision["table"][3]["label"] == (
        f"current head ({', '.join(linear['inputs'])}, {linear['reading']})"
    )
    # The head's row, linear or learned, is the one writer's, its keys in its order.
    keys = ["label", "rho", "tau", "rho_95", "tau_95", "per_file", "system", "wins"]
    assert list(both.decision["table"][0]) == list(linear["table"][0]) == keys
    assert list(row("x", alone_judgement(alone.entry), {"rho": (0, 1), "tau": (0, 1)},
                    system={}, wins={})) == keys  # fmt: skip


def alone_judgement(entry):
    """A `Judgement` of the figures a table row holds."""
    from training.heads.metrics.figures import Judgement

    head = entry["table"][0]
    return Judgement({k: tuple(v) for k, v in head["per_file"].items()}, head["rho"], head["tau"])


def test_a_genre_not_tried_gets_the_linear_head_and_tier_writes_the_learned_section():
    judged, states = _files()
    learned = _learned(judged, states, genres=("a",))
    sections, report = choose_genre_heads(
        judged, ["whole"], n_samples=20, seed=3, learned=learned, command="made here"
    )
    assert "states" in sections["general"] and "states" in sections["a"]
    assert "also_tried" not in report["b"]
    # b's linear head faced the learned general head's held-out scores on b's files.
    assert "against_general" in report["b"]
    if "states" in sections.get("b", {}):  # not above it: the general head serves b
        assert report["b"]["decision"].startswith("shipped the general head")
        assert sections["b"] == {**sections["general"], "genre": "b"}
    # The learned genre head faced the learned general head on its files, both held out.
    against = report["a"]["against_general"]
    assert against["head"]["rho"] == report["a"]["table"][0]["rho"]
    assert set(against["general"]) == {"rho", "tau", "systems"}


def test_a_learned_head_that_wins_hands_the_chooser_its_held_out_scores():
    from training.heads.learned.candidates import with_said_again
    from training.heads.metrics.figures import judge

    judged, states = _files()
    choice = choose(
        judged, ["whole"], by_genre=True, n_samples=20, seed=3, learned=_learned(judged, states)
    )
    assert choice.won is not None and choice.preds is choice.won.preds
    assert set(choice.preds) == {f.name for f in judged}
    held = judge(choice.preds, judged, True)
    assert round(held.rho, 4) == choice.decision["table"][0]["rho"]
    # As served, a weight on what is said again moves each text by the weight x its share.
    f = judged[0]
    f.columns["whole"]["reading/said_again"] = np.linspace(0, 1, len(f.human))
    moved = with_said_again(choice.preds, judged[:1], -0.5)
    assert moved[f.name] == pytest.approx(
        choice.preds[f.name] - 0.5 * np.linspace(0, 1, len(f.human))
    )


def test_calibrations_rounds_hold_the_record_every_head_is_chosen_on():
    from training.calibration.switch import evidence
    from training.heads.metrics.draws import criteria
    from training.heads.selection.ship_rule import Candidate

    judged, _ = _files(2)
    f = judged[0]
    start = {f.name: f.columns["whole"]["x"]}
    others = {"gleu": {f.name: f.columns["whole"]["gleu"]}, "minus": {f.name: -f.human}}
    ev = evidence(start, others, [f], n_samples=50)
    assert all(isinstance(c, Candidate) for c in (ev.in_hand, *ev.candidates))
    assert ev.labels == ("gleu", "minus")
    point, _ = criteria([start, *others.values()], [f])
    assert ev.start == point[0] and list(ev.point) == list(point[1:])  # to the bit
    assert set(ev.candidates[0].judgement.per_file) == {f.name}
    assert ev.row(1)["criterion"] == pytest.approx(point[2], abs=1e-4)


def test_a_setting_that_fails_the_checks_is_no_candidate_and_a_failing_current_head_no_bar():
    """`evaluate` chooses among the settings whose head scores real sentences above their
    shuffles, runs and loops; a learned current head that fails them is not kept for them."""
    from training.heads.learned.choice import evaluate

    judged, states = _files()

    def checks(key):  # every head above 1,000 scores runs above their sentences
        return {"shuffles": 1.0, "run": 0.5 if key[3] > 1000 else 1.0}

    evidence = gather(judged, None, {}, by_genre=True, n_samples=20, seed=3)

    def run(current):
        return evaluate(
            states,
            judged,
            True,
            (LAYERS, POOLINGS),
            current,
            evidence=evidence,
            scrambles=checks,
            floor=0.95,
        )

    free = evaluate(
        states, judged, True, (LAYERS, POOLINGS), ("whole", ["gleu", "x"]), evidence=evidence
    )
    assert free["chosen"][3] > 1000  # unchecked, the one-standard-error rule takes a strong one
    found = run(("whole", ["gleu", "x"]))
    assert found["chosen"][3] <= 1000 and "states, alpha 3000" in found["how"]["failed the checks"]
    assert found["entry"]["runs and loops"]["run"] == 1.0
    weak = run(("states", [20, "mean", "states", 30000.0]))
    assert (
        "the current head fails the checks (100.0% of shuffles, 50.0% of runs): no bar"
        in (weak["entry"]["decision"])
    )
    assert "not above the current head" not in weak["entry"]["decision"]
