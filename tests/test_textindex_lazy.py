"""What a TextIndex makes only when first used (its Path, its readers' semaphore): over 2,000
bases a one-shot builds every index and uses a handful, so these are not made up front. Made
late, each must still be the one thing it was: one semaphore per base however many threads
read it first, and a path that follows the index when it is pointed elsewhere."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from engine.index import indexpool
from engine.notes.fleet import Base
from engine.index.textindex import TextIndex


def test_the_path_is_the_bases_and_follows_the_index_when_pointed_elsewhere(tmp_path):
    base = Base(name="zed", root=tmp_path / "zed")
    index = TextIndex(base)
    assert index.path_str == str(base.index_path)
    assert index.path == base.index_path
    scratch = tmp_path / "scratch" / "index.db"
    index.path = scratch  # as the bench points an index at a scratch copy
    assert (index.path, index.path_str) == (scratch, str(scratch))
    late = TextIndex(base)  # pointed elsewhere before its Path was ever made
    late.path = scratch
    assert late.path == scratch


def test_threads_reading_a_base_first_at_once_share_one_bounded_semaphore(tmp_path):
    """Two semaphores for one base would let twice READERS_PER_BASE readers open connections."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter can
    try:
        for i in range(100):
            index = TextIndex(Base(name=f"b{i}", root=tmp_path / f"b{i}"))
            start = threading.Barrier(16)
            seen: list = []

            def first_read():
                start.wait()
                seen.append(index._readers)

            threads = [threading.Thread(target=first_read) for _ in range(16)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert len({id(s) for s in seen}) == 1, f"base {i}: {len({id(s) for s in seen})} semaphores"
    finally:
        sys.setswitchinterval(old)
    gate = index._readers
    assert all(gate.acquire(blocking=False) for _ in range(indexpool.READERS_PER_BASE))
    assert not gate.acquire(blocking=False)  # bounded as before
