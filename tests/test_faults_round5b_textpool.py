"""Round 5b: the resident text leg reads a hit's chunk when something first reads it
(TextHits, engine/textpool.py). A long-lived Memory (the reading room, kb serve) re-indexes
between an answer and the read of a row further down its list. Real index on disk, real
resident leg."""

from __future__ import annotations

import os
import time

from engine.memory import Memory

QUESTION = "review database deploy merge"
GONE = "zed/protocols/code-review.md"


def test_a_hit_read_after_its_note_was_replaced_never_shows_another_notes_text(demo):
    """Chunk rowids carry their file's id, and a file id freed by a deleted note is the next
    one given out: the old answer's row for the deleted note read the new note's chunk, its
    text and heading shown under the deleted note's path."""
    memory = Memory([str(demo)], resident=True)
    memory.snapshot()
    assert memory.wait_resident()
    answer = memory.route(QUESTION, top=1)  # the page shows one row; the rest are read later
    k = answer.text.ids().index(GONE)
    assert k > 0  # not on the page, so not read yet
    (demo / GONE).unlink()
    (demo / "zed" / "protocols" / "bananas.md").write_text(
        "# Bananas\n\nBananas are yellow and grow in bunches on tall plants.\n", encoding="utf-8")
    time.sleep(0.02)
    memory.refresh()
    hit = answer.text[k]
    assert (hit.base, hit.path) == ("zed", "protocols/code-review.md")
    assert "Bananas" not in hit.heading_path and "Bananas" not in hit.text
