"""A long miss log reviewed by two processes when a core is free (`kb misses`).

Each entry's review is Python from end to end (the keyword ranking, the text leg, the
proposal), so a thread cannot share it; a second interpreter can. The parent reviews the
log's first half; the child, `python -m engine.missworker`, opens the same fleet, reviews the
second half in order and sends each review back as it is made (a length and a marshal frame
on its stdout). Once its own half is done, the parent reviews the second half from its end,
reading what the child has sent between entries, until the two meet: a child slowed by the
machine's load, or still starting, costs only the share it did not do.

The reviews are those one process makes: a review depends on the entry and the index, and
the caches either process fills are caches. Whatever goes wrong with the child (it cannot
start, it dies, it read a different index, a frame does not read) costs only speed: the
parent reviews what the child did not send. The order is the log's.
"""

from __future__ import annotations

import marshal
import os
import select
import subprocess
import sys
import threading

from . import collector, helperprocess
from .clean import repaired
from .memory import Memory
from .misses import MissEntry
from .owncode import python_running
from .missreview import MissReview, NearFile, Proposal, review_one, reviewing
from .question import cut_question


def command() -> list[str]:
    """How the child is started: this interpreter, running this module of this copy of the
    engine, never one found in the working directory (engine/owncode.py)."""
    return python_running("engine.missworker")


class SecondReviewer:
    """The log's second half, handed to a second process as soon as this is made (its start
    overlaps this process's own); `reviews` then makes the log's reviews with it."""

    def __init__(self, memory: Memory, entries: list, *, near: int, resident: bool):
        self.entries = entries
        self.near = near
        self.half = len(entries) // 2
        self.from_child = 0  # how many of the reviews the child made (once `reviews` returns)
        # The part of each question a review reads (repaired, cut as a route cuts it): a
        # planted 36 MB line is not sent whole.
        questions = [cut_question(repaired(e.question))[0] for e in entries[self.half:]]
        self.child = _Child(memory.paths, questions, near=near, resident=resident, state=state_of(memory.snapshot()))

    def reviews(self, memory: Memory) -> tuple:
        """Each entry's review, in order: the first half here, the second the child's, and
        what it has not sent when this process gets there made here, from the end. The
        caller holds `reviewing(memory, ...)`."""
        entries, near, half = self.entries, self.near, self.half
        try:
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


class _Child:
    """The second process, and the reviews it has sent so far."""

    def __init__(self, paths: list[str], questions: list[str], *, near: int, resident: bool, state: tuple):
        self._state = state
        self._buffer = bytearray()
        self._checked = False  # the child's first frame is its index's state, compared here
        self._proc: subprocess.Popen | None = None
        try:
            self._proc = helperprocess.start(command())
            os.set_blocking(self._proc.stdout.fileno(), False)
            work = marshal.dumps((list(paths), questions, near, resident))
        except (OSError, ValueError, TypeError, subprocess.SubprocessError):  # no interpreter to start
            self.close()
            return
        # Written from a thread: the work is larger than a pipe holds, and the child reads it
        # only once it has started (~0.1 s), which this process does not wait for.
        threading.Thread(target=_write_and_close, args=(self._proc.stdin, work), daemon=True,
                         name="kb-misses-work").start()

    @property
    def running(self) -> bool:
        """Started and not yet stopped (it may have ended by itself: stopped means reaped)."""
        return self._proc is not None

    def ready(self) -> list[tuple]:
        """The reviews sent since last asked, without waiting; none once the child failed."""
        if self._proc is None:
            return []
        try:
            if not select.select([self._proc.stdout], [], [], 0)[0]:
                return []
            chunk = os.read(self._proc.stdout.fileno(), helperprocess.PIPE_BYTES)
        except BlockingIOError:
            return []
        except (OSError, ValueError):
            chunk = b""
        if not chunk:  # it ended: whatever it did not send is reviewed here
            self.close()
            return []
        self._buffer += chunk
        out = []
        for frame in helperprocess.whole_frames(self._buffer):
            try:
                wire = marshal.loads(frame)
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
        helperprocess.stop(proc)


def _write_and_close(pipe, data: bytes) -> None:
    try:
        pipe.write(data)
        pipe.close()
    except (OSError, ValueError):
        pass  # the child is gone (or was stopped): the parent reviews what it did not send


def _serve() -> None:
    """The child: open the fleet as it stands (never updating it), send its state, then each
    question's review as it is made."""
    paths, questions, near, resident = marshal.loads(sys.stdin.buffer.read())
    memory = Memory(paths, update=False)
    if resident:
        memory.hold_text_in_memory()
    out = sys.stdout.buffer

    def send(obj) -> None:
        helperprocess.send_frame(out, obj)
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
