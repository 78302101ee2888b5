"""Round 5b: kbtools.resident_identity compares the resident leg with FTS5 on an indexed
fleet, opened without updating it. On a fleet indexed by another schema (a copy of a haystack
indexed before an upgrade) the index opened empty, and every comparison agreed: nothing
against nothing. A real index on disk, the tool as a process."""

from __future__ import annotations

import sqlite3
import subprocess
import sys

from conftest import REPO, run_kb
from engine.index.indexschema import SCHEMA_VERSION


def _tool(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kbtools.resident_identity", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=600)


def test_a_fleet_whose_index_is_another_schemas_is_refused_not_passed(demo):
    assert run_kb("index", str(demo)).returncode == 0
    db = demo / "zed" / ".kb" / "index.db"
    con = sqlite3.connect(db)
    con.execute(f"PRAGMA user_version = {SCHEMA_VERSION - 1}")
    con.close()
    r = _tool(str(demo))
    assert r.returncode == 2, r.stdout
    assert "differences" not in r.stdout
    assert r.stderr.count("\n") == 1 and "zed" in r.stderr and "kb index" in r.stderr, r.stderr


def test_an_indexed_fleet_is_compared(demo):
    assert run_kb("index", str(demo)).returncode == 0
    r = _tool(str(demo))
    assert r.returncode == 0, r.stderr
    assert r.stdout.endswith(": 0 differences\n") and not r.stdout.startswith("0 ")
