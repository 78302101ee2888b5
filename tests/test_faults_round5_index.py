"""Round 5 faults in the index update (engine/index/indexupdate.py, readahead.py, notefiles.py):
a note replaced, between the listing and its read, by something that is not a note.

Real parts: the demo fleet in tmp, real FTS5 on disk, a real FIFO. The one thing arranged is
when the note is replaced: right after the update listed the base (on a large base the read
comes seconds later, on the read-ahead thread)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

import engine.index.indexupdate as indexupdate
from engine.notes.bignote import STREAM_ABOVE_BYTES
from conftest import copy_demo
from engine.memory import Memory

HANG_SECONDS = 30


def _unblock(fifo: Path) -> None:
    """Let a reader stuck on the FIFO go (what the bug needs to end at all)."""
    try:
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    except OSError:
        return  # nobody is reading it
    os.close(fd)


@pytest.mark.parametrize("size", ["small", "streamed"])
def test_a_note_replaced_by_a_fifo_after_the_listing_is_skipped_not_waited_on(tmp_path, monkeypatch, size):
    fleet = copy_demo(tmp_path / "demo")
    zed = fleet / "zed"
    # Several notes to read, so the read-ahead thread reads them; a streamed one is read in
    # two passes where it is written (engine/notes/bignote.py).
    filler = "word " * (STREAM_ABOVE_BYTES // 5 + 1) if size == "streamed" else ""
    for k in range(3):
        (zed / "knowledge" / f"extra-{k}.md").write_text(f"# Extra {k}\n\nSearch for: extra {k}\n\nbody {k}\n{filler}")
    victim = zed / "knowledge" / "extra-1.md"
    real = indexupdate.list_notes

    def listed_then_replaced(root, *a, **kw):
        found = real(root, *a, **kw)
        if Path(root) == zed and victim.exists():
            victim.unlink()
            os.mkfifo(victim)
        return found

    monkeypatch.setattr(indexupdate, "list_notes", listed_then_replaced)
    idx = Memory(fleet).indexes["zed"]
    done: list = []
    worker = threading.Thread(target=lambda: done.append(idx.update()), daemon=True)
    worker.start()
    worker.join(HANG_SECONDS)
    if worker.is_alive():
        _unblock(victim)
        worker.join(HANG_SECONDS)
        raise AssertionError(f"the update waited on a FIFO for {HANG_SECONDS} s")
    report = done[0]
    assert any(s.startswith("knowledge/extra-1.md: ") for s in report.skipped), report.skipped
    indexed = {r.path for r in idx.records()}
    assert {"knowledge/extra-0.md", "knowledge/extra-2.md"} <= indexed and "knowledge/extra-1.md" not in indexed
