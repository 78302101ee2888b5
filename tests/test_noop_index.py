"""A `kb index` that finds nothing to do writes nothing: the index file keeps its stat, so
every cache keyed on it (the opening, the spelling, the listing's plan) stays valid. It used
to stamp `indexed_at_ns` on every run, and the next `kb route` at 60,000 chunks rebuilt its
caches (~1 s) after each no-op `kb index` a hook ran."""

from __future__ import annotations

import os
import time

from conftest import index_aged, run_kb


def _index_files(fleet):
    return {str(f.relative_to(fleet)): (os.stat(f).st_size, os.stat(f).st_mtime_ns)
            for f in sorted(fleet.glob("*/.kb/index.db*")) if os.stat(f).st_size}


def test_a_kb_index_with_nothing_to_do_leaves_every_index_file_as_it_was(demo):
    index_aged(demo)
    before = _index_files(demo)
    assert before  # the three bases' index.db
    r = run_kb("index", str(demo))
    assert r.returncode == 0, r.stderr
    assert "0 added, 0 changed, 0 removed" in r.stdout
    assert _index_files(demo) == before


def test_an_edit_is_still_written_and_stamped(demo):
    index_aged(demo)
    before = _index_files(demo)
    note = demo / "yaron" / "knowledge" / "protein-basics.md"
    time.sleep(0.01)
    note.write_text(note.read_text() + "\nCreatine is not protein.\n")
    r = run_kb("index", str(demo))
    assert "1 changed" in r.stdout, r.stdout
    after = _index_files(demo)
    assert after != before
    assert "creatine" in run_kb("route", "creatine", str(demo), "--json").stdout.lower()


def test_a_note_young_against_the_last_stamp_is_read_and_the_stamp_moves_on(demo):
    # A note whose ctime is past the last update may have changed unseen: it is re-read,
    # and the stamp advances so that it is not re-read again (not skipped as a no-op).
    index_aged(demo)
    note = demo / "zed" / "knowledge" / "deploy-checklist.md"
    os.chmod(note, 0o644)  # ctime moves, mtime and size do not
    before = _index_files(demo)
    r = run_kb("index", str(demo))
    assert r.returncode == 0, r.stderr
    assert _index_files(demo) != before  # stamped: the note is no longer young
    again = _index_files(demo)
    run_kb("index", str(demo))
    assert _index_files(demo) == again  # and now nothing is left to do
