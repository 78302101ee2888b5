"""Round 6: `kb boot`'s constitution (run on every prompt, by a hook) with a note swapped for a
FIFO. The swap is forced into the window between any check and the read, with a trace on the
reading thread; the FIFO and the files are real."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

from conftest import copy_demo

from engine.boot import constitution
from engine.fleet import discover


def test_a_constitution_file_swapped_for_a_fifo_after_its_check_is_not_waited_on(tmp_path):
    # constitution() asked is_file() and then read the file: a FIFO put there between the two
    # (a sync tool replacing index.md) held `kb boot`, and the prompt it was hooked to, for good.
    fleet = copy_demo(tmp_path / "demo")
    zed = next(b for b in discover([fleet]).bases if b.name == "zed")
    note = zed.root / "index.md"

    def swap_as_it_is_read(frame, event, arg):
        # the call that reads the file, whatever was checked before it
        if frame.f_code.co_name in ("read_text", "read_regular_text") and frame.f_locals.get("path") == note:
            note.unlink()
            os.mkfifo(note)
            sys.settrace(None)
        return None

    out: list[str] = []

    def boot():
        sys.settrace(swap_as_it_is_read)
        try:
            out.append(constitution(zed))
        finally:
            sys.settrace(None)

    reader = threading.Thread(target=boot, daemon=True)
    reader.start()
    reader.join(timeout=20)
    try:
        assert not reader.is_alive(), "kb boot's constitution waited on a FIFO"
    finally:
        if reader.is_alive():  # let the stuck open go, so the test run can end
            os.close(os.open(note, os.O_WRONLY | os.O_NONBLOCK))
    assert Path(note).exists() and not note.is_file(), "the swap did not happen: the test proves nothing"
    assert "## zed/agent.txt" in out[0] and "## zed/index.md" not in out[0]
