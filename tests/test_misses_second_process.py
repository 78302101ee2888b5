"""kb misses over a long log in two processes (engine/review/missworker.py): the same reviews, in the
log's order, whatever the second process does."""

from __future__ import annotations

import sys
import time

import pytest

from conftest import REPO, in_a_process_alone
from engine import Memory
from engine.review import missworker
from engine.cli.misses import render_misses
from engine.review.misses import MissEntry, load, render_log
from engine.review.missjson import report_json_line
from engine.review.missreview import reviewing
from engine.review.missworker import review_misses

# Questions of every kind the review meets: hits, guesses, refusals with and without a
# proposal, spelling and text proposals, one with nothing near.
QUESTIONS = ["how do I roll back", "what about the canary rollout percentage", "xyzzy qwfp",
             "come funziona il registro delle decisioni", "deploy checklist", "protein per meal",
             "proteina whey", "rollbak the deploy", "marketing digital", "hooks that hold attention"]


def _log(demo, n: int) -> None:
    entries = [MissEntry(1 + i % 7, "2026-11-01", "2026-11-20", f"{QUESTIONS[i % len(QUESTIONS)]} n{i}", "")
               for i in range(n)]
    # Longer than a route reads (MAX_QUESTION_CHARS): sent to the child as the route reads it.
    entries.append(MissEntry(1, "2026-11-01", "2026-11-20", "deploy checklist " * 400 + "rollbak", ""))
    (demo / "kb-misses.txt").write_text(render_log(entries), encoding="utf-8")


def _outputs(report, mem) -> tuple[str, str]:
    snap = mem.snapshot()
    return report_json_line(report), render_misses(report, entries=snap.catalogue.n, agents=len(mem.bases),
                                                   aliases=len(snap.aliases))


@pytest.fixture
def one_process(demo):
    _log(demo, 40)
    mem = Memory(demo)
    return demo, _outputs(review_misses(mem, second_process=False), mem)


@pytest.fixture(params=["fork", "fresh interpreter"])
def either_child(request, monkeypatch):
    """The child as a fork of this process (when no other thread is alive) or as a fresh
    interpreter (a process with threads, or without fork): both give the same reviews."""
    monkeypatch.setattr(missworker, "FORK_WHEN_ALONE", request.param == "fork")
    return request.param


@pytest.fixture
def fresh_child(monkeypatch):
    """The child as a fresh interpreter, whose command a test can replace."""
    monkeypatch.setattr(missworker, "FORK_WHEN_ALONE", False)


@pytest.fixture
def slow_here(monkeypatch):
    """This process's reviews made slow (50 ms each), so that what the child sends arrives
    while this process still has entries to do (at full speed it can review all 40 before a
    child has started) and is read: used, or refused."""
    real = missworker.review_one

    def slow(*args, **kwargs):
        time.sleep(0.05)
        return real(*args, **kwargs)

    monkeypatch.setattr(missworker, "review_one", slow)


@in_a_process_alone
def test_two_processes_give_the_reviews_one_gives_in_the_same_order(one_process, slow_here, either_child):
    demo, expected = one_process
    mem = Memory(demo)
    entries = load(demo / "kb-misses.txt")[0]
    helper = missworker.SecondReviewer(mem, entries, near=3, resident=False)
    with reviewing(mem, [e.question for e in entries]):
        reviews = helper.reviews(mem)
    assert helper.from_child > 0  # the child's reviews were used
    assert helper.forked == (either_child == "fork")
    report = review_misses(Memory(demo), second_process=False)
    assert _outputs(type(report)(report.path, report.exists, reviews), mem) == expected


@in_a_process_alone
def test_review_misses_with_a_second_process_writes_the_same_report(one_process, either_child):
    demo, expected = one_process
    mem = Memory(demo)
    assert _outputs(review_misses(mem, second_process=True), mem) == expected


FAILING_CHILDREN = {
    "exits at once": "pass",
    "dies part way": (  # the right first frames, then a truncated one
        "import sys; sys.stdin.buffer.read(); sys.stdout.buffer.write(b'\\x10\\x00\\x00\\x00abc')"),
    "sends garbage": "import sys; sys.stdin.buffer.read(); sys.stdout.buffer.write(b'\\x05\\x00\\x00\\x00\\xff\\xff\\xff\\xff\\xff' * 50)",
    # It read another index (an edit landed between the two opens): its reviews, made of
    # that index, are not used, however well formed.
    "read another index": (
        f"import struct, sys; sys.path.insert(0, {str(REPO)!r})\n"
        "from engine.index.sealedfile import encode\n"
        "sys.stdin.buffer.read()\n"
        "def send(o):\n"
        "    b = encode(o); sys.stdout.buffer.write(struct.pack('<I', len(b)) + b)\n"
        "send((0, 0, (), ()))\n"
        "for _ in range(100): send(('hit', 'forged/file.md', (), None, ('forged',)))\n"),
}


@pytest.mark.parametrize("how", sorted(FAILING_CHILDREN))
def test_whatever_the_second_process_does_the_report_is_one_process_s(one_process, slow_here, fresh_child,
                                                                     monkeypatch, how):
    demo, expected = one_process
    monkeypatch.setattr(missworker, "command", lambda: [sys.executable, "-c", FAILING_CHILDREN[how]])
    mem = Memory(demo)
    assert _outputs(review_misses(mem, second_process=True), mem) == expected


def test_no_interpreter_to_start_is_one_process(one_process, fresh_child, monkeypatch):
    demo, expected = one_process
    monkeypatch.setattr(missworker, "command", lambda: ["/nonexistent/python3"])
    mem = Memory(demo)
    assert _outputs(review_misses(mem, second_process=True), mem) == expected


def test_a_second_process_is_started_only_when_a_core_is_idle_now(monkeypatch):
    monkeypatch.setattr(missworker, "_usable_cores", lambda: 2)
    monkeypatch.setattr(missworker.os, "getloadavg", lambda: (0.9, 0.5, 0.5))
    monkeypatch.setattr(missworker, "_runnable_now", lambda: 1)  # this process alone
    assert missworker.core_is_free()
    monkeypatch.setattr(missworker, "_runnable_now", lambda: 2)  # another thread wants a core
    assert not missworker.core_is_free()
    monkeypatch.setattr(missworker, "_runnable_now", lambda: None)  # not kept: the average decides
    assert missworker.core_is_free()
    monkeypatch.setattr(missworker, "_runnable_now", lambda: 1)
    monkeypatch.setattr(missworker.os, "getloadavg", lambda: (1.7, 0.5, 0.5))  # busy this last minute
    assert not missworker.core_is_free()
    monkeypatch.setattr(missworker.os, "getloadavg", lambda: (0.2, 0.5, 0.5))
    monkeypatch.setattr(missworker, "_usable_cores", lambda: 1)
    assert not missworker.core_is_free()  # one core: nothing to share


def test_a_review_that_fails_leaves_no_second_process_behind(one_process, fresh_child, monkeypatch):
    demo, _ = one_process
    started = []
    real = missworker.SecondReviewer

    class Kept(real):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            started.append(self.child)

    def broken(*args, **kwargs):
        raise RuntimeError("the resident leg could not be built")

    mem = Memory(demo)
    monkeypatch.setattr(missworker, "SecondReviewer", Kept)
    monkeypatch.setattr(mem, "hold_text_in_memory", broken)
    monkeypatch.setattr(missworker, "RESIDENT_FROM_MISSES", 1)  # so that the review asks for the leg
    with pytest.raises(RuntimeError):
        review_misses(mem, second_process=True)
    assert len(started) == 1 and not started[0].running  # stopped and reaped


def test_the_second_process_never_imports_an_engine_from_the_working_directory(one_process, slow_here, fresh_child,
                                                                               tmp_path, monkeypatch):
    # `python -m engine.review.missworker` put the working directory first on sys.path: `kb misses`
    # run from a folder holding an `engine/` package or a `Stemmer.py` ran that code in the
    # child (the prep worker's bug, tests/test_faults_round6_prepworker.py).
    demo, expected = one_process
    planted = tmp_path / "cwd"
    (planted / "engine").mkdir(parents=True)
    marker = tmp_path / "RAN"
    (planted / "engine" / "__init__.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    (planted / "Stemmer.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    monkeypatch.chdir(planted)
    mem = Memory(demo)
    entries = load(demo / "kb-misses.txt")[0]
    helper = missworker.SecondReviewer(mem, entries, near=3, resident=False)
    with reviewing(mem, [e.question for e in entries]):
        reviews = helper.reviews(mem)
    assert not marker.exists(), "the child ran the engine package found in the working directory"
    assert helper.from_child > 0  # this engine's child ran, and its reviews were used
    report = review_misses(Memory(demo), second_process=False)
    assert _outputs(type(report)(report.path, report.exists, reviews), mem) == expected
