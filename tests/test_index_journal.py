"""The index file's journal: a new file's first build under SQLite's rollback journal (it
writes the build once, where WAL wrote it twice), WAL from then on so readers never wait on
a writer; a file replacing a damaged one in WAL from the start (indexschema.use_wal)."""

from __future__ import annotations

import os
import sqlite3

from conftest import copy_demo, run_kb

from engine.notes.fleet import Base
from engine.index.textindex import TextIndex


def _journal(db) -> str:
    con = sqlite3.connect(db)
    try:
        return con.execute("PRAGMA journal_mode").fetchone()[0]
    finally:
        con.close()


def test_a_first_build_leaves_every_index_in_wal(tmp_path):
    fleet = copy_demo(tmp_path / "demo")
    done = run_kb("index", str(fleet))
    assert done.returncode == 0, done.stderr
    dbs = sorted(fleet.glob("*/.kb/index.db"))
    assert len(dbs) == 3 and [_journal(db) for db in dbs] == ["wal"] * 3
    assert not any(os.path.exists(str(db) + "-journal") for db in dbs)


def test_a_new_file_waits_for_its_build_and_a_replaced_one_does_not(tmp_path):
    fleet = copy_demo(tmp_path / "demo")
    base = Base("zed", fleet / "zed")
    index = TextIndex(base)
    try:
        index.records()  # opens (and makes) the file, builds nothing
        assert _journal(base.index_path) == "delete"
        index.update()
        assert _journal(base.index_path) == "wal"
    finally:
        index.close()
    base.index_path.write_bytes(b"\0" * 8192)  # damaged: replaced on the next open
    index = TextIndex(base)
    try:
        con = index._open_checked()
        assert index.was_rebuilt and _journal(base.index_path) == "wal"
        con.close()
    finally:
        index.close()
