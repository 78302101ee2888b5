"""Round 7c: kb misses' forked second process (engine/review/missworker.py) with the standard streams
closed (`kb misses >&-`, a job started without them): Python sets sys.stdout to None, and the
flush made before the fork raised AttributeError, a traceback and exit 1, where the review in
one process exits 0. A real `kb misses` in a fresh interpreter, the fork forced (a core taken
as free, a short log taken as long), its file descriptor 1 (or 2) closed before it starts."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from test_misses_second_process import _log

REPO = Path(__file__).resolve().parents[1]

FORCED_FORK = """
import os, sys
from engine.review import missworker
missworker.core_is_free = lambda: True
missworker.TWO_FROM_ENTRIES = 2
real_fork = os.fork
def fork():
    pid = real_fork()
    if pid:
        os.write(int(sys.argv[2]), b"forked")
    return pid
os.fork = fork
from engine.cli import main
sys.exit(main(["misses", sys.argv[1]]))
"""


@pytest.mark.parametrize("closed", [1, 2], ids=["stdout", "stderr"])
def test_kb_misses_forks_with_a_standard_stream_closed(demo, closed):
    _log(demo, 40)
    said_r, said_w = os.pipe()
    try:
        r = subprocess.run([sys.executable, "-c", FORCED_FORK, str(demo), str(said_w)], cwd=REPO,
                           stdout=subprocess.PIPE if closed == 2 else None,
                           stderr=subprocess.PIPE if closed == 1 else None, pass_fds=(said_w,),
                           preexec_fn=lambda: os.close(closed), timeout=120)
        os.close(said_w)
        said = os.read(said_r, 100)
    finally:
        os.close(said_r)
    assert said == b"forked", "the review did not fork"
    output = (r.stderr if closed == 1 else r.stdout).decode()
    assert "Traceback" not in output, output
    assert r.returncode == 0, output


def test_with_a_thread_alive_the_second_process_starts_at_once(demo, monkeypatch):
    """The reading room reviews the log from a worker thread, its event loop alive in another:
    such a process never forks. Its fresh interpreter was started only once the review had
    begun and THREADS_END_WITHIN_S (0.2 s) had been waited out for threads that never end;
    before the fork it started when the helper was made, overlapping this process's start."""
    from engine import Memory
    from engine.review import missworker
    from engine.review.misses import load
    from engine.review.missreview import reviewing

    _log(demo, 40)
    entries = load(demo / "kb-misses.txt")[0]
    waited = []
    monkeypatch.setattr(missworker, "_alone_within", lambda seconds: waited.append(seconds) or False)
    stop = threading.Event()
    loop = threading.Thread(target=stop.wait, daemon=True)  # the room's other thread
    loop.start()
    try:
        mem = Memory(demo)
        helper = missworker.SecondReviewer(mem, entries, near=3, resident=False)
        assert helper.child.running, "no second process started with the helper"
        with reviewing(mem, [e.question for e in entries]):
            reviews = helper.reviews(mem)
    finally:
        stop.set()
        loop.join()
    assert not waited, "waited for a thread that never ends"
    assert not helper.forked and len(reviews) == len(entries)


RAW_THREAD = """
import _thread, os, sys, time
from engine import Memory; from engine.review import missworker
from engine.review.misses import load
from engine.review.missreview import reviewing
missworker.THREADS_END_WITHIN_S = 0.05
_thread.start_new_thread(time.sleep, (30,))  # a thread threading does not list (a C library's, _thread's)
time.sleep(0.05)
mem = Memory(sys.argv[1])
entries = load(os.path.join(sys.argv[1], "kb-misses.txt"))[0]
helper = missworker.SecondReviewer(mem, entries, near=3, resident=False)
with reviewing(mem, [e.question for e in entries]):
    reviews = helper.reviews(mem)
print(helper.forked, len(reviews) == len(entries))
os._exit(0)
"""


def test_a_thread_started_below_threading_forbids_the_fork(demo):
    """A thread made with _thread (as a C extension or an old library does) is not in
    threading's list, but holds locks as any thread does: the process must not fork."""
    _log(demo, 40)
    r = subprocess.run([sys.executable, "-c", RAW_THREAD, str(demo)], cwd=REPO, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["False", "True"], r.stdout
