"""A miss log reviewed (`kb misses`): by one process, or by two when the log is long and a core free.

`review_misses` is the batch: each entry's review is engine/review/missreview.py's `review_one`.

Each entry's review is Python from end to end (the keyword ranking, the text leg, the
proposal), so a thread cannot share it; a second interpreter can. The parent reviews the
log's first half; the child, `python -m engine.review.missworker`, opens the same fleet, reviews the
second half in order and sends each review back as it is made (a length and a value frame
on its stdout). Once its own half is done, the parent reviews the second half from its end,
reading what the child has sent between entries, until the two meet: a child slowed by the
machine's load, or still starting, costs only the share it did not do.

The reviews are those one process makes: a review depends on the entry and the index, and
the caches either process fills are caches. Whatever goes wrong with the child (it cannot
start, it dies, it read a different index, a frame does not read) costs only speed: the
parent reviews what the child did not send. The order is the log's.

Where it can, the child is a fork of this process made once the review has begun (the fleet
open, the log's words stemmed, the resident leg built), not a fresh interpreter: a fresh one
paid ~1 s of start, imports, opening and its own warm-up before its first review, so at
10,000 entries it took only a sliver of the log (2.17 s wall against 2.24 s alone). A fork is
made only when no other thread is alive (a thread's held lock would stay held in the child)
and leaves by os._exit (no atexit, no buffer flushed twice); otherwise the fresh interpreter
is started as before.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from ..index import childpipe, collector, helperprocess
from ..clean import repaired
from ..index.indexpool import forget_after_fork
from ..memory import Memory
from .misses import MissEntry
from ..notes.owncode import python_running
from ..index.childpipe import runnable_now as _runnable_now, usable_cores as _usable_cores  # names the gate tests replace
from .misses import load, misses_path
from .missreview import NEAR_DEFAULT, MissesReport, MissReview, NearFile, Proposal, review_one, reviewing
from ..rank.question import cut_question


# Every entry is one more question asked of the text leg. A long log is asked of the resident
# leg (engine/index/resident.py): its build (numpy's import, ~0.1 ms a chunk) is paid once and each
# question after is a few times cheaper than FTS5's. Below this many entries, or fewer than
# one entry per CHUNKS_PER_MISS_FOR_RESIDENT chunks, the build would cost more than it saves.
RESIDENT_FROM_MISSES = 1_000
CHUNKS_PER_MISS_FOR_RESIDENT = 50
# `kb misses` reviews this many entries, most asked first, unless told otherwise: a review
# costs ~0.15 ms an entry, and a log appended to for years (or planted: 36 MB) is not a
# reason to wait minutes for entries asked once. The rest are counted, and stay in the log.
REVIEW_AT_MOST = 10_000
# A second process (engine/review/missworker.py) starts in ~0.3 s (imports, the index opened, the
# resident leg built), the time of ~2,000 entries here: below this many, one process is quicker.
TWO_FROM_ENTRIES = 4_000


def review_misses(memory, *, near: int = NEAR_DEFAULT, path: Path | None = None,
                  limit: int | None = None, second_process: bool | None = None) -> MissesReport:
    """The log at `path` (default: where this fleet's misses are written), most asked first,
    each question re-asked of today's index without being recorded; the first `limit`
    entries only, when given. Raises OSError when the log exists and cannot be read.

    second_process: review the log's second half in a second process (SecondReviewer);
    by default when the log is long and a core is free. The reviews are the same."""
    path = path or misses_path(memory.fleet.root)
    entries, problems = load(path)
    not_reviewed = max(len(entries) - limit, 0) if limit is not None else 0
    if not_reviewed:
        entries = entries[:limit]
    resident = len(entries) >= max(RESIDENT_FROM_MISSES, memory.snapshot().chunks // CHUNKS_PER_MISS_FOR_RESIDENT)
    if second_process is None:
        second_process = len(entries) >= TWO_FROM_ENTRIES and core_is_free()
    helper = None
    if second_process and len(entries) >= 2:
        helper = SecondReviewer(memory, entries, near=near, resident=resident)
    try:
        if resident:
            memory.hold_text_in_memory()
        with reviewing(memory, [e.question for e in entries]):
            if helper is not None:
                reviews = helper.reviews(memory)
            else:
                reviews = tuple(review_one(memory, e, near=near) for e in entries)
    finally:
        if helper is not None:
            helper.close()  # also when something above raised: no child left behind
    return MissesReport(path=path, exists=path.exists(), reviews=reviews, problems=tuple(problems),
                        not_reviewed=not_reviewed)


def core_is_free() -> bool:
    """A core idle, for a second process to take half the review: no other thread runnable
    beyond cores - 2 this instant (Linux's /proc/loadavg), and the one-minute load average
    at most cores - 1/2. The average alone lags the machine by a minute; the instant alone
    is one sample. Why not cores - 1: an idle machine that has just run `kb misses` (a loop
    of it, a benchmark) reads ~1 from that run alone. At load 2 on 2 cores the second
    process took half of this one's share and the review ended later (3.4 s against 2.5 s)."""
    cores = _usable_cores()
    if cores < 2:
        return False
    try:
        load = os.getloadavg()[0]
    except (OSError, AttributeError):  # no load average on this platform
        return False
    running = _runnable_now()
    idle_now = running is None or running - 1 <= cores - 2  # this thread is one of them
    return idle_now and load <= cores - 0.5


def command() -> list[str]:
    """How the child is started: this interpreter, running this module of this copy of the
    engine, never one found in the working directory (engine/notes/owncode.py)."""
    return python_running("engine.review.missworker")


class SecondReviewer:
    """The log's second half, handed to a second process as soon as this is made (its start
    overlaps this process's own); `reviews` then makes the log's reviews with it."""

    def __init__(self, memory: Memory, entries: list, *, near: int, resident: bool):
        self.entries = entries
        self.near = near
        self.half = len(entries) // 2
        self.from_child = 0  # how many of the reviews the child made (once `reviews` returns)
        self._resident = resident
        self.forked = False  # whether the child is a fork of this process (once `reviews` began)
        # A thread alive already (the reading room reviews from a worker, its event loop in
        # another) will not end before the review: such a process never forks, so its fresh
        # interpreter starts now, not after THREADS_END_WITHIN_S waited in vain in `reviews`.
        self._fork_later = FORK_WHEN_ALONE and childpipe.may_fork()
        if self._fork_later:
            self.child = _Child.none()  # forked in `reviews`, warm; a fresh interpreter if it cannot be
        else:
            self.child = self._fresh_child(memory)  # started now: its start overlaps this one's

    def _fresh_child(self, memory: Memory) -> "_Child":
        # The part of each question a review reads (repaired, cut as a route cuts it): a
        # planted 36 MB line is not sent whole.
        questions = [cut_question(repaired(e.question))[0] for e in self.entries[self.half:]]
        return _Child(memory.paths, questions, near=self.near, resident=self._resident,
                      state=state_of(memory.snapshot()))

    def _start_child(self, memory: Memory) -> None:
        if self.child.running or not self._fork_later:
            return
        forked = _Child.forked(memory, self.entries[self.half:], self.near)
        self.forked = forked is not None
        self.child = forked if forked is not None else self._fresh_child(memory)

    def reviews(self, memory: Memory) -> tuple:
        """Each entry's review, in order: the first half here, the second the child's, and
        what it has not sent when this process gets there made here, from the end. The
        caller holds `reviewing(memory, ...)`."""
        entries, near, half = self.entries, self.near, self.half
        try:
            self._start_child(memory)
            mine = [review_one(memory, e, near=near) for e in entries[:half]]
            theirs: list[MissReview] = []  # from the child, in order from `half`
            back: list[MissReview] = []  # made here, from the end
            while half + len(theirs) + len(back) < len(entries):
                for wire in self.child.ready():
                    try:
                        theirs.append(from_wire(entries[half + len(theirs)], wire))
                    except (TypeError, ValueError):  # a frame that does not read as a review
                        self.child.close()
                        break
                    if half + len(theirs) + len(back) >= len(entries):
                        break
                else:
                    back.append(review_one(memory, entries[len(entries) - 1 - len(back)], near=near))
            self.from_child = len(entries) - half - len(back)
            return tuple(mine + theirs[: len(entries) - half - len(back)] + back[::-1])
        finally:
            self.close()

    def close(self) -> None:
        """Stop the child, whatever it has not sent (again: nothing)."""
        self.child.close()


def state_of(snap) -> tuple:
    """What a review reads of the index: two processes compare it before sharing a log."""
    aliases = tuple((a.alias, a.canonical) for a in snap.aliases)
    notes = tuple((base, path, rec.hash) for base in sorted(snap.records) for path, rec in
                  sorted(snap.records[base].items()))
    return snap.chunks, snap.catalogue.n, aliases, notes


def to_wire(r: MissReview) -> tuple:
    p = r.proposal
    near = tuple((f.base, f.path, f.text_rank, f.keys, f.label_line, f.is_entry) for f in r.near)
    proposal = None if p is None else (p.line, p.alias, p.canonical, p.file, p.basis, p.similarity,
                                       p.verdict_with_it, p.top_with_it, p.score_with_it)
    return r.verdict_now, r.top_now, near, proposal, r.advice


def from_wire(entry, wire: tuple) -> MissReview:
    verdict, top, near, proposal, advice = wire
    return MissReview(entry, verdict, top, tuple(NearFile(*f) for f in near),
                      None if proposal is None else Proposal(*proposal), tuple(advice))


# Whether the child may be a fork of this process (tests set it False to exercise the fresh
# interpreter, the path of a process with threads or without fork).
FORK_WHEN_ALONE = True
# How long `reviews` waits for the resident leg's finished build threads to end before it
# gives up on forking (their work is done; only their exit is pending).
THREADS_END_WITHIN_S = 0.2


class _Child:
    """The second process, and the reviews it has sent so far: a fresh interpreter (made
    here, reading its work on stdin) or a fork (`forked`); either sends frames on a pipe."""

    def __init__(self, paths: list[str] | None = None, questions: list[str] | None = None, *,
                 near: int = 0, resident: bool = False, state: tuple | None = None):
        self._state = state
        self._buffer = bytearray()
        self._checked = False  # the child's first frame is its index's state, compared here
        self._proc: subprocess.Popen | None = None
        self._pid: int | None = None  # a forked child's (it has no Popen)
        self._fd: int | None = None  # the pipe its frames arrive on
        if paths is None:  # none(), forked(): made by those
            return
        try:
            self._proc = helperprocess.start(command())
            self._fd = self._proc.stdout.fileno()
            os.set_blocking(self._fd, False)
            work = childpipe.dumps((list(paths), questions, near, resident))
        except (OSError, ValueError, TypeError, subprocess.SubprocessError):  # no interpreter to start
            self.close()
            return
        # Written from a thread: the work is larger than a pipe holds, and the child reads it
        # only once it has started (~0.1 s), which this process does not wait for.
        threading.Thread(target=_write_and_close, args=(self._proc.stdin, work), daemon=True,
                         name="kb-misses-work").start()

    @classmethod
    def none(cls) -> "_Child":
        """No child (yet): sends nothing."""
        return cls()

    @classmethod
    def forked(cls, memory: Memory, entries: list, near: int) -> "_Child | None":
        """A fork of this process reviewing `entries` in order, its caches this process's:
        None when this process may not fork (another thread alive) or the fork fails."""
        if not _alone_within(THREADS_END_WITHIN_S):
            return None

        def reviews():  # run in the child
            signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C ends it with the parent
            forget_after_fork()  # SQLite connections are this process's own, opened anew
            for e in entries:
                yield to_wire(review_one(memory, e, near=near))

        forked = childpipe.fork_sending(reviews)
        if forked is None:  # no process to spare (a ulimit): the fresh interpreter cannot start either
            return None
        pid, read_end = forked
        child = cls()
        child._pid, child._fd, child._checked = pid, read_end, True  # its index is this one's
        helperprocess.widen_pipe_fd(read_end)
        os.set_blocking(read_end, False)
        return child

    @property
    def running(self) -> bool:
        """Started and not yet stopped (it may have ended by itself: stopped means reaped)."""
        return self._fd is not None

    def ready(self) -> list[tuple]:
        """The reviews sent since last asked, without waiting; none once the child failed."""
        if self._fd is None:
            return []
        try:
            if not select.select([self._fd], [], [], 0)[0]:
                return []
            chunk = os.read(self._fd, helperprocess.PIPE_BYTES)
        except BlockingIOError:
            return []
        except (OSError, ValueError):
            chunk = b""
        if not chunk:  # it ended: whatever it did not send is reviewed here
            self.close()
            return []
        self._buffer += chunk
        out = []
        for frame in childpipe.whole_frames(self._buffer):
            try:
                wire = childpipe.loads(frame)
            except (ValueError, EOFError, TypeError):
                wire = None
            if not self._checked:
                self._checked = True
                if wire == self._state:
                    continue
                wire = None  # another index than this one's (changed between the two opens)
            if not (isinstance(wire, tuple) and len(wire) == 5):
                self.close()
                return out
            out.append(wire)
        return out

    def close(self) -> None:
        proc, self._proc = self._proc, None
        pid, self._pid = self._pid, None
        fd, self._fd = self._fd, None
        if proc is not None:
            helperprocess.stop(proc)  # closes its pipes
        elif fd is not None:
            os.close(fd)
        if pid is not None:
            try:
                os.kill(pid, signal.SIGKILL)  # ended already, or stopped here: either way reaped
            except OSError:
                pass
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass


def _alone_within(seconds: float) -> bool:
    """No thread but this one, waiting up to `seconds` for finished threads to exit."""
    deadline = time.monotonic() + seconds
    while not childpipe.may_fork():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.002)
    return True


def _write_and_close(pipe, data: bytes) -> None:
    try:
        pipe.write(data)
        pipe.close()
    except (OSError, ValueError):
        pass  # the child is gone (or was stopped): the parent reviews what it did not send


def _serve() -> None:
    """The child: open the fleet as it stands (never updating it), send its state, then each
    question's review as it is made."""
    paths, questions, near, resident = childpipe.loads(sys.stdin.buffer.read())
    memory = Memory(paths, update=False)
    if resident:
        memory.hold_text_in_memory()
    out = sys.stdout.buffer

    def send(obj) -> None:
        childpipe.send_frame(out, obj)
        out.flush()  # each review as it is made: the parent reads them between its own

    collector.no_pass_at_exit()
    with reviewing(memory, questions) as snap:
        send(state_of(snap))
        for q in questions:
            send(to_wire(review_one(memory, MissEntry(0, "", "", q), near=near)))


def main() -> int:
    try:
        _serve()
    except (BrokenPipeError, KeyboardInterrupt):
        pass  # the parent has what it needs, or stopped: nothing waits for the rest
    return 0


if __name__ == "__main__":
    sys.exit(main())
