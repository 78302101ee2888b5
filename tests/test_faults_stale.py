"""A note replaced by one of the same size and the same mtime (`cp -p`, `rsync -t`, `touch -r`,
an unpacked archive) is answered as it is now, from the opening cache or from the index: a
stat of mtime and size alone served the old note's answer for good. Real `kb` processes on
a copy of the demo; the index files are dated back so the cache is kept, as a user's would
be after two seconds."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from conftest import run_kb

from engine.index import catalogue_cache

NOTE = "yaron/knowledge/protein-basics.md"


def _route(fleet: Path, question: str) -> dict:
    r = run_kb("route", "--json", question, str(fleet))
    assert r.returncode in (0, 1), r.stderr
    return json.loads(r.stdout)


@pytest.mark.parametrize("cache", [True, False])
def test_a_note_replaced_keeping_size_and_mtime_is_answered_as_it_is_now(demo, cache):
    hour_ago = time.time() - 3600
    for note in demo.rglob("*.md"):
        os.utime(note, (hour_ago, hour_ago))
    assert run_kb("index", str(demo)).returncode == 0
    minute_ago = time.time() - 60
    for f in demo.glob("*/.kb/index.db*"):
        os.utime(f, (minute_ago, minute_ago))  # old enough for the cache to be kept
    before = _route(demo, "how much protein per meal")
    assert before["verdict"] == "hit" and before["keyword_top"] == NOTE
    caches = list(demo.glob("*/.kb/" + catalogue_cache.CACHE_NAME))
    assert len(caches) == 3
    if not cache:
        for c in caches:
            c.unlink()

    path = demo / NOTE
    st = path.stat()
    data = path.read_bytes()
    new = data.replace(b"protein", b"zorblax")
    assert new != data and len(new) == len(data)
    tmp = path.with_name(".replacement.tmp")
    tmp.write_bytes(new)
    os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(tmp, path)
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)

    after = _route(demo, "how much zorblax per meal")
    assert after["verdict"] == "hit" and after["keyword_top"] == NOTE, after


def test_a_note_dated_in_the_future_is_read_once_not_on_every_question(demo):
    # An archive from a machine whose clock ran ahead: the mtime made the note "too young for
    # its stat to vouch for it" until the clock caught up, so every question re-indexed.
    from engine.notes.fleet import discover
    from engine.index.textindex import TextIndex

    note = demo / NOTE
    ahead = time.time() + 3600
    os.utime(note, (ahead, ahead))
    time.sleep(0.2)  # the ctime that utime set is now older than the update below
    idx = TextIndex(next(b for b in discover([demo]).bases if b.name == "yaron"))
    try:
        idx.update()
        assert not idx.stale()
        note.write_bytes(note.read_bytes().replace(b"protein", b"zorblax"))
        os.utime(note, (ahead, ahead))  # same size, same future mtime: the ctime still tells
        assert idx.stale()
    finally:
        idx.close()


def test_an_aliases_file_replaced_keeping_size_and_mtime_is_read_again(demo):
    from engine.memory import Memory

    aliases = demo / "kb-aliases.txt"
    aliases.write_text("qqqqqqq = protein\n", encoding="utf-8")
    memory = Memory(demo)
    assert memory.ask("zorblax", record_miss=False).verdict == "nothing"
    st = aliases.stat()
    tmp = demo / ".aliases.tmp"
    tmp.write_text("zorblax = protein\n", encoding="utf-8")
    os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(tmp, aliases)
    answer = memory.ask("zorblax", record_miss=False)
    assert "protein" in answer.terms and answer.keyword_top == NOTE  # the new alias is in force
