"""The taught heads in the one chooser (`training.heads.taught.candidates`): each file scored by a
student taught by a teacher that never saw its genre, on texts outside it; judged on the
chooser's evidence against the head it would replace, minus the length, its best single input
and its teacher; written as an ordinary linear head read whole."""

from __future__ import annotations

import numpy as np

from scorer.heads import Head
from training.heads.data.files import MINUS_LENGTH
from training.heads.data.judged import HeadFile
from training.heads.learned.rows import StateFile
from training.heads.selection.choose import choose
from training.heads.taught.candidates import TAUGHT, TaughtCandidates
from training.heads.taught.prepare import Prepared
from training.heads.taught.teacher import SetStates, fit_teacher
from training.heads.taught.texts import TextSet

SETTING = {"layer": 20, "pooling": "mean", "variant": "states", "alpha": 30.0}
CURRENT = Head(("gleu", "x"), [0.5, 0.1], 0.0, "whole", None, label="head general")


def _case(seed: int = 0, n: int = 120, corpus: int = 400):
    """Six judged files of three genres whose people follow one direction of the states; the
    columns `gleu` and `y` read whole read parts of it, `x` nothing, and every column read
    `sum` nothing; a corpus of unrated texts besides."""
    rng = np.random.default_rng(seed)
    direction = rng.normal(size=8)

    def texts(m):
        st = rng.normal(size=(m, 8))
        signal = st @ direction
        cols = {
            "gleu": 0.5 * signal + rng.normal(size=m),
            "x": rng.normal(size=m),
            "y": 0.5 * signal + rng.normal(size=m),
        }
        noise = {k: rng.normal(size=m) for k in cols}
        return st, signal, {"whole": cols, "sum": noise}

    judged, states, sets, columns = [], {}, [], {}
    for k in range(6):
        st, signal, cols = texts(n)
        human = signal + 0.8 * rng.normal(size=n) * signal.std()
        name, genre = f"f{k}", "abc"[k // 2]
        judged.append(
            HeadFile(
                name,
                genre,
                human,
                [f"i{i // 4}" for i in range(n)],
                cols,
                {MINUS_LENGTH: rng.normal(size=n)},
                [f"s{i % 6}" for i in range(n)],
            )
        )
        states[name] = SetStates(st.astype(np.float32), rng.normal(size=n))
        sets.append(TextSet(name, genre, tuple(f"{name} {i}" for i in range(n)), ("output",) * n))
        columns[name] = cols
    st, _, cols = texts(corpus)
    states["corpus"] = SetStates(st.astype(np.float32), rng.normal(size=corpus))
    sets.append(TextSet("corpus", "", tuple(f"c {i}" for i in range(corpus)), ("real",) * corpus))
    columns["corpus"] = cols
    teacher_files = [
        StateFile(f.name, f.genre, f.human, st3, states[f.name].logprob, np.arange(n))
        for f in judged
        for st3 in [states[f.name].states[:, None, None, :]]
    ]
    taught = TaughtCandidates(
        Prepared(sets, states, columns),
        teacher_files,
        SETTING,
        {"general": CURRENT},
        None,
        0.95,
        "made here",
        readings=("whole", "sum"),
    )
    return judged, taught


def test_each_file_is_scored_by_a_student_and_teacher_that_never_saw_its_genre():
    judged, taught = _case()
    teacher = taught.teacher("a")
    direct = fit_teacher(taught.teacher_files[2:], SETTING)  # the files of genres b and c
    np.testing.assert_allclose(teacher.head.coef, direct.head.coef)
    # The student of genre a learns from the texts of b, c and the corpus alone.
    assert taught.student("a").n_texts == 4 * 120 + 400
    assert taught.student("").n_texts == 6 * 120 + 400
    choice = choose(judged, ["whole"], by_genre=True, n_samples=20, learned=taught)
    found = choice.learned
    for f in judged:
        student = taught.student(f.genre)
        np.testing.assert_allclose(found.preds[f.name], student.predict(f.columns))
        assert student.head.reading == "whole"  # the reading that follows its teacher
    # The student reads the columns: it follows its teacher on the files it never saw.
    teacher = found.refs["teacher (neural learned head)"]
    assert found.record.judgement.rho > 0.5 * teacher.rho > 0
    follows = found.entry["follows_teacher"]
    assert set(follows["per_file"]) == {f.name for f in judged} and follows["mean"] > 0.3


def test_it_is_judged_on_the_chooser_evidence_and_kept_there_as_a_record():
    judged, taught = _case(1)
    choice = choose(judged, ["whole"], by_genre=True, n_samples=20, seed=3, learned=taught)
    evidence, found = choice.evidence, choice.learned
    assert evidence.learned is found.record and found.record.name == TAUGHT
    assert evidence.preds(found.record) == found.preds
    assert found.refs[MINUS_LENGTH] == evidence.minus
    head = (choice.linear or (choice.decision, None))[0]
    assert found.current is evidence.held(head["reading"], head["inputs"])
    labels = [r["label"] for r in found.entry["table"]]
    assert labels[0] == "head" and "teacher (neural learned head)" in labels
    assert any(label.startswith("best single input: ") for label in labels)
    assert found.entry["rule"] == "training.heads.selection.ship_rule.ships"
    assert set(found.entry["taught"]) == {"a", "b", "c", "served (every genre)"}


def test_it_says_how_closely_its_teacher_reproduces_the_shipped_learned_head():
    judged, taught = _case(1)
    fitted = fit_teacher(taught.teacher_files, SETTING).head.coef
    taught.shipped = fitted + 0.01 * np.random.default_rng(0).normal(size=len(fitted))
    found = choose(judged, (), by_genre=True, n_samples=20, learned=taught).learned
    r = found.entry["taught"]["served (every genre)"]["teacher_vs_shipped_r"]
    assert 0.99 < r < 1.0


def test_where_it_ships_it_is_written_as_a_linear_head_read_whole():
    judged, taught = _case(2)
    found = choose(judged, (), by_genre=True, n_samples=20, seed=3, learned=taught).learned
    assert found.ok, found.entry["decision"]
    head = Head.from_section(found.section)
    assert head.reading == "whole" and found.section["genre"] == "general"
    np.testing.assert_allclose(
        head.predict(judged[0].columns), taught.student("").predict(judged[0].columns)
    )
    assert found.section["taught"]["teacher"] == SETTING


def test_the_report_gives_its_table_and_where_it_lands_between_its_bar_and_its_teacher():
    from training.heads.taught.report import TEACHER, landing, taught_entries, unit_table
    from training.heads.tier import choose_genre_heads

    judged, taught = _case(2)
    _, report = choose_genre_heads(judged, ["whole"], n_samples=20, seed=3, learned=taught)
    entries = taught_entries(report)
    assert set(entries) == {"general", "a", "b", "c"}
    rows = {r["label"]: r for r in entries["general"]["table"]}
    current = next(r for k, r in rows.items() if k.startswith("current head"))
    want = (rows["head"]["rho"] - current["rho"]) / (rows[TEACHER]["rho"] - current["rho"])
    assert landing(entries["general"])["rho"] == round(want, 2)
    lines = unit_table("general", entries["general"])
    assert lines[0].startswith("**general** (one genre out") and "| head |" in lines[4]
