"""Round 6b faults in the stale check's kept plan (engine/index/listing_cache.py): a listing file
sealed as kb seals it (so its CRC-32s hold) whose plan is not of kb's making."""

from __future__ import annotations

from engine.index.sealedfile import decode as _decode, encode as _encode
import os
import time

import pytest

from engine.index import indexupdate, listing_cache
from engine.notes.notefiles import list_notes
from engine.index.sealedfile import seal
from test_listing_cache import _base, _keep_listing_now

STAMP = ("an index state", 1)
# The plan's fields by place (listing_cache.keep_plan): 2 a ctime, 3/8/11 NUL-joined paths,
# 4-7/9/10 packed numbers. Each given a value of another type.
WRONG = [(2, "soon"), (3, 5), (3, ("a", "b")), (4, "bytes?"), (8, 7), (9, 1.5), (11, 9), (11, [b"x"])]


@pytest.mark.parametrize("place, value", WRONG, ids=[f"{p}-{type(v).__name__}" for p, v in WRONG])
def test_a_plan_holding_another_type_is_no_plan_and_the_check_still_decides(tmp_path, place, value):
    base = _base(tmp_path)
    old = time.time() - 3600
    for note in base.rglob("*.md"):
        os.utime(note, (old, old))
    _keep_listing_now(base)
    found, _ = list_notes(base)
    known = {rel: f"{st.st_mtime_ns}:{st.st_size}" for rel, st in found.items()}
    young_from = time.time_ns() - listing_cache.RACY_NS
    assert indexupdate.notes_changed(base, known, {}, [], young_from, STAMP) is False
    path = base / ".kb" / listing_cache.CACHE_NAME
    head, regions = listing_cache._payload(str(path))
    plan = list(head[1])
    plan[place] = value
    path.write_bytes(seal(listing_cache.MAGIC, (listing_cache.FORMAT, tuple(plan)),
                          [_encode(regions[0].value())]))
    assert listing_cache.unchanged(base, STAMP) is False
    assert indexupdate.notes_changed(base, known, {}, [], young_from, STAMP) is False  # the full check says so


def test_an_index_damaged_in_place_behind_its_cache_is_rebuilt_with_its_notes(demo):
    # The opening cache vouches for index.db by its stat: the stale check reads the cache and
    # opens no connection. A file damaged with its stat unchanged (overwritten in place, its
    # mtime put back; bit rot) was found damaged only when the text leg opened it, and replaced
    # by an empty index then: the answer said "rebuilt from the notes" and had no text rows.
    from _faults import kb_json
    from conftest import index_aged

    index_aged(demo)
    question = "deploy checklist"
    before = kb_json(question, demo)  # reads the index, keeps the cache
    assert kb_json(question, demo)["results"] == before["results"]  # now from the cache
    db = demo / "zed" / ".kb" / "index.db"
    st = os.stat(db)
    with open(db, "r+b") as f:
        f.write(b"\0" * st.st_size)
    os.utime(db, ns=(st.st_atime_ns, st.st_mtime_ns))
    after = kb_json(question, demo)
    assert after["index_was_rebuilt"] is True
    assert [r["path"] for r in after["results"]] == [r["path"] for r in before["results"]]
    assert after["results"] == before["results"]
