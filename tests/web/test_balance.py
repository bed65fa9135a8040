"""Workers share their loads (scorer/web/balance.py): a busy worker leaves new connections to
an idle one, on a real gunicorn; and the shared load table itself."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
import time

import requests
from web.support import ROOT, start_server, stop_server

from scorer.web.balance import BalancedThreadWorker, LoadTable


def _records(server) -> dict[str, dict]:
    lines = [x for x in server.log_lines() if x.startswith('{"ts"')]
    return {r["request_id"]: r for r in map(json.loads, lines)}


def test_a_busy_worker_leaves_new_connections_to_the_idle_one(models_dir, tmp_path):
    lines = (ROOT / "tests/web/data/sentences.txt").read_text().splitlines()
    rng = random.Random(3)
    many = []
    while len(many) < 4000:  # distinct texts, so nothing comes from the feature cache
        words = rng.choice(lines).rstrip(".").split()
        rng.shuffle(words)
        many.append(" ".join(words) + ".")
    env = {
        "FLUENCY_MAX_BATCH": "5000",
        "FLUENCY_MAX_CONTENT_LENGTH": "3000000",
        "FLUENCY_MAX_REQUEST_TOKENS": "300000",
    }
    server = start_server(models_dir, tmp_path / "server.log", workers=2, env=env)
    try:
        done = threading.Event()

        answers = []

        def long_request():
            answers.append(
                requests.post(
                    server.url + "/v1/score",
                    json={"sentences": many},
                    headers={"X-Request-ID": "long"},
                    timeout=120,
                )
            )
            done.set()

        worker = threading.Thread(target=long_request)
        worker.start()
        time.sleep(0.3)  # the long request is being scored by now
        sent_during = []
        for k in range(40):
            if done.is_set():
                break
            rid = f"short-{k}"
            sent_during.append(rid)
            # No session: every request opens a new connection, which either worker may accept.
            resp = requests.post(
                server.url + "/v1/score",
                json={"sentences": [lines[k % len(lines)]]},
                headers={"X-Request-ID": rid},
                timeout=60,
            )
            assert resp.status_code == 200
        worker.join()
        assert answers[0].status_code == 200, answers[0].text
        time.sleep(0.3)
        records = _records(server)
        assert len(sent_during) >= 4, "the long request ended too soon to test anything"
        busy = records["long"]["pid"]
        served = [records[rid]["pid"] for rid in sent_during]
        # Without balancing each new connection lands on the busy worker half the time.
        assert busy not in served, served
        assert len(set(served)) == 1
    finally:
        stop_server(server.proc)


def test_load_table_claims_free_or_dead_slots_and_skips_the_unavailable():
    table = LoadTable(slots=4)
    a, b = table.claim(), table.claim()
    assert (a, b) == (0, 1)
    assert table.least_other(a) is None  # b is claimed but not yet running
    table.enter(a, os.getpid())
    table.loads[a] = 3
    table.enter(b, os.getppid())
    table.loads[b] = 1
    assert table.least_other(a) == 1 and table.least_other(b) == 3
    table.loads[b] = -1  # stopping: accepts nothing, so it does not count
    assert table.least_other(a) is None
    # A slot whose worker died is free again, and a dead worker never counts as least loaded.
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    c = table.claim()
    table.enter(c, gone.pid)
    table.loads[c] = 0
    assert table.least_other(a) is None
    assert table.claim() == c
    table.leave(a)
    assert table.claim() == a


def test_the_worker_relies_on_gunicorn_hooks_that_exist():
    from gunicorn.workers.gthread import ThreadWorker

    for name in (
        "accept",
        "enqueue_req",
        "handle",
        "load_wsgi",
        "set_accept_enabled",
        "wait_for_and_dispatch_events",
        "run",
    ):
        assert callable(getattr(ThreadWorker, name)), name
        assert name in BalancedThreadWorker.__dict__, name


def test_a_worker_two_requests_above_the_least_loaded_closes_kept_alive_connections():
    import logging

    from gunicorn.config import Config

    from scorer.web.balance import SPREAD, TABLE

    worker = BalancedThreadWorker(1, os.getpid(), [], None, 30, Config(), logging.getLogger())
    other = TABLE.claim()
    try:
        TABLE.enter(worker.slot, os.getpid())
        TABLE.enter(other, os.getppid())  # a live process: the other worker, idle
        configured = worker.max_keepalived
        assert configured > 0 and worker._should_accept()
        held = [object() for _ in range(SPREAD)]
        worker._count(held[0], True)
        assert worker.load == 1 and TABLE.loads[worker.slot] == 1
        assert not worker._should_accept()  # the idle one takes new connections
        assert worker.max_keepalived == configured  # one more than the least: keep alive
        worker._count(held[1], True)
        assert worker.max_keepalived == 0  # two more: the response closes the connection
        worker._count(held[1], True)  # counting a connection twice counts it once
        assert worker.load == 2
        TABLE.loads[other] = 1
        assert worker.max_keepalived == configured and not worker._should_accept()
        for h in held:
            worker._count(h, False)
        assert worker.load == 0 and worker._should_accept()
    finally:
        TABLE.leave(worker.slot)
        TABLE.leave(other)
        worker.tmp.close()
