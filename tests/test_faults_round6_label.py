"""Round 6: `kb label --write` with the note swapped for a FIFO between the proposal and the
write. The swap is forced into that window with a trace on the writing thread; the FIFO, the
notes and the fleet are real."""

from __future__ import annotations

import os
import sys
import threading

from engine.fleet import discover
from engine.labelcli import collect, write

BODY = "# Rollback first\n\nAlways roll back before you debug a failed deployment in production systems.\n"


def test_a_note_swapped_for_a_fifo_before_its_label_is_written_is_refused_not_waited_on(tmp_path):
    # The writer read the note again (to see it unchanged since the proposal) with
    # Path.read_bytes, which waits on a FIFO for a writer: a sync tool replacing the note in
    # that window held `kb label --write` for good.
    root = tmp_path / "notes"
    root.mkdir()
    note = root / "rule.md"
    note.write_text(BODY)
    proposals = collect(discover([root]))
    assert proposals, "no proposal to write: the test proves nothing"

    def swap_as_it_is_read(frame, event, arg):
        names = frame.f_locals
        if frame.f_code.co_name in ("read_bytes", "open_note", "open_regular") and note in (
                names.get("self"), names.get("path")):
            note.unlink()
            os.mkfifo(note)
            sys.settrace(None)
        return None

    out: list = []

    def label():
        sys.settrace(swap_as_it_is_read)
        try:
            out.append(write(proposals, [str(note)], merge=False))
        finally:
            sys.settrace(None)

    writer = threading.Thread(target=label, daemon=True)
    writer.start()
    writer.join(timeout=20)
    try:
        assert not writer.is_alive(), "kb label --write waited on a FIFO"
    finally:
        if writer.is_alive():  # let the stuck open go, so the test run can end
            os.close(os.open(note, os.O_WRONLY | os.O_NONBLOCK))
    written, refused = out[0]
    assert written == [] and len(refused) == 1 and "not a regular file" in refused[0], refused
    assert not note.is_file() and note.exists(), "the FIFO was replaced by a note"
