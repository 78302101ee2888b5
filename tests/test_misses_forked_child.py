"""kb misses' second process as a fork of the reviewing process (engine/review/missworker.py): made
only when no other thread is alive, its reviews the ones this process makes, and whatever it
does (killed, garbage, a review that raises here) the report is one process's and no child
is left behind."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from engine import Memory
from engine.review import missworker
from engine.review.misses import load
from engine.review.missreview import reviewing
from engine.review.missworker import review_misses

from conftest import in_a_process_alone
from test_misses_second_process import _log, _outputs


@pytest.fixture
def log_of_40(demo):
    _log(demo, 40)
    mem = Memory(demo)
    return demo, _outputs(review_misses(mem, second_process=False), mem)


def _reviews_with_helper(demo, **kwargs):
    mem = Memory(demo)
    entries = load(demo / "kb-misses.txt")[0]
    helper = missworker.SecondReviewer(mem, entries, near=3, resident=False, **kwargs)
    with reviewing(mem, [e.question for e in entries]):
        reviews = helper.reviews(mem)
    return mem, helper, reviews


def _report_of(demo, mem, reviews):
    report = review_misses(Memory(demo), second_process=False)
    return _outputs(type(report)(report.path, report.exists, reviews), mem)


def _gone(pid: int) -> bool:
    """Reaped: no such process (a zombie would still answer kill 0)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.fixture
def pids(monkeypatch):
    """The pid of every child forked by the review."""
    seen = []
    real = os.fork

    def fork():
        pid = real()
        if pid:
            seen.append(pid)
        return pid

    monkeypatch.setattr(missworker.os, "fork", fork)
    return seen


def _before_each_review(monkeypatch, *, here=None, in_child=None) -> None:
    """Run `here(n)` before this process's n-th review, `in_child(n)` before the child's."""
    real = missworker.review_one
    parent = os.getpid()
    counts = {True: 0, False: 0}

    def review(*args, **kwargs):
        mine = os.getpid() == parent
        counts[mine] += 1
        act = here if mine else in_child
        if act is not None:
            act(counts[mine])
        return real(*args, **kwargs)

    monkeypatch.setattr(missworker, "review_one", review)


def _slow(n: int) -> None:
    time.sleep(0.02)  # this process slow, so the child's frames arrive and are read


@in_a_process_alone
def test_a_forked_child_is_killed_part_way_and_the_report_is_one_process_s(log_of_40, monkeypatch, pids):
    demo, expected = log_of_40

    def killed_fourth(n: int) -> None:  # the child, by its own hand, after three reviews
        if n == 4:
            os.kill(os.getpid(), signal.SIGKILL)

    _before_each_review(monkeypatch, here=_slow, in_child=killed_fourth)
    mem, helper, reviews = _reviews_with_helper(demo)
    assert helper.forked and 0 < helper.from_child < 20  # it sent some, then died
    assert _report_of(demo, mem, reviews) == expected
    assert pids and all(_gone(p) for p in pids)


@in_a_process_alone
def test_a_forked_child_sending_garbage_is_not_believed(log_of_40, monkeypatch, pids):
    demo, expected = log_of_40
    _before_each_review(monkeypatch, here=_slow)
    monkeypatch.setattr(missworker, "to_wire", lambda r: ("forged", "hit"))  # only the child sends
    mem, helper, reviews = _reviews_with_helper(demo)
    assert helper.forked and helper.from_child == 0
    assert _report_of(demo, mem, reviews) == expected
    assert pids and all(_gone(p) for p in pids)


@in_a_process_alone
def test_no_fork_while_another_thread_is_alive(log_of_40, monkeypatch, pids):
    # A thread may hold a lock (the pool's, an import's) that the child would inherit held.
    demo, expected = log_of_40
    stop = threading.Event()
    other = threading.Thread(target=stop.wait, daemon=True)
    other.start()
    monkeypatch.setattr(missworker, "THREADS_END_WITHIN_S", 0.05)
    try:
        mem, helper, reviews = _reviews_with_helper(demo)
    finally:
        stop.set()
        other.join()
    assert not helper.forked and not pids  # a fresh interpreter instead
    assert _report_of(demo, mem, reviews) == expected


@in_a_process_alone
def test_a_review_that_raises_here_leaves_no_forked_child(log_of_40, monkeypatch, pids):
    demo, _ = log_of_40

    def fails_third(n: int) -> None:
        if n == 3:
            raise RuntimeError("a review failed")

    _before_each_review(monkeypatch, here=fails_third)
    with pytest.raises(RuntimeError):
        _reviews_with_helper(demo)
    assert pids and all(_gone(p) for p in pids)


@in_a_process_alone
def test_a_fork_that_fails_is_a_fresh_interpreter(log_of_40, monkeypatch):
    demo, expected = log_of_40

    def no_fork():
        raise BlockingIOError(11, "Resource temporarily unavailable")  # fork at a process ulimit

    monkeypatch.setattr(missworker.os, "fork", no_fork)
    mem, helper, reviews = _reviews_with_helper(demo)
    assert not helper.forked
    assert _report_of(demo, mem, reviews) == expected
