"""Round 6: `kb boot`'s constitution (run on every prompt, by a hook) with a note swapped for a
FIFO. The swap is forced into the window between any check and the read, with a trace on the
reading thread (tests/_faults.run_with_fifo_swap); the FIFO and the files are real."""

from __future__ import annotations

from _faults import run_with_fifo_swap
from conftest import copy_demo

from engine.review.boot import constitution
from engine.notes.fleet import discover


def test_a_constitution_file_swapped_for_a_fifo_after_its_check_is_not_waited_on(tmp_path):
    # constitution() asked is_file() and then read the file: a FIFO put there between the two
    # (a sync tool replacing index.md) held `kb boot`, and the prompt it was hooked to, for good.
    fleet = copy_demo(tmp_path / "demo")
    zed = next(b for b in discover([fleet]).bases if b.name == "zed")
    told = run_with_fifo_swap(lambda: constitution(zed), zed.root / "index.md", ("read_text", "read_regular_text"))
    assert "## zed/agent.txt" in told and "## zed/index.md" not in told
