"""Round 5 faults in kb's own caches (engine/index/sealedfile.py, listing_cache.py,
catalogue_cache.py): what another program can leave where a cache is read or written.

Real parts only: the demo fleet copied to tmp, indexed and asked by the real `kb` in a
subprocess, FIFOs made with mkfifo."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from _faults import DEPLOY_Q, kb, kb_json
from conftest import REPO

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


def test_a_fifo_where_the_purpose_fusion_stamp_is_read_is_refused_not_waited_on(demo):
    from engine.stages.purpose.stamp import STAMP_NAME

    kb("index", str(demo))
    os.mkfifo(demo / "zed" / ".kb" / STAMP_NAME)
    try:
        r = kb("route", DEPLOY_Q, str(demo), "--purpose", "documents", ok=False, timeout=HANG_SECONDS)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"kb route --purpose hung for {HANG_SECONDS} s") from None
    # The stamp cannot vouch for anything: refused in one line naming it, as an unreadable stamp is.
    assert r.returncode != 0 and STAMP_NAME in r.stderr and len(r.stderr.strip().splitlines()) <= 2, r.stderr


def _read_rerank_stamp(path: Path) -> str:
    """engine.stages.rerank.stamp.read_stamp(path) in a child, so a hang fails the test instead of
    holding it: what it returns or the refusal it raises, as one line."""
    code = ("import sys\nfrom engine.stages.rerank.stamp import read_stamp\nfrom engine.stages.rerank.errors import RerankUnavailable\n"
            "try:\n    print(read_stamp(__import__('pathlib').Path(sys.argv[1])))\n"
            "except RerankUnavailable as e:\n    print('refused:', e)\n")
    try:
        r = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True,
                           timeout=HANG_SECONDS, cwd=REPO)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"reading the rerank stamp hung for {HANG_SECONDS} s") from None
    assert "Traceback" not in r.stderr, r.stderr[-2000:]
    return r.stdout.strip()


def test_a_fifo_or_bytes_not_utf8_where_the_rerank_stamp_is_read_are_refused(tmp_path):
    fifo = tmp_path / "fifo" / "rerank-stamp.json"
    fifo.parent.mkdir()
    os.mkfifo(fifo)
    assert _read_rerank_stamp(fifo).startswith("refused:")
    latin = tmp_path / "latin" / "rerank-stamp.json"
    latin.parent.mkdir()
    latin.write_bytes(b'{"model": "caf\xe9"}')
    assert _read_rerank_stamp(latin).startswith("refused:")


@pytest.mark.parametrize("planted", ["fifo", "not utf-8"])
def test_a_session_file_kb_did_not_write_is_no_memory_not_a_hang_nor_a_traceback(demo, planted):
    from engine.review.boot import session_file

    kb("boot", "--session", "s1", "--text", str(demo), stdin=DEPLOY_Q)  # remembers zed for s1
    remembered = session_file(demo, "s1")
    remembered.unlink()
    if planted == "fifo":
        os.mkfifo(remembered)
    else:
        remembered.write_bytes(b"\xff\xfezed")
    try:
        r = kb("boot", "--session", "s1", "--text", str(demo), stdin=DEPLOY_Q, timeout=HANG_SECONDS)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"kb boot hung for {HANG_SECONDS} s") from None
    # Nothing remembered can be read: the constitution is handed over again, as for a new session.
    assert "VESTA: this message is for zed" in r.stdout, r.stdout[:500]
