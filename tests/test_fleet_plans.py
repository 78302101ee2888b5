"""A fleet's small bases' stale-check plans in one file (engine/index/fleet_plans.py): a small base
of a fleet of many is checked by its plan, not walked, and every change the walk sees still
fails its plan.

Real parts: real folders and notes on disk, the real fleet file; the check is
indexupdate.notes_changed, as the opening cache asks it. Nothing here is timed."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from engine.index import fleet_plans, indexupdate, listing_cache
from engine.index.fleet_cache import FLEET_FROM
from engine.memory import Memory
from engine.notes.notefiles import list_notes
from tests.conftest import damage_cache, index_aged

STAMP = ("an index state", 1)  # what a check compares against (the opening cache's key)


def _small_base(root: Path) -> Path:
    """Three notes in two folders, as the 2,000-base haystack's bases are."""
    for rel in ("knowledge/alpha.md", "knowledge/beta.md", "projects/gamma.md"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(f"# {rel}\n\nText of {rel}.\n")
    (root / ".kb").mkdir()
    return root


def _fleet(tmp_path: Path) -> tuple[Path, list[Path]]:
    """A fleet of as many small bases as keep one plans file, their notes aged an hour."""
    fleet = tmp_path / "fleet"
    bases = [_small_base(fleet / f"base{i:02d}") for i in range(FLEET_FROM)]
    old = time.time() - 3600
    for note in fleet.rglob("*.md"):
        os.utime(note, (old, old))
    time.sleep(0.05)  # the notes' ctimes older than the young bound taken below
    return fleet, bases


def _register(fleet: Path, bases: list[Path]) -> fleet_plans.FleetPlans:
    """What Memory does at open: a fresh process's registration reads the file anew."""
    plans = fleet_plans.for_fleet(str(fleet), [str(b) for b in bases])
    assert plans is not None
    return plans


def _known(base: Path) -> dict[str, str]:
    found, _ = list_notes(base)
    return {rel: f"{st.st_mtime_ns}:{st.st_size}" for rel, st in found.items()}


def _check_all(fleet: Path, bases: list[Path], young_from: int) -> dict[Path, dict[str, str]]:
    """A process's stale check of every base (nothing changed), then the fleet file kept."""
    plans = _register(fleet, bases)
    known = {base: _known(base) for base in bases}
    for base in bases:
        assert indexupdate.notes_changed(base, known[base], {}, [], young_from, STAMP) is False
    plans.keep()
    return known


@pytest.fixture
def kept(tmp_path, monkeypatch):
    """A fleet whose small bases' plans are in its file: (fleet, bases, known, young_from)."""
    monkeypatch.setattr(listing_cache, "RACY_NS", 0)  # folders made just now may be kept (tested apart)
    fleet, bases = _fleet(tmp_path)
    young_from = time.time_ns() - indexupdate.RACY_NS
    known = _check_all(fleet, bases, young_from)
    assert (fleet / ".kb" / fleet_plans.FLEET_PLANS_NAME).is_file()
    assert not any((b / ".kb" / listing_cache.CACHE_NAME).exists() for b in bases)  # no file per base
    time.sleep(0.02)  # a change made next moves a stat
    return fleet, bases, known, young_from


def _edit_same_size_in_place(base):
    p = base / "knowledge" / "alpha.md"
    p.write_text(p.read_text().replace("Text", "Txet"))


def _edit_same_size_mtime_set_back(base):
    # racy: the same size and the old mtime (`cp -p`, or an edit in the index's clock tick)
    p = base / "knowledge" / "beta.md"
    before = os.stat(p)
    p.write_text(p.read_text().replace("Text", "Txet"))
    os.utime(p, ns=(before.st_atime_ns, before.st_mtime_ns))


def _new_note_in_old_folder(base):
    (base / "projects" / "delta.md").write_text("# Delta\n")


def _new_note_then_folder_mtime_set_back(base):
    folder = base / "projects"
    before = os.stat(folder)
    (folder / "delta.md").write_text("# Delta\n")
    os.utime(folder, ns=(before.st_atime_ns, before.st_mtime_ns))  # only the folder's ctime says so


def _deleted_note(base):
    (base / "projects" / "gamma.md").unlink()


def _renamed_folder(base):
    (base / "knowledge").rename(base / "wisdom")


def _new_folder(base):
    (base / "tools").mkdir()
    (base / "tools" / "epsilon.md").write_text("# Epsilon\n")


CHANGES = [_edit_same_size_in_place, _edit_same_size_mtime_set_back, _new_note_in_old_folder,
           _new_note_then_folder_mtime_set_back, _deleted_note, _renamed_folder, _new_folder]


@pytest.mark.parametrize("change", CHANGES, ids=[c.__name__.lstrip("_") for c in CHANGES])
def test_every_change_fails_a_small_base_plan_kept_by_its_fleet(kept, change):
    fleet, bases, known, young_from = kept
    _register(fleet, bases)  # the next process: the plans from the file
    base, other = bases[7], bases[8]
    assert listing_cache.unchanged(base, STAMP) and not listing_cache.unchanged(other, ("another", 2))
    change(base)
    assert not listing_cache.unchanged(base, STAMP)
    assert indexupdate.notes_changed(base, known[base], {}, [], young_from, STAMP) is True
    assert listing_cache.unchanged(bases[9], STAMP)  # the fleet's other bases still hold


def test_a_small_base_of_a_fleet_is_not_walked_when_its_plan_holds(kept, monkeypatch):
    fleet, bases, known, young_from = kept
    plans = _register(fleet, bases)
    walked = []
    monkeypatch.setattr(listing_cache, "list_notes", lambda *a: walked.append(a) or list_notes(*a))
    for base in bases:
        assert indexupdate.notes_changed(base, lambda: pytest.fail("known read"), {}, [], young_from, STAMP) is False
    assert walked == []
    written = (fleet / ".kb" / fleet_plans.FLEET_PLANS_NAME).stat().st_mtime_ns
    plans.keep()
    assert (fleet / ".kb" / fleet_plans.FLEET_PLANS_NAME).stat().st_mtime_ns == written  # read, not written again


def test_a_plan_that_failed_is_made_again_for_the_new_state(kept):
    fleet, bases, known, young_from = kept
    plans = _register(fleet, bases)
    base = bases[3]
    _new_note_in_old_folder(base)
    assert indexupdate.notes_changed(base, known[base], {}, [], young_from, STAMP) is True
    plans.keep()  # the plan that no longer holds is not kept
    _register(fleet, bases)
    assert not listing_cache.unchanged(base, STAMP) and listing_cache.unchanged(bases[4], STAMP)
    # re-indexed: a new state, the notes as they are now; its check keeps a plan for it
    old = time.time() - 3600
    os.utime(base / "projects" / "delta.md", (old, old))
    time.sleep(0.05)
    new_state, new_known, indexed_from = ("the next index state", 2), _known(base), time.time_ns() - indexupdate.RACY_NS
    plans = _register(fleet, bases)
    assert indexupdate.notes_changed(base, new_known, {}, [], indexed_from, new_state) is False
    plans.keep()
    _register(fleet, bases)
    assert listing_cache.unchanged(base, new_state)


def test_folders_too_young_for_their_stat_to_vouch_keep_no_plan(tmp_path):
    # RACY_NS as shipped: folders made just now could still change unseen within their tick
    fleet, bases = _fleet(tmp_path)
    young_from = time.time_ns() - indexupdate.RACY_NS
    _check_all(fleet, bases, young_from)
    _register(fleet, bases)
    assert not any(listing_cache.unchanged(b, STAMP) for b in bases)
    assert not (fleet / ".kb" / fleet_plans.FLEET_PLANS_NAME).exists()  # nothing to keep: not written


@pytest.mark.parametrize("damage", ["truncated", "flipped", "garbage", "empty"])
def test_a_damaged_plans_file_is_read_as_none_and_made_again(kept, damage):
    fleet, bases, known, young_from = kept
    path = fleet / ".kb" / fleet_plans.FLEET_PLANS_NAME
    damage_cache(path, damage)
    _register(fleet, bases)
    assert not any(listing_cache.unchanged(b, STAMP) for b in bases)
    assert _check_all(fleet, bases, young_from) == known  # the walk decides, as before; the file made again
    _register(fleet, bases)
    assert all(listing_cache.unchanged(b, STAMP) for b in bases)


def test_a_plan_kept_under_another_base_is_not_used(kept):
    # a plan holds its base's root: one planted under another base's name is refused
    fleet, bases, known, young_from = kept
    plans = _register(fleet, bases)
    swapped = plans.find(str(bases[1]))
    plans.add(str(bases[2]), swapped)
    plans.keep()
    _register(fleet, bases)
    assert not listing_cache.unchanged(bases[2], STAMP) and listing_cache.unchanged(bases[1], STAMP)


def test_a_smaller_fleet_keeps_no_plans_file(tmp_path):
    fleet, bases = _fleet(tmp_path)
    assert fleet_plans.for_fleet(str(fleet), [str(b) for b in bases[: FLEET_FROM - 1]]) is None


def test_an_edit_in_a_many_base_fleet_is_answered_through_memory(demo, monkeypatch):
    """End to end, Memory as a one-shot opens it: the fleet file is written by the first
    process whose checks find nothing changed, and a same-size edit after it is indexed."""
    monkeypatch.setattr(fleet_plans, "FLEET_FROM", 2)  # the demo's three bases count as many
    monkeypatch.setattr(listing_cache, "RACY_NS", 0)  # its folders, copied just now, may be kept
    index_aged(demo)
    Memory(demo).snapshot()  # keeps the opening caches (their keys stamp the plans)
    Memory(demo).snapshot()
    assert (demo / ".kb" / fleet_plans.FLEET_PLANS_NAME).is_file()
    m = Memory(demo)
    m.snapshot()
    assert m.last_reports == []  # every plan held: nothing re-indexed
    note = demo / "yaron" / "knowledge" / "protein-basics.md"
    before = os.stat(note)
    note.write_text(note.read_text().replace("`leucina`", "`quinoas`"))
    os.utime(note, ns=(before.st_atime_ns, before.st_mtime_ns))  # the same size and mtime: only the ctime moved
    m = Memory(demo)
    assert m.route("quinoas").keyword_top == "yaron/knowledge/protein-basics.md"
    assert [r.touched for r in m.last_reports] == [1]


@pytest.mark.parametrize("value", [b"\xff not marshal", b"", None, "a plan as text"])
def test_a_plan_sealed_right_by_hand_but_not_ours_is_not_used(kept, value):
    from engine.index.sealedfile import encode

    from engine.index.sealedfile import seal

    fleet, bases, known, young_from = kept
    path = fleet / ".kb" / fleet_plans.FLEET_PLANS_NAME
    forged = {str(b): encode(("not", "a", "plan")) for b in bases}
    forged[str(bases[0])] = value
    path.write_bytes(seal(fleet_plans.MAGIC, (fleet_plans.FORMAT, forged)))
    _register(fleet, bases)
    assert not any(listing_cache.unchanged(b, STAMP) for b in bases)
    assert indexupdate.notes_changed(bases[0], known[bases[0]], {}, [], young_from, STAMP) is False
