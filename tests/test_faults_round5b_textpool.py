"""Round 5b: the resident text leg reads a hit's chunk when something first reads it
(TextHits, engine/rank/textpool.py). A long-lived Memory (the reading room, kb serve) re-indexes
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


def test_two_threads_reading_one_hits_chunk_both_get_it(demo):
    """ChunkText.get tested `_value`, then called `_load`: a thread that tested before another
    finished found `_load` already dropped (None) and raised TypeError. The reading room reads
    an answer from its workers and its screen at once. The interleaving is made certain with a
    trace that holds the second reader after its test until the first reader is done."""
    import sys
    import threading

    from engine.index import textsearch

    memory = Memory([str(demo)], resident=True)
    memory.snapshot()
    assert memory.wait_resident()
    answer = memory.route(QUESTION, top=1)
    chunk = answer.text[len(answer.text) - 1].chunk  # a row off the page: not read yet
    assert repr(chunk) == "ChunkText(<not read yet>)"
    code = textsearch.ChunkText.get.__code__
    first_done, second_waiting = threading.Event(), threading.Event()
    got: dict[str, object] = {}

    def hold_after_the_test(frame, event, arg):
        if frame.f_code is not code:
            return None
        lines = []

        def local(frame, event, arg):
            # Held before get's second line runs: its first (the test of `_value`) has run.
            if event == "line":
                lines.append(frame.f_lineno)
                if len(lines) == 2:
                    second_waiting.set()
                    first_done.wait(10)
            return local
        return local

    def second():
        sys.settrace(hold_after_the_test)
        try:
            got["second"] = chunk.get()
        except Exception as e:  # the fault: recorded, asserted below
            got["second"] = e
        finally:
            sys.settrace(None)

    t = threading.Thread(target=second)
    t.start()
    assert second_waiting.wait(10)
    got["first"] = chunk.get()
    first_done.set()
    t.join(10)
    assert got["second"] == got["first"] and got["first"][1]
