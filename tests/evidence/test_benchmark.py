"""`fluency benchmark`'s protocol on tiny judgement files written in the test, with a stub model
whose one extractor is arithmetic on the words spaCy finds (rows from `features.rows`, as every
model's): statistics, directions, the bootstrap, what is left out, the row cache and the report."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from features import registry
from features.resources import Resources
from features.rows import FeatureRows
from scorer.evidence.agreement import pairwise_accuracy
from scorer.evidence.benchmark import FileColumns, Pairs, agreement, group_bootstrap, loo_signs
from scorer.evidence.benchmark_data import is_empty_output, read_judged
from scorer.evidence.benchmark_report import aggregate_table, markdown
from scorer.evidence.benchmark_run import as_dict, judgement_files, run_benchmark


def test_per_group_tau_and_pairwise_accuracy_match_scipy_and_agreement():
    rng = np.random.default_rng(3)
    groups = np.repeat(np.arange(12), 5).tolist()
    human = rng.integers(1, 4, 60).astype(float)
    x = np.round(rng.normal(size=60), 1)
    pairs = Pairs(human, groups)
    taus = pairs.group_taus(x)
    for g in range(12):
        idx = np.flatnonzero(np.array(groups) == g)
        if np.ptp(human[idx]) == 0:
            assert np.isnan(taus[g])
        else:
            assert taus[g] == pytest.approx(stats.kendalltau(x[idx], human[idx]).statistic)
    acc, n = pairs.accuracy(x)
    assert (acc, n) == pytest.approx(pairwise_accuracy(x, human, groups))


def test_a_column_constant_inside_a_group_scores_tau_zero_there_not_skipped():
    human = np.array([1.0, 2.0, 3.0, 1.0, 2.0, 3.0])
    groups = ["a"] * 3 + ["b"] * 3
    x = np.array([1.0, 2.0, 3.0, 5.0, 5.0, 5.0])
    a = agreement(x, human, Pairs(human, groups))
    assert a.kendall == pytest.approx(0.5)  # (1 + 0) / 2 over both groups
    assert a.n_groups == 2


def test_singleton_groups_give_no_kendall_and_resample_outputs():
    human = np.arange(10, dtype=float)
    pairs = Pairs(human, [str(i) for i in range(10)])
    a = agreement(human, human, pairs)
    assert np.isnan(a.kendall) and np.isnan(a.pairwise) and a.spearman == pytest.approx(1)
    d = group_bootstrap(human, {"rev": -human}, human, pairs, n_samples=200, seed=1)
    assert d["spearman"]["rev"].unit == "outputs" and d["kendall"] == {}
    assert d["spearman"]["rev"].difference == pytest.approx(2.0)


def test_bootstrap_is_seeded_paired_and_zero_for_a_copy():
    rng = np.random.default_rng(0)
    human = rng.normal(size=80)
    groups = np.repeat(np.arange(20), 4).tolist()
    model = human + rng.normal(scale=0.5, size=80)
    base = human + rng.normal(scale=2.0, size=80)
    pairs = Pairs(human, groups)
    one = group_bootstrap(model, {"copy": model, "b": base}, human, pairs, n_samples=300, seed=5)
    two = group_bootstrap(model, {"copy": model, "b": base}, human, pairs, n_samples=300, seed=5)
    assert one == two
    copy = one["spearman"]["copy"]
    assert (copy.difference, copy.ci_low, copy.ci_high) == (0.0, 0.0, 0.0)
    assert one["spearman"]["b"].ci_low > 0 and one["kendall"]["b"].unit == "inputs"


def _file(name, feature_sign, rng):
    human = rng.normal(size=40)
    return FileColumns(
        name,
        human,
        np.repeat(np.arange(10), 4).tolist(),
        {"m": human},
        {},
        {"f": feature_sign * human + rng.normal(size=40), "const": np.ones(40)},
    )


def test_feature_direction_comes_from_the_other_files_only():
    rng = np.random.default_rng(1)
    files = [_file(name, sign, rng) for name, sign in zip("abcd", (-1, -1, -1, 1), strict=True)]
    signs = loo_signs(files)
    # d agrees positively on itself, yet is scored in the direction the other three give
    assert [signs[name]["f"] for name in "abcd"] == [-1, -1, -1, -1]
    assert "const" not in signs["a"]  # never varies: no direction anywhere
    assert loo_signs(files[:1]) == {"a": {}}


@pytest.mark.parametrize(
    ("text", "empty"),
    [("", True), ("  ", True), ("null", True), (" NULL ", True), ("None", True)],
)
def test_empty_and_null_outputs(text, empty):
    assert is_empty_output(text) is empty


def test_real_text_is_never_taken_for_empty():
    assert not is_empty_output("none of them")
    assert not is_empty_output("Null Island is a point.")


def _toy(sentences, resources):
    """Word count minus three times the "bad" words, and the parts it is made of."""
    out = []
    for sentence in sentences:
        words = [w for w in sentence.tokens if w not in ".,"]
        bad = sum(w.lower() == "bad" for w in words)
        out.append(
            {
                "n_tokens": float(len(words)),
                "mean_logprob": -1.0 - bad,
                "good": float(len(words) - 3 * bad),
                "bad": float(bad),
            }
        )
    return out


if "toy.v1" not in registry._REGISTRY:
    registry.feature("toy.v1", names=("n_tokens", "mean_logprob", "good", "bad"))(_toy)


class StubScorer:
    """A scorer whose GLEU stage is the toy extractor's `good` column."""

    name = "stub"
    spacy_model = None
    placeholders = ("X",)

    def __init__(self):
        self.card = {"feature_set_version": "toy", "resources": {}}
        self.rows = FeatureRows(("toy.v1",), Resources())

    @property
    def n_rows(self) -> int:
        return self.rows.n_computed

    def decision(self, rows):
        return np.array([r["toy.v1/good"] for r in rows])

    def sentence_rows(self, sentences, parsed=None, **options):
        return self.rows.rows(sentences, parsed=parsed, **options)


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


@pytest.fixture
def dev(tmp_path):
    folder = tmp_path / "dev"
    folder.mkdir()
    rng = np.random.default_rng(7)
    for name in ("one", "two"):
        rows = []
        for g in range(8):
            for k in range(4):
                n_bad = int(rng.integers(0, 3))
                text = " ".join(["good"] * 4 + ["bad"] * n_bad) + ". It ends."
                rows.append(
                    {
                        "text": text,
                        "score": 5.0 - n_bad + rng.normal(scale=0.1),
                        "scores": {},
                        "refs": ["good good good good. It ends."],
                        "group": f"g{g}",
                        "system": f"s{k}",
                    }
                )
        rows += [
            {"text": "NULL", "score": 1, "scores": {}, "refs": ["x"], "group": "g0", "system": "z"},
            {"text": "good good.", "score": 5, "scores": {}, "refs": [], "group": "g0",
             "system": "human", "is_reference": True},
        ]  # fmt: skip
        _write(folder / f"{name}.jsonl", rows)
    return folder


def test_read_judged_counts_what_is_left_out(dev):
    judged = read_judged(dev / "one.jsonl")
    assert judged.counts == {"n_lines": 34, "n_kept": 32, "n_empty": 1, "n_references": 1}
    kept = read_judged(dev / "one.jsonl", keep_references=True)
    assert kept.counts["n_kept"] == 33 and kept.counts["n_references"] == 0


def test_benchmark_end_to_end_with_a_cached_rerun(dev, tmp_path):
    scorer = StubScorer()
    paths = judgement_files(dev)
    kwargs = {"aggregates": ["whole", "min"], "cache_dir": tmp_path / "rows", "n_samples": 200}
    runs = run_benchmark([scorer], paths, **kwargs)
    assert [r.aggregate for r in runs] == ["whole", "min"]
    first = runs[0].files[0]
    assert first.kinds["stub"] == "model" and first.kinds["chrF"] == "baseline"
    assert {"minus length", "LM logprob, summed", "LM logprob, mean", "BLEU"} <= set(first.table)
    assert first.signs["toy.v1/bad"] == -1  # from the other file: more "bad", lower score
    assert first.table["toy.v1/bad"].spearman > 0  # used the way round it agrees
    assert first.best["spearman"] is not None
    assert set(first.differences["stub"]) == {"spearman", "kendall"}
    assert runs[0].versus_first == {} and set(runs[1].versus_first["stub"]) == {"one", "two"}
    n_computed = scorer.n_rows
    assert n_computed > 0
    again = run_benchmark([scorer], paths, **kwargs)
    assert scorer.n_rows == n_computed  # every row from the cache
    assert as_dict(again[1]) == as_dict(runs[1])
    text = markdown(runs[0]) + aggregate_table(runs)
    assert "| one |" in text and "stub `min`" in text and "toy.v1/bad" in text
    json.dumps(as_dict(runs[0]))  # NaNs become null: valid JSON


def test_judgement_files_explains_a_missing_folder(tmp_path):
    from scorer.errors import InputError

    with pytest.raises(InputError, match="--dev"):
        judgement_files(tmp_path / "absent")


NEWS = (
    "The company said its profit rose sharply in the first quarter of the year. "
    "Shares of the bank fell after it reported a loss on its loans to farmers. "
    "The government expects inflation to slow next year as oil prices fall back. "
    "Analysts said the agreement would strengthen the dollar against the yen soon. "
    "The board approved a new dividend of ten cents a share payable in June. "
    "Traders said the market was quiet ahead of the central bank meeting today. "
)


def test_robustness_sets_strip_the_easy_tells(tmp_path):
    from training.gleu.robustness import window_set

    words = [tuple(w + " " for w in s.split()) for s in NEWS.split(". ") if s]
    texts, levels = window_set(words * 3, n=6, sizes=(1, 2, 3), per_size=10, seed=1)
    assert len(texts) == 40 and sorted(set(levels)) == [1, 2, 3, 6]
    assert not any(t.endswith((".", ",", " ")) for t in texts)


def test_robustness_end_to_end_and_skipped_without_a_corpus(tmp_path):
    from training.gleu.robustness import robustness_markdown, run_robustness

    scorer = StubScorer()
    absent = run_robustness([scorer], ["stub"], ["whole"], corpus=tmp_path / "absent.txt")
    assert "no held-out corpus" in robustness_markdown(absent)
    corpus = tmp_path / "news.txt"
    corpus.write_text((NEWS + "\n") * 4)
    out = run_robustness(
        [scorer],
        ["stub"],
        ["whole", "mean"],
        corpus=corpus,
        cache_dir=tmp_path / "rows",
        n=6,
        sizes=(1, 2),
        per_size=8,
        per_lowercase=5,
    )
    (whole, mean) = out["results"]
    assert (whole["aggregate"], mean["aggregate"]) == ("whole", "mean")
    assert set(whole["windows_auc"]) == {"1", "2"}
    assert "stub `mean`" in robustness_markdown(out)


class WorseStub(StubScorer):
    """The stub's score with the "bad" words no longer counted: it agrees less."""

    name = "worse"

    def decision(self, rows):
        return np.array([r["toy.v1/n_tokens"] for r in rows])


def test_several_models_are_each_compared_with_the_first(dev, tmp_path):
    paths = judgement_files(dev)
    kwargs = {"aggregates": ["whole"], "cache_dir": tmp_path / "rows", "n_samples": 200}
    (run,) = run_benchmark([StubScorer(), WorseStub()], paths, **kwargs)
    one = run.files[0]
    assert set(one.versus_first_model) == {"worse"}  # the first is the reference
    rho = one.versus_first_model["worse"]["spearman"]
    expected = one.table["worse"].spearman - one.table["stub"].spearman
    assert rho.difference == pytest.approx(expected)
    assert rho.ci_high < 0  # counting the bad words is what agrees with the raters
    text = markdown(run)
    assert "Each model minus `stub`" in text and "worse: Spearman's rho" in text
    assert as_dict(run)["files"][0]["versus_first_model"]["worse"]["spearman"]["ci_high"] < 0
    (alone,) = run_benchmark([StubScorer()], paths, **kwargs)
    assert alone.files[0].versus_first_model == {} and "Each model minus" not in markdown(alone)


def test_the_system_view_skips_files_without_six_systems_and_the_segment_view_still_prints(
    dev, tmp_path
):
    rng = np.random.default_rng(3)
    rows, bare = [], []
    for g in range(6):
        for k in range(6):  # system k adds k "bad" words: people and the toy agree on the order
            text = " ".join(["good"] * 4 + ["bad"] * (k % 3)) + f" {'ok ' * (k // 3)}. It ends."
            row = {
                "text": text,
                "score": 6.0 - k + rng.normal(scale=0.1),
                "scores": {},
                "refs": ["good good good good. It ends."],
                "group": f"g{g}",
                "system": f"s{k}",
            }
            rows.append(row)
            bare.append({k2: v for k2, v in row.items() if k2 != "system"})
    _write(dev / "six.jsonl", rows)
    _write(dev / "unnamed.jsonl", bare)  # no `system` field at all  # fmt: skip
    paths = judgement_files(dev)
    (run,) = run_benchmark(
        [StubScorer()], paths, aggregates=["whole"], cache_dir=tmp_path / "rows", n_samples=100
    )
    by_name = {f.name: f for f in run.files}
    assert by_name["one"].systems_skipped == "4 systems, fewer than 6"
    assert by_name["unnamed"].systems_skipped == "its outputs name no system"
    six = by_name["six"].systems
    assert six["stub"].n_systems == 6 and six["stub"].n_pairs == 15
    assert {"minus length", "chrF"} <= set(six)
    low, high = six["stub"].accuracy_95
    assert 0 <= low <= six["stub"].accuracy <= high <= 1 or math.isnan(low)
    text = markdown(run)
    assert "System level" in text
    assert "- unnamed: skipped, its outputs name no system" in text
    assert "- one: skipped, 4 systems, fewer than 6" in text
    assert "| unnamed |" in text  # the segment view still prints the file
    doc = as_dict(run)
    assert json.dumps(doc)
    assert {f["file"]: f["system_level_skipped"] for f in doc["files"]}["six"] is None


def test_a_cut_keeps_whole_inputs_and_counts_what_it_left(dev):
    from scorer.evidence.benchmark_data import cut

    judged = read_judged(dev / "one.jsonl")
    small = cut(judged, 10, 0, 12345)
    assert 10 <= len(small.texts) < len(judged.texts)
    assert small.counts["n_cut"] == len(judged.texts) - len(small.texts)
    for g in set(small.groups):  # every output of a kept input is kept
        assert small.groups.count(g) == judged.groups.count(g)
    assert cut(judged, 0, 0, 12345) is judged
    assert cut(judged, 10, 0, 12345).texts == small.texts  # seeded
