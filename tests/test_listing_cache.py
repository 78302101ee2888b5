"""The kept note listing (engine/index/listing_cache.py): the stale check stats the folders it kept
instead of listing them, and must see every change the walk sees."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from engine.index import indexupdate, listing_cache
from engine.memory import Memory
from engine.notes.notefiles import list_notes
from tests.conftest import copy_demo, run_kb

NOTES = 80  # more than listing_cache.MIN_NOTES, in several folders


def _base(root: Path) -> Path:
    base = root / "big"
    for i in range(NOTES):
        folder = base / f"topic{i % 8}" / ("deep" if i % 3 == 0 else "")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"note{i}.md").write_text(f"# Note {i}\n\nSearch for: `word{i}`\n\nText of note {i}.\n")
    (base / "empty").mkdir()
    (base / ".kb").mkdir()
    return base


def _keep_listing_now(base: Path) -> None:
    """Keep the listing as the walk sees it this moment (the racy guard is tested apart), then
    let the coarse clock move on, so that a change made next moves a folder's stat."""
    folders: list = []
    list_notes(base, folders)
    kept = []
    for under, names in folders:
        st = os.stat(base / under) if under else os.stat(base)
        kept.append((under, listing_cache._sig(st), tuple(names)))
    listing_cache._store(str(base), str(base / ".kb" / listing_cache.CACHE_NAME), kept)
    time.sleep(0.05)


def _seen(found) -> dict[str, tuple[int, int]]:
    return {rel: (st.st_mtime_ns, st.st_size) for rel, st in found[0].items()}


def _edit(base):
    p = base / "topic1" / "note1.md"
    p.write_text(p.read_text() + "more\n")


def _edit_same_size(base):
    p = base / "topic2" / "note2.md"
    p.write_text(p.read_text().replace("Text", "Txet"))


def _add(base):
    (base / "topic4" / "new.md").write_text("# New\n")


def _add_in_empty_folder(base):
    (base / "empty" / "new.md").write_text("# New\n")


def _add_in_new_folder(base):
    (base / "topic5" / "fresh").mkdir()
    (base / "topic5" / "fresh" / "new.md").write_text("# New\n")


def _delete(base):
    (base / "topic5" / "note5.md").unlink()


def _rename(base):
    (base / "topic7" / "note7.md").rename(base / "topic7" / "seven.md")


def _add_then_set_the_folder_mtime_back(base):
    folder = base / "topic3"
    before = os.stat(folder)
    (folder / "sneaky.md").write_text("# Sneaky\n")
    os.utime(folder, ns=(before.st_atime_ns, before.st_mtime_ns))  # ctime still moves


def _link_retargeted(base):
    (base / "topic1" / "alias.md").symlink_to(base / "topic1" / "note1.md")
    _keep_listing_now(base)
    (base / "topic1" / "alias.md").unlink()
    (base / "topic1" / "alias.md").symlink_to(base / "topic2" / "note2.md")


def _link_target_edited(base):
    (base / "topic1" / "alias.md").symlink_to(base / "outside.md")
    (base / "outside.md").write_text("# Outside\n")
    _keep_listing_now(base)
    (base / "outside.md").write_text("# Outside, longer now\n")


def _dangling_link_comes_alive(base):
    (base / "topic1" / "later.md").symlink_to(base / "nowhere.txt")
    _keep_listing_now(base)
    (base / "nowhere.txt").write_text("# Here now\n")  # a note appears with no folder of it moving


CHANGES = [_edit, _edit_same_size, _add, _add_in_empty_folder, _add_in_new_folder, _delete, _rename,
           _add_then_set_the_folder_mtime_back, _link_retargeted, _link_target_edited, _dangling_link_comes_alive]


@pytest.mark.parametrize("change", CHANGES, ids=[c.__name__.lstrip("_") for c in CHANGES])
def test_every_change_the_walk_sees_is_seen_through_a_kept_listing(tmp_path, change):
    base = _base(tmp_path)
    _keep_listing_now(base)
    assert _seen(listing_cache.notes_on_disk(base, NOTES)) == _seen(list_notes(base))
    change(base)
    assert _seen(listing_cache.notes_on_disk(base, NOTES)) == _seen(list_notes(base))


def test_an_unchanged_base_is_not_listed_again(tmp_path, monkeypatch):
    base = _base(tmp_path)
    _keep_listing_now(base)
    walked = []
    monkeypatch.setattr(listing_cache, "list_notes", lambda *a: walked.append(a) or list_notes(*a))
    found = listing_cache.notes_on_disk(base, NOTES)
    assert not walked  # every folder's stat matched: no folder was listed
    assert _seen(found) == _seen(list_notes(base)) and len(found[0]) == NOTES


def test_a_listing_is_kept_only_for_folders_older_than_the_clock_can_vouch_for(tmp_path):
    base = _base(tmp_path)
    kept = base / ".kb" / listing_cache.CACHE_NAME
    listing_cache.notes_on_disk(base, NOTES)
    assert not kept.exists()  # the folders were made just now
    time.sleep(listing_cache.RACY_NS / 1e9 + 0.2)
    listing_cache.notes_on_disk(base, NOTES)
    assert kept.exists()


def test_how_far_a_stat_vouches_is_defined_once():
    # The kept listing and the index update must doubt the same stats: two copies of the
    # number (an import cycle once kept them apart) could drift, and one would trust a stat
    # the other doubts.
    import ast

    engine_dir = Path(indexupdate.__file__).parent.parent  # the engine, every wing of it
    homes = [
        str(path.relative_to(engine_dir.parent))
        for path in sorted(engine_dir.rglob("*.py"))
        for node in ast.parse(path.read_text(encoding="utf-8")).body
        if isinstance(node, (ast.Assign, ast.AnnAssign))
        and any(isinstance(t, ast.Name) and t.id == "RACY_NS"
                for t in (node.targets if isinstance(node, ast.Assign) else [node.target]))
    ]
    assert homes == ["engine/notes/notefiles.py"]
    assert listing_cache.RACY_NS is indexupdate.RACY_NS


def test_a_small_base_keeps_no_listing(tmp_path, monkeypatch):
    base = _base(tmp_path)
    monkeypatch.setattr(listing_cache, "RACY_NS", -10**18)  # every folder old enough
    listing_cache.notes_on_disk(base, listing_cache.MIN_NOTES - 1)
    assert not (base / ".kb" / listing_cache.CACHE_NAME).exists()
    listing_cache.notes_on_disk(base, listing_cache.MIN_NOTES)
    assert (base / ".kb" / listing_cache.CACHE_NAME).exists()


@pytest.mark.parametrize("damage", ["truncated", "flipped", "foreign", "link"])
def test_a_damaged_or_foreign_listing_is_ignored(tmp_path, damage):
    base = _base(tmp_path)
    _keep_listing_now(base)
    path = base / ".kb" / listing_cache.CACHE_NAME
    raw = path.read_bytes()
    if damage == "truncated":
        path.write_bytes(raw[: len(raw) // 2])
    elif damage == "flipped":
        path.write_bytes(raw[:-5] + bytes([raw[-5] ^ 1]) + raw[-4:])
    elif damage == "foreign":
        path.write_bytes(b"not a listing at all\n")
    else:
        other = tmp_path / "elsewhere.cache"
        other.write_bytes(raw)
        path.unlink()
        path.symlink_to(other)
    assert listing_cache._load(str(path)) is None
    _add(base)
    assert _seen(listing_cache.notes_on_disk(base, NOTES)) == _seen(list_notes(base))


def test_an_edit_is_routed_through_a_kept_listing(tmp_path):
    """End to end: `kb route` after an edit answers from the edited note."""
    demo = copy_demo(tmp_path / "demo")
    base = demo / "yaron"
    for i in range(NOTES):  # enough notes for the base to keep a listing
        (base / "knowledge" / f"filler{i}.md").write_text(f"# Filler {i}\n\nSearch for: `filler{i}`\n")
    then = time.time() - 120  # notes older than the index can doubt (indexupdate.RACY_NS)
    for note in demo.rglob("*.md"):
        os.utime(note, (then, then))
    assert run_kb("index", str(demo)).returncode == 0
    _keep_listing_now(base)
    assert Memory(demo).stale() is False
    note = base / "knowledge" / "protein-basics.md"
    note.write_text(note.read_text().replace("`whey`,", "`whey`, `quinoa`,"))
    assert Memory(demo).stale() is True
    r = run_kb("route", "quinoa", str(demo), "--json")
    assert '"keyword_top": "yaron/knowledge/protein-basics.md"' in r.stdout


# -- the check's plan (listing_cache.keep_plan / unchanged) ----------------------------------


def _chmod(base):
    os.chmod(base / "topic2" / "note2.md", 0o600)  # the ctime moves, nothing else


def _edit_same_size_mtime_set_back(base):
    p = base / "topic2" / "note2.md"
    before = os.stat(p)
    p.write_text(p.read_text().replace("Text", "Txet"))
    os.utime(p, ns=(before.st_atime_ns, before.st_mtime_ns))  # `cp -p`, `rsync -t`: only the ctime says so


def _outside(base: Path) -> Path:
    outside = base.parent / "outside"
    outside.mkdir(exist_ok=True)
    return outside


def _link_setup(base):
    (base / "topic1" / "alias.md").symlink_to(base / "topic1" / "note1.md")
    (_outside(base) / "target.md").write_text("# Outside\n")
    (base / "topic2" / "far.md").symlink_to(_outside(base) / "target.md")
    (base / "topic3" / "later.md").symlink_to(_outside(base) / "nowhere.md")  # dangling
    (base / "topic4" / "folder.md").symlink_to(_outside(base), target_is_directory=True)  # no note


def _link_retargeted_in_place(base):
    (base / "topic1" / "alias.md").unlink()
    (base / "topic1" / "alias.md").symlink_to(base / "topic2" / "note10.md")  # another size


def _link_target_outside_edited(base):
    (_outside(base) / "target.md").write_text("# Outside, longer now\n")  # no folder of the base moves


def _dangling_link_comes_alive_outside(base):
    (_outside(base) / "nowhere.md").write_text("# Here now\n")  # no folder of the base moves


def _link_to_a_folder_now_to_a_note(base):
    outside = _outside(base)
    (outside / "swap").mkdir()
    (outside / "swap" / "n.md").write_text("# N\n")
    os.rename(outside / "swap" / "n.md", outside / "n.md")
    link = base / "topic4" / "folder.md"
    link.unlink()
    link.symlink_to(outside / "n.md")


PLAN_CHANGES = [_edit, _edit_same_size, _edit_same_size_mtime_set_back, _chmod, _add, _add_in_empty_folder,
                _add_in_new_folder, _delete, _rename, _add_then_set_the_folder_mtime_back,
                _link_retargeted_in_place, _link_target_outside_edited, _dangling_link_comes_alive_outside,
                _link_to_a_folder_now_to_a_note]


def plan_kept(base: Path) -> tuple[dict[str, str], int, tuple]:
    """Links set up, notes aged, the listing kept, and a check against an index state that
    finds nothing changed (so it keeps its plan): what it compared (the notes' stats as
    indexed, the young bound, the index state), for a change to be checked against."""
    _link_setup(base)
    old = time.time() - 3600  # notes older than the index can doubt
    for note in [*base.rglob("*.md"), *_outside(base).rglob("*.md")]:
        if not note.is_symlink():
            os.utime(note, (old, old))
    _keep_listing_now(base)
    # The index "written" now: a ctime from 10 ms before it on is too young to vouch for.
    young_from = time.time_ns() - listing_cache.RACY_NS
    found, _ = list_notes(base)
    known = {rel: f"{st.st_mtime_ns}:{st.st_size}" for rel, st in found.items()}
    stamp = ("an index state", 1)
    assert indexupdate.notes_changed(base, known, {}, [], young_from, stamp) is False
    return known, young_from, stamp


@pytest.mark.parametrize("change", PLAN_CHANGES, ids=[c.__name__.lstrip("_") for c in PLAN_CHANGES])
def test_every_change_the_check_sees_fails_its_kept_plan(tmp_path, change):
    """A check that found nothing changed keeps its plan; every change the full check sees
    (edits by mtime, size or ctime alone, adds, deletes, renames, links) fails the plan."""
    base = _base(tmp_path)
    known, young_from, stamp = plan_kept(base)
    assert listing_cache.unchanged(base, stamp) and not listing_cache.unchanged(base, ("another", 2))
    time.sleep(0.02)
    change(base)
    assert not listing_cache.unchanged(base, stamp)
    assert indexupdate.notes_changed(base, known, {}, [], young_from, stamp) is True


def test_a_listing_of_the_format_before_is_not_read_and_is_kept_anew(tmp_path):
    """FORMAT 1 kept one CRC-32 over one marshal of the folders: such a file is not read."""
    import marshal
    import zlib

    base = _base(tmp_path)
    _keep_listing_now(base)
    path = base / ".kb" / listing_cache.CACHE_NAME
    rows = listing_cache._load(str(path))
    body = marshal.dumps((1, tuple(rows)))
    path.write_bytes(listing_cache.MAGIC + zlib.crc32(body).to_bytes(4, "big") + body)
    assert listing_cache._load(str(path)) is None
    time.sleep(listing_cache.RACY_NS / 1e9 + 0.2)  # the folders old enough to be kept again
    assert _seen(listing_cache.notes_on_disk(base, NOTES)) == _seen(list_notes(base))
    assert listing_cache._load(str(path)) == rows
