"""A large build's notes prepared by a second process (engine/index/prepworker.py) give the index
the one process gives, row for row, and anything wrong with that process costs only speed.

Every build here is real: a haystack base on disk, SQLite files, the child a real process.
Which path a build takes is forced through indexupdate.worker_wanted, the one place that
decides it (by size and load) in use.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest

from engine.index import indexupdate, prepworker
from engine.notes.fleet import Base
from engine.notes.mapfiles import is_map_file
from engine.index.textindex import TextIndex
from kbtools.haystack import generate


@pytest.fixture(scope="module")
def hay(tmp_path_factory) -> Path:
    """One base of a generated haystack (notes in both languages), and notes that cannot be
    read or that split lines in other ways, so each kind of answer crosses the pipe."""
    root = tmp_path_factory.mktemp("hay") / "h"
    generate(root, 400, seed=5, bases=1, questions=5)
    base = next(p for p in root.iterdir() if p.is_dir())
    (base / "binary.md").write_bytes(b"# B\n\x00\x01")
    (base / "empty.md").write_text("  \n")
    (base / "latin1.md").write_bytes("# Caf\xe9\n".encode("latin-1"))
    (base / "crlf.md").write_bytes(b"# Windows\r\n\r\nSearch for: crlf, line ends\r\n\r\nbody text\r\n## Part\r\nmore\r\n")
    return base


def _copy(base: Path, dest: Path) -> Base:
    shutil.copytree(base, dest, ignore=shutil.ignore_patterns(".kb"))
    return Base(dest.name, dest)


def _rows(base: Base) -> dict[str, list]:
    con = sqlite3.connect(base.index_path)
    try:
        return {
            "files": con.execute("SELECT id, path, hash, is_entry, title, purpose, keys, species, label_line,"
                                 " label_under_title, title_line, links, date, chunks, problems FROM files ORDER BY id").fetchall(),
            "chunks": con.execute("SELECT rowid, * FROM chunks ORDER BY rowid").fetchall(),
            "postings": con.execute("SELECT term, doc, cnt FROM chunks_vocab ORDER BY term").fetchall(),
            "skipped": con.execute("SELECT value FROM meta WHERE key IN ('skipped', 'skipped_stats') ORDER BY key").fetchall(),
        }
    finally:
        con.close()


def _build(base: Base, second_process: bool, monkeypatch, force: bool = False):
    monkeypatch.setattr(indexupdate, "worker_wanted", lambda n_bytes: second_process)
    index = TextIndex(base)
    try:
        return index.update(force=force)
    finally:
        index.close()


@pytest.fixture
def prepared_by_child(monkeypatch) -> list[int]:
    """Counts the notes whose preparation came back from the child, not made here."""
    seen = [0]
    real = prepworker.from_wire

    def counted(wire):
        seen[0] += 1
        return real(wire)

    monkeypatch.setattr(prepworker, "from_wire", counted)
    return seen


def test_a_build_prepared_by_a_second_process_is_the_same_index(hay, tmp_path, monkeypatch, prepared_by_child):
    one, two = _copy(hay, tmp_path / "one"), _copy(hay, tmp_path / "two")
    r1 = _build(one, False, monkeypatch)
    r2 = _build(two, True, monkeypatch)
    notes = [p.relative_to(two.root).as_posix() for p in two.root.rglob("*.md")]
    read = sum(not is_map_file(n) for n in notes)
    # Problems included; a share of the notes is prepared here while the child runs ahead.
    assert prepared_by_child[0] == sum(not prepworker.prepared_here(i) for i in range(read))
    assert (r2.added, r2.chunks, sorted(r2.skipped)) == (r1.added, r1.chunks, sorted(r1.skipped))
    assert len(r1.skipped) == 3 and r1.chunks > 300
    assert _rows(two) == _rows(one)

    # Then an update: a note touched (same bytes: its hash crosses, not its rows), one edited,
    # one removed, every one forced once more.
    for b in (one, two):
        notes = sorted(p for p in b.root.rglob("*.md") if p.parent != b.root)
        os.utime(notes[0], ns=(notes[0].stat().st_atime_ns, notes[0].stat().st_mtime_ns + 10**9))
        notes[1].write_text(notes[1].read_text(encoding="utf-8") + "\n## Added\nrecuperações confiáveis\n", encoding="utf-8")
        notes[2].unlink()
    prepared_by_child[0] = 0
    r1, r2 = _build(one, False, monkeypatch), _build(two, True, monkeypatch)
    # (Notes copied a moment ago are too young for their stat to vouch: all are read again.)
    assert prepared_by_child[0] >= 2 and (r2.changed, r2.removed) == (r1.changed, r1.removed) == (1, 1)
    assert _rows(two) == _rows(one)
    r1, r2 = _build(one, False, monkeypatch, force=True), _build(two, True, monkeypatch, force=True)
    assert _rows(two) == _rows(one)


@pytest.mark.parametrize("child", [
    [sys.executable, "-c", "import sys; sys.exit(3)"],  # dies before reading its work
    [sys.executable, "-c", "import sys; sys.stdin.buffer.read()"],  # reads it and sends nothing
    [sys.executable, "-c", "import sys; sys.stdin.buffer.read(); sys.stdout.buffer.write(bytes([5, 0, 0, 0]) + b'xxxxx')"],
    ["/nonexistent/python3"],  # cannot be started at all
], ids=["dies", "silent", "bad-frame", "no-interpreter"])
def test_a_child_that_fails_costs_only_speed(hay, tmp_path, monkeypatch, child, prepared_by_child):
    one, two = _copy(hay, tmp_path / "one"), _copy(hay, tmp_path / "two")
    _build(one, False, monkeypatch)
    monkeypatch.setattr(prepworker, "command", lambda: child)
    report = _build(two, True, monkeypatch)
    assert prepared_by_child[0] == 0 and report.added > 0
    assert _rows(two) == _rows(one)


def test_a_child_that_stops_part_way_leaves_the_rest_to_this_process(hay, tmp_path, monkeypatch, prepared_by_child):
    one, two = _copy(hay, tmp_path / "one"), _copy(hay, tmp_path / "two")
    _build(one, False, monkeypatch)
    # The real child, cut off after its fifth note.
    script = ("import sys, engine.index.prepworker as w; out = sys.stdout.buffer; n = [0]\n"
              "class Cut:\n"
              "    def write(self, b):\n"
              "        n[0] += 1\n"
              "        if n[0] > 10: sys.exit(0)\n"  # two writes a note: its length, its frame
              "        out.write(b)\n"
              "    def flush(self): out.flush()\n"
              "sys.stdout = type('S', (), {'buffer': Cut()})()\n"
              "w._serve()\n")
    monkeypatch.setattr(prepworker, "command", lambda: [sys.executable, "-c", script])
    _build(two, True, monkeypatch)
    assert prepared_by_child[0] == 5
    assert _rows(two) == _rows(one)


def test_the_second_process_is_wanted_for_a_large_build_on_a_free_core(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setattr(os, "getloadavg", lambda: (0.4, 0.4, 0.4))
    assert indexupdate.worker_wanted(indexupdate.WORKER_MIN_BYTES)
    assert not indexupdate.worker_wanted(indexupdate.WORKER_MIN_BYTES - 1)  # an edit, a small base
    monkeypatch.setattr(os, "getloadavg", lambda: (1.5, 0.4, 0.4))
    assert not indexupdate.worker_wanted(10 * indexupdate.WORKER_MIN_BYTES)  # no core to spare
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)
    assert not indexupdate.worker_wanted(10 * indexupdate.WORKER_MIN_BYTES)  # one core
