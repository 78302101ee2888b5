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


def _zero_fill(db) -> None:
    db.write_bytes(b"\0" * db.stat().st_size)


@pytest.mark.slow
def test_kb_index_processes_replacing_one_damaged_index_at_once_all_succeed(demo):
    # Each process found the file damaged and replaced it: deleting index.db and its side
    # files, then making a new one. A second replacer deleted the file the first had just made
    # and was building (or its -shm), and the first failed with "disk I/O error" (exit 1,
    # served from memory): a flake of test_two_kb_index_processes_on_one_base_at_once[damaged].
    # The replacement is now made under a lock, and a file found sound once it is held is kept.
    import subprocess
    import sys

    from conftest import REPO

    kb("index", str(demo))
    for attempt in range(8):
        for base in ("steve", "yaron", "zed"):
            _zero_fill(demo / base / ".kb" / "index.db")
        procs = [subprocess.Popen([sys.executable, "-m", "engine.cli", "index", str(demo)], cwd=REPO,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(4)]
        for p in procs:
            out, err = p.communicate(timeout=120)
            assert p.returncode == 0 and "Traceback" not in err, f"attempt {attempt}: {err[-1500:]}"
    answer = kb_json(DEPLOY_Q, demo)
    assert (answer["verdict"], answer["keyword_top"], answer["skipped"]) == ("hit", "zed/knowledge/deploy-checklist.md", [])
