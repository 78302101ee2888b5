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
- the child writes one message to a pipe and leaves by os._exit (no atexit, no buffers
  flushed twice); a parent gone makes its write fail, so it ends: never hung, and reparented
  to init, never a zombie for long. The parent reaps it when it reads the answer;
- any failure (no fork, a child killed, a short or unreadable message) is no answer, and the
  caller does the work itself, as it did before.
"""

from __future__ import annotations

import _thread
import marshal
import os
import sys
from typing import Callable

# The running child: (pid, the pipe's read end), until its answer is read.
_child: tuple[int, int] | None = None
_answer: dict | None = None


def wanted() -> bool:
    """Whether a second process would run beside this one now: a core idle this instant (no
    thread runnable on the machine but this one, on two usable cores or more). On a busy
    machine the child only takes this process's turn, and costs more than the work it takes
    (its start and the pages both processes then copy on write: ~10 ms of CPU). KB_CHECK_AHEAD
    set to 1 or 0 decides instead (benchmarks, tests)."""
    forced = os.environ.get("KB_CHECK_AHEAD")
    if forced in ("0", "1"):
        return forced == "1"
    try:
        cores = len(os.sched_getaffinity(0))  # the cores this process may run on
        with open("/proc/loadavg", "rb") as f:
            runnable = int(f.read().split()[3].split(b"/")[0])  # runnable threads, this one among them
    except (AttributeError, OSError, ValueError, IndexError):
        return False  # not Linux: no way to tell, so no second process
    return cores >= 2 and runnable <= 1


def start(work: Callable[[], dict]) -> bool:
    """Run `work()` in a forked child (its result must be marshal-able); False when not started."""
    global _child, _answer
    if _child is not None or not _alone():
        return False
    _answer = None
    try:
        read_end, write_end = os.pipe()
    except OSError:
        return False
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return False
    if pid == 0:  # the child: do the work, send it, leave without running the parent's exit
        code = 1
        try:
            os.close(read_end)
            _send(write_end, marshal.dumps(work()))
            code = 0
        finally:
            os._exit(code)
    os.close(write_end)
    _child = (pid, read_end)
    return True


def answer() -> dict:
    """The child's result, waiting for it if it is still at work; {} when there is none (never
    started, failed, killed). Read once: later calls return the same dict, from which a
    caller removes what it has used."""
    global _child, _answer
    if _answer is not None:
        return _answer
    if _child is None:
        return {}
    pid, read_end = _child
    _child = None
    chunks = []
    try:
        while chunk := os.read(read_end, 1 << 16):
            chunks.append(chunk)
    except OSError:
        chunks = []
    finally:
        os.close(read_end)
    status = _reap(pid)
    try:
        got = marshal.loads(b"".join(chunks)) if status == 0 else {}
    except (EOFError, ValueError, TypeError):
        got = {}
    _answer = got if type(got) is dict else {}
    return _answer


def _reap(pid: int) -> int | None:
    try:
        _, status = os.waitpid(pid, 0)
    except ChildProcessError:
        return None
    return os.waitstatus_to_exitcode(status)


def _send(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data):]


def _alone() -> bool:
    """Whether this process may fork: POSIX, and no thread but this one."""
    if not hasattr(os, "fork"):
        return False
    threading = sys.modules.get("threading")
    return _thread._count() == 0 and (threading is None or threading.active_count() == 1)
