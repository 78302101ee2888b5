"""Round 5 faults in kb's own caches (engine/sealedfile.py, listing_cache.py,
catalogue_cache.py): what another program can leave where a cache is read or written.

Real parts only: the demo fleet copied to tmp, indexed and asked by the real `kb` in a
subprocess, FIFOs made with mkfifo."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from _faults import DEPLOY_Q, kb, kb_json

# A hang is the bug: a healthy answer on the demo takes well under a second.
HANG_SECONDS = 30


def _age_index(base: Path) -> None:
    """Make the base's index files look a minute old, so the opening cache (which trusts only
    files older than RACY_NS) is read and written by the next answer without waiting."""
    old = os.stat(base / ".kb" / "index.db").st_mtime - 60
    for p in (base / ".kb").iterdir():
        if p.name.startswith("index.db"):
            os.utime(p, (old, old))


def _route(fleet: Path) -> dict:
    try:
        return kb_json(DEPLOY_Q, fleet, timeout=HANG_SECONDS)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"kb route hung for {HANG_SECONDS} s") from None


def test_a_fifo_where_the_opening_cache_is_read_does_not_hang_the_answer(demo):
    kb("index", str(demo))
    expected = _route(demo)
    zed = demo / "zed"
    _age_index(zed)
    os.mkfifo(zed / ".kb" / "opening.cache")
    got = _route(demo)
    assert got["results"] == expected["results"]


def test_a_fifo_where_the_kept_listing_is_read_does_not_hang_the_answer(demo):
    # The listing is kept only for a base of at least listing_cache.MIN_NOTES notes.
    zed = demo / "zed"
    for k in range(70):
        (zed / f"extra-{k:02}.md").write_text(f"# Extra {k}\n\nSearch for: extra {k}\n\nFiller text {k}.\n")
    kb("index", str(demo))
    expected = _route(demo)
    os.mkfifo(zed / ".kb" / "listing.cache")
    got = _route(demo)
    assert got["results"] == expected["results"]
