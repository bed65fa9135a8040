"""Choosing a head: held-out figures, few inputs, each input's own sign, never below an input."""

from __future__ import annotations

import json

import numpy as np
import pytest

from scorer.bundle import sha256_file
from scorer.evidence.agreement import per_group_kendall
from scorer.evidence.benchmark_data import sample_outputs
from scorer.heads_report import REPORT_FILE, REPORT_POINTER, read_heads_report
from training.heads.data.files import CHRF
from training.heads.data.judged import HeadFile
from training.heads.estimators.select import fit_head, forward_select, held_out
from training.heads.metrics.figures import group_taus, judge
from training.heads.report.cards import write_card
from training.heads.tier import choose_genre_heads, section


def _file(
    name, genre, rng, n_groups=60, per=5, *, flip_x3=False, weights=(1.0, 0.5), systems=False
):
    """A dataset whose people follow x1 and, less, x2; x3 is noise (or, flipped, reads the
    other way on this dataset); x4 tracks x1 closely."""
    n = n_groups * per
    x1, x2, x3 = rng.normal(size=n), rng.normal(size=n), rng.normal(size=n)
    x4 = x1 + 0.3 * rng.normal(size=n)
    human = weights[0] * x1 + weights[1] * x2 + 0.7 * rng.normal(size=n)
    if flip_x3:
        human = human - 0.8 * x3
    cols = {"gleu": x1, "x2": x2, "x3": x3, "x4": x4}
    return HeadFile(
        name,
        genre,
        human,
        [f"g{i // per}" for i in range(n)],
        {
            "whole": dict(cols),
            "weighted": {k: v + 0.5 * rng.normal(size=n) for k, v in cols.items()},
        },
        {"minus length": rng.normal(size=n)},
        [f"s{i % per}" for i in range(n)] if systems else [],
    )


def test_group_taus_are_kendalls_tau_b_within_each_input():
    rng = np.random.default_rng(0)
    f = _file("a", "g", rng, n_groups=30, per=6)
    pred = rng.normal(size=len(f.human))
    f.human[:6] = 1.0  # one group people rated all alike: skipped, as per_group_kendall does
    f.human[6:9] = 2.0  # human ties inside a group: tau-b's correction
    taus = group_taus(pred, f)
    ref = per_group_kendall(pred, f.human, f.groups)
    assert np.nanmean(taus) == pytest.approx(ref.mean_tau, abs=1e-12)
    assert int(np.isnan(taus).sum()) == ref.n_skipped


def test_a_tied_prediction_is_judged_as_its_ties_broken_at_random():
    from scipy.stats import kendalltau

    rng = np.random.default_rng(10)
    f = _file("a", "g", rng, n_groups=1, per=12)
    pred = np.array([0, 0, 0, 0, 0, 0, 1, 1, 1, 2, 2, 2], dtype=float)
    draws = [kendalltau(pred + 1e-6 * rng.random(12), f.human).statistic for _ in range(20000)]
    assert group_taus(pred, f)[0] == pytest.approx(np.mean(draws), abs=0.01)
    assert kendalltau(pred, f.human).statistic != pytest.approx(np.mean(draws), abs=0.01)
    assert group_taus(np.zeros(12), f)[0] == 0.0


def test_forward_selection_starts_from_the_best_input_and_adds_only_what_holds_out():
    rng = np.random.default_rng(1)
    files = [_file(f"d{k}", "g", rng) for k in range(3)]
    sel = forward_select(files, "whole", ["gleu", "x2", "x3", "x4"], by_genre=False)
    assert sel.steps[0].inputs == ("gleu",)
    assert sel.inputs[:2] == ("gleu", "x2")
    assert "x3" not in sel.inputs
    low, _ = sel.steps[1].gain_interval
    assert low > 0
    assert sel.judgement.rho > sel.singles["gleu"].rho


def test_a_fitted_head_keeps_each_inputs_own_sign():
    """x4 tracks x1; people follow x1 alone, so an unconstrained fit would weigh x4 against
    x1's noise. Each weight keeps the sign of its input's own correlation (both positive)."""
    rng = np.random.default_rng(2)
    n = 2000
    x1 = rng.normal(size=n)
    x4 = x1 + 0.1 * rng.normal(size=n)
    human = 3 * x1 - 2 * x4 + 0.1 * rng.normal(size=n)  # alone, both correlate positively
    f = HeadFile("d", "g", human, [str(i) for i in range(n)], {"whole": {"gleu": x1, "x4": x4}})
    assert np.corrcoef(x4, human)[0, 1] > 0
    head = fit_head([f], "whole", ["gleu", "x4"])
    assert (head.coef >= 0).all()
    from sklearn.linear_model import LinearRegression

    free = LinearRegression().fit(np.column_stack([x1, x4]), human)
    assert free.coef_[1] < 0  # what the constraint prevents


def test_held_out_signs_come_from_the_training_datasets_only():
    """x3 reads one way on three datasets and the other way on the fourth: held out, the fourth
    is scored with the sign the other three give, so its rho is negative, not flattered."""
    rng = np.random.default_rng(3)
    files = [_file(f"d{k}", "g", rng) for k in range(3)] + [_file("d3", "g", rng, flip_x3=True)]
    for f in files[:3]:
        f.human = f.human + 0.8 * f.columns["whole"]["x3"]
    preds = held_out(files, "whole", ["x3"], by_genre=False)
    j = judge(preds, files, by_genre=False)
    assert j.per_file["d3"][0] < 0 < j.per_file["d0"][0]


def test_genre_heads_ship_only_where_they_beat_length_and_the_best_input():
    rng = np.random.default_rng(4)
    files = [_file(f"a{k}", "alpha", rng) for k in range(3)]
    files += [_file(f"b{k}", "beta", rng, weights=(0.8, 0.6)) for k in range(2)]
    files += [_file("c0", "gamma", rng)]
    sections, report = choose_genre_heads(files, ["whole", "weighted"], n_samples=100)
    assert report["gamma"]["ship"] is False and "one dataset" in report["gamma"]["decision"]
    assert set(sections) == {"general", "alpha", "beta"}
    for name, s in sections.items():
        table = report[name]["table"]
        head, minus, best = table[0], table[1], table[2]
        assert head["rho"] > minus["rho"] and head["tau"] > minus["tau"]
        assert head["rho"] >= best["rho"] or head["tau"] >= best["tau"]
        assert s["inputs"][0] == "gleu" and len(s["linear"]["coef"]) == len(s["inputs"])
        for c, w in zip(s["inputs"], s["linear"]["coef"], strict=True):
            if w:
                assert np.sign(w) == np.sign(s["alone"][c]), (name, c)


def test_no_head_ships_when_length_does_as_well():
    rng = np.random.default_rng(5)
    files = [_file(f"a{k}", "alpha", rng) for k in range(3)]
    for f in files:
        f.baselines["minus length"] = f.human + 0.01 * rng.normal(size=len(f.human))
    sections, report = choose_genre_heads(files, ["whole"], n_samples=50)
    assert "alpha" not in sections
    assert "minus length" in report["alpha"]["decision"]


def test_a_head_section_caps_inputs_only_where_they_raise_the_score():
    rng = np.random.default_rng(6)
    files = [_file(f"d{k}", "g", rng) for k in range(2)]
    for f in files:
        f.columns["whole"]["x3"] = -f.columns["whole"]["x2"]
    head = fit_head(files, "whole", ["gleu", "x3"])
    s = section(head, files, {}, genre="g", held="", command="")
    assert s["inputs"] == ["gleu", "x3"]
    assert s["linear"]["coef"][1] < 0
    assert s["clip"]["low"][1] is not None and s["clip"]["high"][1] is None
    assert s["clip"]["low"][0] is None and s["clip"]["high"][0] is None


def test_outputs_are_sampled_by_whole_inputs():
    groups = [f"g{i // 4}" for i in range(400)]
    keep = sample_outputs(groups, 100, seed=1)
    kept = [groups[i] for i in keep]
    assert 100 <= len(keep) < 104
    assert all(kept.count(g) == 4 for g in set(kept))
    assert list(keep) == sorted(keep)
    assert len(sample_outputs(groups, 0, seed=1)) == 400


def test_outputs_are_sampled_up_to_a_number_of_words():
    groups = [f"g{i // 2}" for i in range(100)]
    keep = sample_outputs(groups, 0, seed=1, n_words=[10] * 100, max_words=200)
    assert 20 <= len(keep) <= 22 and len(keep) % 2 == 0


def test_a_head_that_reads_shuffles_as_real_text_is_never_chosen():
    """x2 agrees with people best, but scores a shuffle as high as its sentence (as the share
    of repeated bigrams does): the head starts from gleu instead, and the report says x2 fails."""
    from training.heads.data.checks import ScrambleCheck
    from training.heads.estimators.select import select_head

    rng = np.random.default_rng(7)
    files = [_file(f"d{k}", "g", rng, weights=(0.5, 1.0)) for k in range(3)]
    n = 100
    real = {
        "whole": {"gleu": np.ones(n), "x2": np.zeros(n), "x3": rng.normal(size=n), "x4": np.ones(n)}
    }
    shuffled = {
        "whole": {
            "gleu": np.zeros(n),
            "x2": np.zeros(n),
            "x3": rng.normal(size=n),
            "x4": np.zeros(n),
        }
    }
    check = ScrambleCheck(real, shuffled, floor=0.95)
    free, _ = select_head(files, ["whole"], {"whole": ["gleu", "x2", "x3", "x4"]}, by_genre=False)
    assert free.inputs[0] == "x2"
    sel, by_reading = select_head(
        files, ["whole"], {"whole": ["gleu", "x2", "x3", "x4"]}, by_genre=False, check=check
    )
    assert sel.inputs[0] in ("gleu", "x4")
    assert by_reading["whole"].scrambles[("x2",)] == 0.5
    assert all(
        by_reading["whole"].scrambles[tuple(sel.inputs[: k + 1])] >= 0.95
        for k in range(len(sel.inputs))
    )


def test_a_head_above_on_both_means_ships_though_it_wins_on_few_files_which_it_shows():
    """People follow x1 everywhere; on d0 and d1 they follow x2 as much, on the other three a
    little. Adding x2 lifts the held-out means through d0 and d1 and costs the other three: the
    fitted head beats x1 on both means but on two files of five. Per-file wins are evidence,
    not a veto: the fitted head ships and its decision says on how many files it won."""
    rng = np.random.default_rng(11)
    files = [_file(f"d{k}", "g", rng, weights=(1.0, 1.5)) for k in (0, 1)]
    files += [_file(f"d{k}", "g", rng, weights=(1.0, 0.3)) for k in (2, 3, 4)]
    sections, report = choose_genre_heads(files, ["whole"], n_samples=100)
    r = report["g"]
    assert "evidence, not a veto" in r["decision"] and "2 of 5" in r["decision"], r["decision"]
    assert r["inputs"] == ["gleu", "x2"] and sections["g"]["inputs"][:2] == ["gleu", "x2"]
    assert r["table"][0]["wins"]["files"] == 5


def test_every_head_is_judged_per_system_where_files_have_six_systems():
    rng = np.random.default_rng(12)
    files = [_file(f"a{k}", "alpha", rng, per=6, systems=True) for k in range(3)]
    files += [_file("b0", "beta", rng, per=6, systems=True), _file("b1", "beta", rng)]
    for f in files[:3]:  # references on the alpha files: chrF is judged beside the head there
        f.baselines[CHRF] = f.human + rng.normal(scale=2.0, size=len(f.human))
    _, report = choose_genre_heads(files, ["whole"], n_samples=60)
    labels = [row["label"] for row in report["alpha"]["table"]]
    assert labels[:3] == ["head", "minus length", CHRF]
    assert report["alpha"]["table"][2]["system"]["accuracy"] is not None
    assert any(
        x.startswith(f"{CHRF}, 3 of 5 files")
        for x in (r["label"] for r in report["general"]["table"])
    )
    for name in ("general", "alpha"):
        table = [r for r in report[name]["table"] if not r["label"].startswith(CHRF)]
        for row in table[:3]:
            sys_ = row["system"]
            assert 0 <= sys_["accuracy"] <= 1 and -1 <= sys_["rho"] <= 1
            assert set(sys_["per_file"]) <= {f.name for f in files}
            low, high = sys_["accuracy_95"]
            assert low <= high
        assert "system" in table[-1] and "accuracy_95" not in table[-1]["system"]
    assert report["general"]["system_level_skipped"] == {"b1": "its outputs name no system"}
    wins = report["alpha"]["table"][0]["wins"]
    assert wins["files"] == 3 and 0 <= wins["minus length"] <= 3


def test_the_card_is_written_lean_and_the_tables_beside_it(tmp_path):
    """`write_card` puts each head in the card with its decision and own held-out row, and the
    full tables in heads_report.json (hash in the card, tables in the README); a later write
    given entries read from the lean card (as `fluency calibrate` gives them) keeps their
    tables from that file."""
    rng = np.random.default_rng(4)
    files = [_file(f"a{k}", "alpha", rng) for k in range(3)]
    files += [_file(f"b{k}", "beta", rng, weights=(0.8, 0.6)) for k in range(2)]
    sections, report = choose_genre_heads(files, ["whole"], n_samples=50)
    assert {"general", "alpha"} <= set(sections)
    (tmp_path / "card.json").write_text(json.dumps({"name": "t", "features": ["x.v1"]}))
    write_card(tmp_path, sections, report)

    card = json.loads((tmp_path / "card.json").read_text())
    assert card[REPORT_POINTER] == {
        "file": REPORT_FILE,
        "sha256": sha256_file(tmp_path / REPORT_FILE),
    }
    written = read_heads_report(tmp_path, card)
    assert set(written) == set(report)
    for name, entry in report.items():
        assert written[name]["table"] == entry["table"], name
        assert card["heads_report"][name]["decision"] == entry["decision"]
        assert card["heads_report"][name]["head"] == entry["table"][0]
        assert "table" not in card["heads_report"][name]
    for head in card["heads"].values():
        assert "table" not in head["selection"] and head["selection"]["steps"]
    assert "| best single input: " in (tmp_path / "README.md").read_text()

    # Another head written beside them from the lean card: the others keep their tables.
    gamma = {**report["beta"], "decision": "shipped: as beta"}
    write_card(tmp_path, {**card["heads"]}, {**card["heads_report"], "gamma": gamma})
    card = json.loads((tmp_path / "card.json").read_text())
    again = read_heads_report(tmp_path, card)
    assert {k: v["table"] for k, v in again.items()} == {
        **{k: v["table"] for k, v in report.items()},
        "gamma": report["beta"]["table"],
    }
    assert again["gamma"]["decision"] == "shipped: as beta"


def test_a_genre_head_not_above_the_general_head_on_its_files_is_the_general_head():
    from training.heads.tier import against_general

    rng = np.random.default_rng(5)
    files = [_file(n, "g", rng, systems=True) for n in ("a", "b")]
    truth = {f.name: f.human + 0.3 * rng.normal(size=len(f.human)) for f in files}
    noise = {f.name: rng.normal(size=len(f.human)) for f in files}
    worse, figures = against_general(noise, truth, files, 100, 1)
    assert not worse.ok and "current head" in worse.failed
    assert figures["ok"] is False and figures["general"]["rho"] > figures["head"]["rho"]
    assert set(figures["head"]) == {"rho", "tau", "systems"}
    better, figures = against_general(truth, noise, files, 100, 1)
    assert better.ok and figures["ok"] and figures["why"] == better.why


def _reported(preds, files, view_files):
    """A heads report entry for a general head whose held-out scores were `preds`."""
    from training.heads.metrics.systems import system_view
    from training.heads.selection.choose import figures

    view = system_view(view_files, False, n_samples=50, seed=1)
    j = judge(preds, files, False)
    row = {"label": "head", "per_file": {n: list(v) for n, v in j.per_file.items()}}
    if view.draws:
        row["system"] = {"per_file": {n: list(v) for n, v in view.point(preds).per_file.items()}}
    assert figures(preds, files, False, view)["rho"] == round(j.rho, 4)
    return {"table": [row]}


def _alpha_alone(files, general_preds):
    """Genre "alpha" decided alone, facing a general head reported with `general_preds`."""
    reported = _reported(general_preds, files, files)
    return choose_genre_heads(
        files, ["whole"], n_samples=100, only=["alpha"], general_reported=reported
    )


def test_a_genre_decided_alone_faces_the_general_head_held_out_as_reported():
    """With the general head not decided again, the figures its heads report holds (held out
    one genre out) stand for it: a genre head not above them on the genre's files is not
    shipped, and the report gives both heads' figures; one above them ships."""
    rng = np.random.default_rng(6)
    files = [_file(f"a{k}", "alpha", rng, per=6, systems=True) for k in range(3)]
    truth = {f.name: f.human + 0.1 * rng.normal(size=len(f.human)) for f in files}
    sections, report = _alpha_alone(files, truth)
    assert "alpha" not in sections and report["alpha"]["ship"] is False
    assert report["alpha"]["decision"].startswith("not shipped: not above the general head")
    figures = report["alpha"]["against_general"]
    assert figures["ok"] is False and figures["general"]["rho"] > figures["head"]["rho"]
    assert figures["general"]["systems"] > figures["head"]["systems"]
    noise = {f.name: rng.normal(size=len(f.human)) for f in files}
    sections, report = _alpha_alone(files, noise)
    assert "alpha" in sections and report["alpha"]["against_general"]["ok"] is True


def test_a_genre_decided_alone_that_loses_is_served_by_the_cards_general_head():
    """A genre head not above the general head, decided alone, gets the card's general head
    as its own (a request naming the genre keeps a head), its genre said, its weights as the
    general head's."""
    from scorer.heads import Head

    rng = np.random.default_rng(6)
    files = [_file(f"a{k}", "alpha", rng, per=6, systems=True) for k in range(3)]
    truth = {f.name: f.human + 0.1 * rng.normal(size=len(f.human)) for f in files}
    general = Head(("gleu",), [0.7], -0.1, "weighted").to_section("general", held_out="x")
    sections, report = choose_genre_heads(
        files,
        ["whole"],
        n_samples=100,
        only=["alpha"],
        general_reported=_reported(truth, files, files),
        general_section=general,
    )
    assert report["alpha"]["decision"].startswith("shipped the general head: its own head")
    assert report["alpha"]["against_general"]["ok"] is False
    served = Head.from_section(sections["alpha"])
    assert served.about["genre"] == "alpha" and served.about["held_out"] == "x"
    assert served.inputs == ("gleu",) and list(served.coef) == [0.7]
    assert served.intercept == -0.1 and served.reading == "weighted"


def test_a_reported_general_head_better_per_text_but_worse_per_system_is_gated_per_system():
    """The reported figures gate per system too: a genre head above the general head per text
    but below it on the systems' order is not shipped."""
    from training.heads.tier import against_general

    rng = np.random.default_rng(7)
    files = [_file(n, "g", rng, per=6, systems=True) for n in ("a", "b")]
    truth = {f.name: f.human + 2.0 * rng.normal(size=len(f.human)) for f in files}
    entry = _reported(truth, files, files)
    for name in entry["table"][0]["per_file"]:
        entry["table"][0]["per_file"][name] = [-0.5, -0.5]
    ruling, found = against_general(truth, entry, files, 50, 1)
    assert ruling.ok and found["general"]["rho"] == -0.5
    for name in entry["table"][0]["system"]["per_file"]:
        entry["table"][0]["system"]["per_file"][name] = [1.0, 1.0]
    ruling, found = against_general(truth, entry, files, 50, 1)
    assert not ruling.ok and "systems" in ruling.failed
