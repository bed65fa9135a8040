"""The checks behind the service, one by one: text rules and cost limits (`scorer.limits`),
weights, the deadline, the work slot's queue and the reload gate."""

from __future__ import annotations

import threading
import time

import pytest

from scorer.deadline import Deadline, DeadlineExceededError, in_chunks
from scorer.errors import InputError
from scorer.limits import CostError, Limits, count_tokens
from scorer.rerank import check_rerank, check_weights
from scorer.web import reloads
from scorer.web.reloads import RateLimitedError, ReloadGate, ReloadPendingError
from scorer.web.work import BusyError, WorkSlot

LIMITS = Limits(
    max_batch=4,
    max_chars=200,
    max_references=2,
    max_align_tokens=10,
    max_pairs=4,
    max_align_work=150,
    max_request_tokens=60,
)


def test_tokens_are_counted_like_a_tokenizer_would_at_least():
    assert count_tokens("The cat's mat, 3.5 m long!") == 12
    assert count_tokens("a " * 1000) == 1000
    assert count_tokens("   ") == 0


@pytest.mark.parametrize(
    ("texts", "words"),
    [
        (["\u200b\u200b\ufeff"], "invisible"),
        ([" \u2060 \u00ad "], "invisible"),
        (["ok", "bad\x85"], r"U\+0085"),
        (["bad\x00"], r"U\+0000"),
        (["lone \ud800"], r"lone surrogate U\+D800"),
        ([""], "empty"),
        (["a"] * 5, "at most 4"),
        (["x" * 201], "at most 200"),
    ],
)
def test_texts_that_are_not_accepted(texts, words):
    with pytest.raises(InputError, match=words):
        LIMITS.texts(texts, "sentences")


def test_tab_newline_and_visible_format_characters_pass():
    assert LIMITS.texts(["a\tb\nc\r", "zero\u200bwidth"], "s") == ["a\tb\nc\r", "zero\u200bwidth"]


@pytest.mark.parametrize(
    ("candidates", "references", "limit"),
    [
        (["a b c"] * 3, ["a b"] * 2, "MAX_PAIRS"),  # 6 pairs
        (["a " * 11], ["a b"], "MAX_ALIGN_TOKENS"),  # 11 tokens
        (["a " * 10] * 2, ["b " * 10], "MAX_ALIGN_WORK"),  # 20 x 10 = 200
        (["a " * 10] * 4, ["b " * 10] * 1, "MAX_ALIGN_WORK"),
    ],
)
def test_rerank_over_a_cost_limit_names_it(candidates, references, limit):
    with pytest.raises(CostError) as info:
        LIMITS.rerank(candidates, references)
    assert info.value.limit == limit
    assert f"{limit}={info.value.value}" in str(info.value)


def test_the_request_total_counts_every_text():
    with pytest.raises(CostError) as info:
        LIMITS.sentences(["a " * 40, "b " * 21])
    assert info.value.limit == "MAX_REQUEST_TOKENS"
    assert LIMITS.sentences(["a " * 40, "b " * 20]) == ["a " * 40, "b " * 20]


def test_accuracy_limits_count_each_hypothesis_with_its_own_references():
    hyps, refs = LIMITS.accuracy(["a b c"] * 2, [["a b", "c"], ["d"]])
    assert hyps == ["a b c"] * 2 and refs == [["a b", "c"], ["d"]]
    with pytest.raises(InputError, match="2 hypotheses but 1 reference lists"):
        LIMITS.accuracy(["a", "b"], [["a"]])
    with pytest.raises(CostError, match="MAX_PAIRS"):
        LIMITS.accuracy(["a"] * 3, [["a", "b"]] * 3)


def test_unlimited_by_default():
    cands, refs = Limits().rerank(["a " * 5000] * 100, ["b " * 5000] * 100)
    assert len(cands) == len(refs) == 100


def test_huge_weights_normalise_instead_of_overflowing():
    assert check_weights({"fluency": 1e308, "chrf": 1e308}, True) == {"fluency": 0.5, "chrf": 0.5}
    assert check_weights({"fluency": 5e-324, "bleu": 0.0}, True) == {"fluency": 1.0, "bleu": 0.0}
    for bad in [float("inf"), float("nan"), -1.0]:
        with pytest.raises(InputError, match="finite number >= 0"):
            check_weights({"fluency": bad}, False)
    with pytest.raises(InputError, match="needs references"):
        check_weights({"fluency": 1, "bleu": 0}, False)


def test_check_rerank_checks_everything_once_before_any_work():
    inputs = check_rerank(["a b", "b a"], ["a b"], weights={"fluency": 2, "chrf": 2}, top_k=1)
    assert inputs.weights == {"fluency": 0.5, "chrf": 0.5} and inputs.top_k == 1
    with pytest.raises(InputError, match="top_k"):
        check_rerank(["a"], top_k=0)


def test_the_deadline_stops_work_between_chunks():
    calls: list[int] = []

    def work(chunk):
        calls.append(len(chunk))
        time.sleep(0.05)
        return list(chunk)

    assert in_chunks(work, list(range(5)), Deadline(None).check, size=2) == list(range(5))
    calls.clear()
    with pytest.raises(DeadlineExceededError, match=r"0\.08 s"):
        in_chunks(work, list(range(100)), Deadline(0.08).check, size=2)
    assert 1 <= len(calls) <= 3


def test_the_work_slot_queues_a_few_and_refuses_more():
    slot, started, release = WorkSlot(max_queue=1), threading.Event(), threading.Event()

    def hold():
        with slot.hold(Deadline(5)):
            started.set()
            release.wait(5)

    holder = threading.Thread(target=hold)
    holder.start()
    started.wait(5)
    waiter = threading.Thread(target=lambda: slot.hold(Deadline(5)).__enter__())
    waiter.start()
    deadline = time.monotonic() + 5
    while slot.pending < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    with pytest.raises(BusyError, match="MAX_QUEUE"), slot.hold(Deadline(5)):
        pass
    release.set()
    holder.join(5)
    waiter.join(5)


def test_waiting_for_the_slot_counts_against_the_deadline():
    slot = WorkSlot(max_queue=4)
    with slot.hold(Deadline(5)):
        result: list[BaseException] = []

        def late():
            try:
                with slot.hold(Deadline(0.05)):
                    pass
            except DeadlineExceededError as exc:
                result.append(exc)

        thread = threading.Thread(target=late)
        thread.start()
        thread.join(5)
    assert result and "no worker was free" in str(result[0])


def test_one_reload_at_a_time_across_processes(tmp_path, monkeypatch):
    monkeypatch.setattr(reloads.tempfile, "gettempdir", lambda: str(tmp_path))
    signalled: list[str] = []
    monkeypatch.setattr(reloads, "request_reload", lambda pid, path: signalled.append(path))
    first, second = ReloadGate(0), ReloadGate(0)  # two workers of master 4242
    with first.claim(4242) as claim:
        with pytest.raises(ReloadPendingError), second.claim(4242):
            pass
        claim.signal("tiny")
    assert signalled == ["tiny"]
    with pytest.raises(ReloadPendingError), second.claim(4242):  # the master still reloads
        pass
    reloads.release_signalled(4242)  # gunicorn.conf.py's on_reload, when done
    with second.claim(4242):
        pass  # a failed load (no signal) frees the claim on the way out
    with first.claim(4242):
        pass


def test_reloads_are_rate_limited_across_processes(tmp_path, monkeypatch):
    monkeypatch.setattr(reloads.tempfile, "gettempdir", lambda: str(tmp_path))
    with ReloadGate(60).claim(7):
        pass
    with pytest.raises(RateLimitedError) as info, ReloadGate(60).claim(7):
        pass
    assert 1 <= info.value.retry_after <= 60
    with ReloadGate(60).claim(None):  # in one process, its own clock
        pass
