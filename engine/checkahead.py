"""Work started in a forked second process at a one-shot's start, its answer read when needed.

A fresh `kb route` spends ~20 ms importing the engine and ~20 ms in the stale check's stats
(engine/listing_cache.py's plan: one stat per folder and note, the syscall floor of a check
that misses no edit). Neither needs the other, so the process forks before its imports and
the child runs the stats while the parent imports; the parent reads the child's answer when
its check asks. A thread would not do: each stat releases the GIL for ~3 us, and the thread
then waits for the importing thread to let go of it.

Safe by construction:
- forked only from `kb`'s own entry (engine/cli.main with no argv), before any thread exists:
  a process with threads is never forked (its locks could be held by a thread the child lacks);
- the child writes each result to a pipe as one frame (a length, then a value) as soon as it
  has it, and leaves by os._exit (no atexit, no buffers flushed twice); a parent gone makes
  its write fail, so it ends: never hung, and reparented to init, never a zombie for long.
  The parent reaps it as soon as it has read the last key it was told of (or the pipe's end),
  not at its own exit: a kb route left it a zombie for 20-30 ms, longer under --rerank;
- any failure (no fork, a child killed, a cut or unreadable frame, a result never sent) is no
  answer for that key, and the caller does the work itself, as it did before.
"""

from __future__ import annotations

import atexit
import os
from typing import Callable, Iterator

from .childpipe import fork_sending, loads, may_fork, runnable_now, usable_cores, whole_frames

# The running child: (pid, the pipe's read end), until it has sent everything or failed.
_child: tuple[int, int] | None = None
_received: dict = {}  # what the child sent, by key, until a caller takes it
_pending = bytearray()  # bytes read past the last whole frame
_last_key: str | None = None  # the key the child sends last, once read it has nothing more


def wanted() -> bool:
    """Whether a second process would run beside this one now: a core idle this instant (no
    thread runnable on the machine but this one, on two usable cores or more). On a busy
    machine the child only takes this process's turn, and costs more than the work it takes
    (its start and the pages both processes then copy on write: ~10 ms of CPU). KB_CHECK_AHEAD
    set to 1 or 0 decides instead (benchmarks, tests)."""
    forced = os.environ.get("KB_CHECK_AHEAD")
    if forced in ("0", "1"):
        return forced == "1"
    runnable = runnable_now()
    return runnable is not None and runnable <= 1 and usable_cores() >= 2  # None: not Linux, no way to tell


def start(work: Callable[[], Iterator[tuple[str, object]]], last_key: str | None = None) -> bool:
    """Run `work()` in a forked child: each (key, value) it yields (a str, and a value childpipe
    can write) is sent as soon as it is made, for take(key) to read. `last_key`, when work
    yields no key after it, lets the child be reaped once that key is read. False when not
    started."""
    global _child, _last_key
    if _child is not None or not may_fork():
        return False
    _last_key = last_key
    _received.clear()
    _pending.clear()
    _child = fork_sending(work)
    if _child is None:
        return False
    atexit.register(_finish)
    return True


def _finish() -> None:
    """At exit: a child that has sent everything is reaped (not left a zombie until this
    process is gone); one still at work finds its pipe closed and ends."""
    global _child
    if _child is None:
        return
    pid, read_end = _child
    _child = None
    os.close(read_end)
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def take(key: str) -> object | None:
    """The value the child sent for `key`, waiting for it while the child is at work; None
    when it sent none (never started, failed, killed, or done without it). Taken once: a
    second call for the key returns None."""
    while key not in _received and _child is not None:
        _read_more()
    if _child is not None and _last_key in _received:
        _drain()
    return _received.pop(key, None)


def _drain() -> None:
    """The child has sent its last key: read to the pipe's end (it is leaving) and reap it.
    It wrote that key a moment ago, or ended long since: the wait is its exit's."""
    while _child is not None:
        _read_more()


def _read_more() -> None:
    """Read what the child sent next; at its end (or a failure), reap it."""
    global _child
    pid, read_end = _child
    try:
        chunk = os.read(read_end, 1 << 16)
    except OSError:
        chunk = b""
    if chunk:
        _pending.extend(chunk)
        _whole_frames()
        return
    _child = None
    os.close(read_end)
    _reap(pid)  # its exit status adds nothing: a frame that arrived whole is whole


def _whole_frames() -> None:
    for frame in whole_frames(_pending):
        try:
            item = loads(frame)
        except (EOFError, ValueError, TypeError):
            item = None
        if type(item) is tuple and len(item) == 2 and type(item[0]) is str:
            _received[item[0]] = item[1]


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
