"""A large build's notes prepared in a second process while this one writes the index.

Preparing a note (engine/index/prepared.py) is Python; writing its rows is SQLite. A thread could
not overlap the two: sqlite3 lets go of the GIL around each row it steps, and takes it back
only when the preparing thread next yields it, so the writer waited on the preparer at
every row (measured: the build's CPU and wall were those of one thread, and its system time
rose with the hand-overs). A second process has its own interpreter: on a machine with a
core to spare, it prepares the notes ahead while this one writes them (and prepares a
share of them itself, `prepared_here`).

It is kb's one use of a second core, kept because it pays where it runs: a 60,000-chunk build
on a quiet machine took 3.43 s wall against 4.55 s in one process. Under load it does not
(6.40 against 5.90 s at load 1.5, 9.29 against 7.82 s at load 3: both wait for a core), so indexupdate.worker_wanted
starts it only for 4 MB of notes or more and a load of at most the cores less one
(docs/speed.md's figures).

The parent sends the child's notes to prepare (path, stat, hash held) on its stdin; the
child sends back each note's `to_wire` tuple in the same order, as a length and a value
frame on its stdout. Whatever goes wrong with the child (it cannot start, dies, sends a
frame that does not read, or fails on a note) costs only speed: the parent prepares that
note and every later one itself, with `prepare`, which then fails where it would have.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from . import helperprocess
from ..notes.owncode import python_running
from .prepared import Prepared, from_wire, prepare, to_wire

_FAILED = "failed"  # what the child sends for a note whose preparation raised


def command() -> list[str]:
    """How the child is started: this interpreter, running this module of this copy of the
    engine, never one found in the working directory (engine/notes/owncode.py)."""
    return python_running("engine.index.prepworker")


# Every HERE_EVERY-th note is prepared by this process, the rest by the child. This process
# also writes every note, which takes about half as long as preparing it (on the haystack,
# 1.6 s of SQLite against 3.3 s of preparation): with a share of the preparing it waits less
# for the child, and the two finish closer together.
HERE_EVERY = 5


def prepared_here(i: int) -> bool:
    return i % HERE_EVERY == HERE_EVERY - 1


class PrepWorker:
    """Each note's Prepared, asked for in the order given, made by a child process (all but
    the notes `prepared_here` picks, which this process prepares when their turn comes)."""

    def __init__(self, root: Path, notes: list[tuple[str, os.stat_result, str | None]]):
        self.root = root
        self._notes = notes
        self._proc = None  # the child (a subprocess.Popen) while it runs
        self._next = 0
        try:
            self._proc = helperprocess.start(command())
            theirs = [(rel, tuple(st), old) for i, (rel, st, old) in enumerate(notes) if not prepared_here(i)]
            work = (str(root), theirs)
            self._proc.stdin.write(helperprocess.dumps(work))
            self._proc.stdin.close()
        except helperprocess.START_FAILED:  # no interpreter to start
            self.close()

    def next_result(self, rel: str) -> Prepared:
        """The next note's Prepared; `rel` must be the next note in the order given."""
        i = self._next
        self._next += 1
        name, st, old = self._notes[i]
        if name != rel:
            raise RuntimeError(f"prepared out of order: expected {name!r}, got {rel!r}")
        if prepared_here(i):
            return prepare(self.root, rel, st, old)
        wire = self._receive()
        if wire is None:
            self.close()  # from here on this process prepares every note itself
            return prepare(self.root, rel, st, old)
        return from_wire(wire)

    def _receive(self) -> tuple | None:
        if self._proc is None:
            return None
        try:
            body = helperprocess.read_frame(self._proc.stdout)
            wire = helperprocess.loads(body) if body is not None else None
        except (OSError, ValueError, EOFError, TypeError):
            return None
        return wire if isinstance(wire, tuple) and len(wire) == 4 else None

    def close(self) -> None:
        """Stop the child (the build finished, or failed part way) and reap it."""
        proc, self._proc = self._proc, None
        helperprocess.stop(proc)


def _serve() -> None:
    """The child: read the work from stdin, send each note's preparation as it is made."""
    root, notes = helperprocess.loads(sys.stdin.buffer.read())
    out = sys.stdout.buffer
    for rel, fields, old in notes:
        try:
            wire = to_wire(prepare(Path(root), rel, os.stat_result(fields), old))
        except Exception:
            wire = _FAILED  # the parent prepares this note itself, and sees the error
        helperprocess.send_frame(out, wire)
    out.flush()


def main() -> None:
    try:
        _serve()
    except (BrokenPipeError, KeyboardInterrupt):
        pass  # the parent finished or stopped early: nothing is waiting for the rest


if __name__ == "__main__":
    main()
