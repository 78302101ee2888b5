"""Round 6: what another program can put beside a base's index. The real `kb` in a
subprocess over a tmp copy of the demo, indexed first; FIFOs made with mkfifo."""

from __future__ import annotations

import os

import pytest
from _faults import DEPLOY_Q, kb, kb_json


@pytest.mark.parametrize("side", ["index.db", "index.db-wal", "index.db-shm", "index.db-journal"])
def test_a_fifo_beside_the_index_is_refused_by_name_and_never_waited_on(demo, side):
    # SQLite opens index.db-journal to see whether it is a hot journal: a FIFO planted there
    # held that open for good, so every `kb route` (and `kb boot`, run on every prompt) hung.
    # A FIFO at the other three read as "disk I/O error", which names neither file nor cause.
    kb("index", str(demo))
    fifo = demo / "zed" / ".kb" / side
    if fifo.exists():
        fifo.unlink()
    os.mkfifo(fifo)
    answer = kb_json(DEPLOY_Q, demo, timeout=60)
    assert (answer["verdict"], answer["keyword_top"]) == ("hit", "zed/knowledge/deploy-checklist.md")
    said = [line for line in answer["skipped"] if "zed/.kb/index.db" in line]
    assert said and f"{side} is not a regular file" in said[0], answer["skipped"]
    assert fifo.exists() and not fifo.is_file(), "another program's FIFO was removed"
