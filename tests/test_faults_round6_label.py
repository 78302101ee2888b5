"""Round 6: `kb label --write` with the note swapped for a FIFO between the proposal and the
write. The swap is forced into that window with a trace on the writing thread
(tests/_faults.run_with_fifo_swap); the FIFO, the notes and the fleet are real."""

from __future__ import annotations

from _faults import run_with_fifo_swap

from engine.notes.fleet import discover
from engine.review.labelcli import collect, write

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
    written, refused = run_with_fifo_swap(lambda: write(proposals, [str(note)], merge=False), note,
                                          ("read_bytes", "open_note"))
    assert written == [] and len(refused) == 1 and "not a regular file" in refused[0], refused
