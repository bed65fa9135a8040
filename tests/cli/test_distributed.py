"""Scoring on a real Dask LocalCluster (two worker processes on the loopback interface): the
same scores as `fluency score`, every column and the order kept, and clear errors for a bad
model, a missing one, an unreachable scheduler and a worker that dies."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import sys
import time

import pandas as pd
import pytest

pytest.importorskip("distributed", reason="the dask extra is not installed")

from scorer.cli import main
from scorer.config import DEFAULTS
from scorer.distributed import connect, register_scorer, score_chunks, score_dataframe
from scorer.errors import ModelLoadError, ScorerError

TEXTS = [
    "The bank said that profits would rise.",
    "A farmer denied a sharp fall in exports.",
    "the cat sat " * 100_000,  # over spaCy's max_length: a null score and a reason
    "",
    "exports fall sharp a denied farmer.",
    "Our small team announced new measures on prices.",
]


@pytest.fixture(scope="module")
def client():
    client = connect("local:2", quiet=True)
    yield client
    cluster = client.cluster
    client.close()
    cluster.close()


@pytest.fixture
def config(small_models) -> dict:
    return {**DEFAULTS, "MODELS_DIR": str(small_models)}


def test_dask_cli_on_parquet_equals_the_plain_cli_to_the_last_digit(small, tmp_path, capsys):
    frame = pd.DataFrame({"id": range(len(TEXTS)), "text": TEXTS, "tag": list("abcdef")})
    src, dst = tmp_path / "in.parquet", tmp_path / "out.parquet"
    frame.to_parquet(src, index=False)
    argv = ["score", "--in", str(src), *small, "--chunk", "2"]
    assert main([*argv, "--out", str(dst), "--dask", "local:2"]) == 0
    err = capsys.readouterr().err
    assert "row 3 not scored" in err and "Traceback" not in err
    plain = tmp_path / "plain.jsonl"
    assert main([*argv, "--out", str(plain)]) == 0
    capsys.readouterr()
    scored = pd.read_parquet(dst)
    pd.testing.assert_frame_equal(scored[frame.columns], frame)
    expected = [json.loads(line) for line in plain.read_text().splitlines()]
    assert scored["score"].tolist()[:2] == [r["score"] for r in expected][:2]
    for got, row in zip(scored.itertuples(), expected, strict=True):
        if row["score"] is None:
            assert pd.isna(got.score) and got.reason == row["reason"]
        else:
            assert got.score == row["score"] and pd.isna(got.reason)  # exact, not approx


@pytest.mark.slow
def test_score_dataframe_returns_the_frame_with_scores_in_order(client, config, small_models):
    import dask.dataframe as dd

    from scorer.batch import score_rows
    from scorer.scoring import load_scorer

    frame = pd.DataFrame({"text": TEXTS, "n": range(len(TEXTS))})
    ddf = dd.from_pandas(frame, npartitions=3, sort=False)
    out = score_dataframe(ddf, client=client, model="small", config=config).compute()
    assert out["n"].tolist() == list(range(len(TEXTS)))
    assert list(out.columns) == ["text", "n", "score", "reason"]
    local = load_scorer("small", models_dir=small_models)
    for part in range(3):  # the same batches as the partitions: the same floats
        rows = score_rows(local, TEXTS[2 * part : 2 * part + 2])
        got = out["score"].iloc[2 * part : 2 * part + 2].tolist()
        want = [o.score.score if o.score else None for o in rows]
        assert [None if pd.isna(g) else g for g in got] == want
    assert "parser's limit" in out["reason"].iloc[2]


@pytest.mark.slow
def test_score_chunks_keeps_rows_and_order_with_a_small_window(client, config):
    register_scorer(client, "small", config)
    chunks = [[{"k": i, "text": t}] for i, t in enumerate(TEXTS)]
    done = list(score_chunks(client, iter(chunks), "text", window=2))
    assert [rows[0]["k"] for rows, _ in done] == list(range(len(TEXTS)))
    assert [o[0].score is None for _, o in done] == [False, False, True, True, False, False]


def test_a_missing_model_is_an_error_before_any_worker_is_asked(small, tmp_path, capsys):
    config = {**DEFAULTS, "MODELS_DIR": str(tmp_path)}
    with pytest.raises(ModelLoadError, match="no model card"):
        register_scorer(None, "absent", config)  # the card is read on the client first
    t0 = time.perf_counter()
    assert main(["score", "-", "--model", "absent", "--dask", "local:2"]) == 2
    assert "no model card" in capsys.readouterr().err
    assert time.perf_counter() - t0 < 5  # no cluster was started


@pytest.mark.slow
def test_a_model_the_workers_cannot_load_is_an_error_naming_the_worker(
    client, small_models, tmp_path
):
    models = tmp_path / "models"
    shutil.copytree(small_models / "small", models / "broken")
    with open(models / "broken" / "model.joblib", "r+b") as fh:  # the card is intact
        fh.seek(50)
        fh.write(b"\x00garbage\x00")
    config = {**DEFAULTS, "MODELS_DIR": str(models)}
    with pytest.raises(ModelLoadError, match=r"worker tcp://127\.0\.0\.1:\d+ cannot load"):
        register_scorer(client, "broken", config)


def test_an_unreachable_scheduler_fails_fast(small, capsys):
    with socket.socket() as s:  # a free port: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    t0 = time.perf_counter()
    with pytest.raises(ScorerError, match="cannot reach the Dask scheduler"):
        connect(f"tcp://127.0.0.1:{port}", timeout=1)
    assert time.perf_counter() - t0 < 10
    argv = ["score", "-", *small, "--dask", f"tcp://127.0.0.1:{port}", "--dask-timeout", "1"]
    assert main(argv) == 2
    assert "dask scheduler" in capsys.readouterr().err


def test_without_dask_installed_the_error_says_how_to_install_it(small, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed: ImportError
    assert main(["score", "-", *small, "--dask", "local:2"]) == 2
    assert "pip install 'fluency-scorer[dask]'" in capsys.readouterr().err


@pytest.mark.slow
def test_a_worker_that_dies_has_its_partition_retried(client, config):
    register_scorer(client, "small", config)
    pids = client.run(os.getpid)
    texts = [f"The bank said that profits would rise by {i} percent." for i in range(400)]
    chunks = ([{"text": t}] for t in texts)
    results = score_chunks(client, chunks, "text", window=8)
    scored = [next(results)]
    os.kill(next(iter(pids.values())), signal.SIGKILL)
    scored.extend(results)
    assert len(scored) == len(texts)
    assert all(o[0].score is not None for _, o in scored)
