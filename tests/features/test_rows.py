"""The one path from texts to feature rows (`features.rows`), with the real parsers and LM: its
keys, its memory and disk caches, its worker processes, and its use by every consumer (score,
benchmark, calibrate, train): a second consumer of the same texts parses nothing."""

from __future__ import annotations

import json
import shutil

import pytest

import features.rows as rows_module
from features.resources import DEFAULT_LM_DIR, LM_FILE, UNIGRAM_FILE, Resources
from features.rows import FeatureRows, RowKey, RowStore

TEXTS = [
    "The company said profits rose in the first quarter.",
    "profits the quarter in rose said first company The.",
    "Shares of the bank fell after it reported a loss.",
    "The bank the of fell shares loss a reported.",
    "Analysts expect the dollar to strengthen against the yen.",
    "Traders said the market was quiet ahead of the meeting.",
]
FEATURES = ("surface.v2", "lm.v1", "linkgrammar.v5")


@pytest.fixture
def parses(monkeypatch):
    """Texts spaCy parses in this process, call by call."""
    calls: list[list[str]] = []
    real = rows_module.parse

    def counting(texts, **kwargs):
        calls.append(list(texts))
        return real(texts, **kwargs)

    monkeypatch.setattr(rows_module, "parse", counting)
    return calls


def test_rows_are_the_extractors_values_in_order_and_repeats_parse_once(parses):
    source = FeatureRows(FEATURES)
    rows = source.rows([*TEXTS, TEXTS[0]])
    assert len(rows) == len(TEXTS) + 1 and rows[0] == rows[-1]
    assert sum(len(c) for c in parses) == len(TEXTS)  # the repeat was not parsed again
    assert set(rows[0]) == set(source.key.columns)
    assert rows[1]["linkgrammar.v5/full_parse"] < rows[0]["linkgrammar.v5/full_parse"] or (
        rows[1]["lm.v1/mean_logprob"] < rows[0]["lm.v1/mean_logprob"]
    )


def test_memory_keeps_the_most_recent_texts_only(parses):
    source = FeatureRows(("surface.v2",), memory=2)
    source.rows(TEXTS[:3])
    assert len(source.memory) == 2 and source.memory.get(TEXTS[0]) is None
    parses.clear()
    source.rows(TEXTS[1:3])
    assert parses == [] and source.memory.hits >= 2


def test_the_disk_store_serves_a_second_object_and_survives_a_cut_line(tmp_path, parses):
    first = FeatureRows(FEATURES)
    expected = first.rows(TEXTS, cache_dir=tmp_path)
    assert first.n_computed == len(TEXTS)
    store = tmp_path / first.key.digest / "rows.jsonl"
    with store.open("a") as fh:
        fh.write('{"text": "cut sho')  # a run killed mid-line
    parses.clear()
    second = FeatureRows(FEATURES)
    assert second.rows(TEXTS, cache_dir=tmp_path) == expected
    assert second.n_computed == 0 and parses == []
    meta = json.loads((store.parent / "meta.json").read_text())
    assert meta["extractors"]["lm.v1"]["lm"] == rows_module.artefact_sha256(
        DEFAULT_LM_DIR / LM_FILE
    )


def test_a_subset_of_extractors_borrows_rows_another_store_has(tmp_path, parses):
    full = FeatureRows(FEATURES).rows(TEXTS, cache_dir=tmp_path)
    parses.clear()
    subset = FeatureRows(("surface.v2", "lm.v1"))
    assert subset.rows(TEXTS[:2], cache_dir=tmp_path) == [
        {k: r[k] for k in subset.key.columns} for r in full[:2]
    ]
    rows = subset.rows(TEXTS, cache_dir=tmp_path)  # a second call borrows the rest
    assert parses == [] and subset.n_computed == 0
    assert rows == [{k: r[k] for k in subset.key.columns} for r in full]
    assert rows == FeatureRows(("surface.v2", "lm.v1")).rows(TEXTS)  # what it would compute
    # Kept in its own store too: a third object reads them without looking at siblings.
    assert len(RowStore(tmp_path, subset.key).rows) == len(TEXTS)


def test_the_columns_of_two_stores_add_up_to_a_row_neither_has(tmp_path, parses):
    """A model reading the parsers' extractors and another one (the neural tier) takes each
    column from the store that has it; texts only one store has are computed."""
    surface = FeatureRows(("surface.v2",)).rows(TEXTS, cache_dir=tmp_path)
    lm = FeatureRows(("lm.v1",)).rows(TEXTS[:4], cache_dir=tmp_path)
    parses.clear()
    both = FeatureRows(("surface.v2", "lm.v1"))
    rows = both.rows(TEXTS, cache_dir=tmp_path)
    assert both.n_computed == 2 and sorted(t for call in parses for t in call) == sorted(TEXTS[4:])
    assert rows[:4] == [{**a, **b} for a, b in zip(surface[:4], lm, strict=True)]
    assert rows == FeatureRows(("surface.v2", "lm.v1")).rows(TEXTS)


def test_another_artefact_is_another_key_and_lends_nothing(tmp_path):
    other = tmp_path / "lm"
    other.mkdir()
    shutil.copy(DEFAULT_LM_DIR / LM_FILE, other / LM_FILE)
    lines = (DEFAULT_LM_DIR / UNIGRAM_FILE).read_text(encoding="utf-8").splitlines()
    word, value = lines[-1].split("\t")[:2]
    lines[-1] = f"{word}\t{float(value) - 1.0}"
    (other / UNIGRAM_FILE).write_text("\n".join(lines) + "\n", encoding="utf-8")
    shipped = RowKey.of(("lm.v1",), Resources())
    copied = RowKey.of(("lm.v1",), Resources(lm_path=other / LM_FILE))
    assert copied.digest != shipped.digest
    assert not copied.served_by(shipped.meta()) and shipped.served_by(shipped.meta())
    # The same bytes at another path are the same key: rows follow content, not place.
    (other / UNIGRAM_FILE).write_bytes((DEFAULT_LM_DIR / UNIGRAM_FILE).read_bytes())
    assert RowKey.of(("lm.v1",), Resources(lm_path=other / LM_FILE)).digest == shipped.digest


def test_worker_processes_give_the_rows_of_one_process(tmp_path):
    texts = TEXTS * 3 + [t.lower() for t in TEXTS]
    serial = FeatureRows(FEATURES, batch=4).rows(texts)
    pooled = FeatureRows(FEATURES, batch=4)
    assert pooled.rows(texts, n_jobs=2, cache_dir=tmp_path) == serial
    assert pooled.n_computed == len(set(texts))
    assert len(RowStore(tmp_path, pooled.key).rows) == len(set(texts))


def _judgements(path, texts):
    lines = [
        {"text": t, "score": float(i % 3), "scores": {}, "refs": [], "group": f"g{i // 3}",
         "system": f"s{i % 3}"}
        for i, t in enumerate(texts)
    ]  # fmt: skip
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def test_score_benchmark_calibrate_and_train_share_one_path(tmp_path, parses):
    """The benchmark parses a file's texts once; calibration over the same file with another
    loaded copy of the model, and training features of the same texts, parse nothing."""
    from scorer.evidence.benchmark_run import run_benchmark
    from scorer.scoring import load_scorer
    from training.calibration.calibrate import head_file
    from training.gleu.svm import featurize
    from training.judged.table import read_table

    texts = [*TEXTS, "The bank raised rates. Then it cut them again.", "X is a restaurant ."]
    path = _judgements(tmp_path / "toy.jsonl", texts)
    cache = tmp_path / "rows"
    scorer = load_scorer("default")
    scored = scorer.score_texts(texts, aggregate="weighted")
    assert scorer.rows.n_computed > 0  # scoring asks the same object for its rows
    run_benchmark([scorer], [path], aggregates=["weighted"], cache_dir=cache, n_samples=100)
    parses.clear()
    again = load_scorer("default")
    (table,) = read_table(path)
    judged = head_file(again, table, "toy", ["weighted"], cache_dir=cache)
    assert parses == [] and again.rows.n_computed == 0
    # Read whole as well: the benchmark read whole texts only with the cheap extractors its
    # baselines need, so the one text of two sentences is parsed now.
    head_file(again, table, "toy", ["whole", "weighted"], cache_dir=cache)
    assert parses == [["The bank raised rates. Then it cut them again."]]
    parses.clear()
    # spaCy's parser confidences move in the 7th digit with the batch a text is parsed in.
    gleu = judged.columns["weighted"]["gleu"]
    assert gleu.tolist() == pytest.approx([s.gleu for s in scored], abs=1e-6)
    rows = featurize(TEXTS, scorer.features, cache_dir=cache, progress=False)
    assert parses == []
    assert rows == again.sentence_rows(TEXTS, cache_dir=cache)
