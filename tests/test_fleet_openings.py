"""A fleet of many bases keeps every base's opening in one file (engine/index/catalogue_cache.py's
FleetOpenings): the next process opens that file and no base's own cache, answers exactly as
with the bases' own caches, and the file is made again whenever it no longer holds every base
as it is (a base edited, re-indexed, added or removed; the file damaged). A fleet root that
cannot be written keeps none, and a small fleet keeps its files per base.

Real parts: the real index on disk, the real caches. The demo's three bases are counted as
many (FLEET_FROM lowered). Nothing here is timed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from engine.index import catalogue_cache
from engine.memory import Memory
from engine.index.sealedfile import open_sealed
from tests.conftest import damage_cache, index_aged

QUESTIONS = ["how do I restore the database backup", "who decides the rollout calendar", "key rotation",
             "quorblin zyxwvu"]


def _fleet_file(fleet: Path) -> Path:
    return fleet / ".kb" / catalogue_cache.FLEET_CACHE_NAME


def _answers(fleet: Path) -> list:
    m = Memory(fleet)
    return [[(r.id, r.score) for r in m.retrieve(q)] for q in QUESTIONS]


@pytest.fixture
def bases_read(monkeypatch) -> list[str]:
    """The bases' own opening caches a process opens (each a file opened and its head read)."""
    opened: list[str] = []
    real = catalogue_cache.open_shaped

    def counting(path, *args, **kw):
        opened.append(path)
        return real(path, *args, **kw)

    monkeypatch.setattr(catalogue_cache, "open_shaped", counting)
    return opened


@pytest.fixture
def many(demo, monkeypatch) -> Path:
    monkeypatch.setattr(catalogue_cache, "FLEET_FROM", 2)
    index_aged(demo)
    return demo


def test_the_next_process_reads_one_file_and_answers_the_same(many, bases_read, monkeypatch):
    monkeypatch.setattr(catalogue_cache, "FLEET_FROM", 10**6)
    own = _answers(many)  # from the bases' own caches
    assert not _fleet_file(many).exists()
    monkeypatch.setattr(catalogue_cache, "FLEET_FROM", 2)
    assert _answers(many) == own
    assert _held(many) == ["steve", "yaron", "zed"]
    stamp = _fleet_file(many).stat().st_mtime_ns
    bases_read.clear()
    assert _answers(many) == own
    assert bases_read == []  # every base from the fleet file
    assert _fleet_file(many).stat().st_mtime_ns == stamp  # read, not written again


def _held(fleet: Path) -> list[str]:
    """The bases the fleet file holds an opening of."""
    payload, _ = open_sealed(str(_fleet_file(fleet)), catalogue_cache.FLEET_MAGIC, 1 << 30)
    return sorted(Path(where).parent.parent.name for where, _ in payload[1])


def _settled(fleet: Path, bases_read: list[str]) -> None:
    """After a change: the next process makes the file again, the one after reads only it."""
    _answers(fleet)
    bases_read.clear()
    _answers(fleet)
    assert bases_read == [], "the fleet file was not made again after the change"
    assert _held(fleet) == sorted(p.parent.parent.name for p in fleet.glob("*/.kb/index.db"))


def test_one_base_edited_makes_the_file_anew(many, bases_read):
    before = _answers(many)
    note = many / "zed" / "knowledge" / "rotations.md"
    note.write_text("# Rotations\n\n**Search for:** `quorblin zyxwvu`\n\nRotate.\n", encoding="utf-8")
    index_aged(many)
    after = _answers(many)
    assert after[3] and not before[3]  # the edit is seen, not an opening of the old index
    _settled(many, bases_read)


def test_one_base_reindexed_makes_the_file_anew(many, bases_read):
    _answers(many)
    shutil.rmtree(many / "yaron" / ".kb")
    index_aged(many)
    _settled(many, bases_read)


def test_one_base_added_makes_the_file_anew(many, bases_read):
    _answers(many)
    shutil.copytree(many / "zed", many / "zoe", ignore=shutil.ignore_patterns(".kb"))
    index_aged(many)
    assert any(r[0].startswith("zoe/") for r in _answers(many)[0] + _answers(many)[2])
    _settled(many, bases_read)


def test_one_base_removed_makes_the_file_anew(many, bases_read):
    _answers(many)
    shutil.rmtree(many / "yaron")
    assert not any(r[0].startswith("yaron/") for a in _answers(many) for r in a)
    _settled(many, bases_read)


@pytest.mark.parametrize("damage", ["truncated", "flipped", "regions", "garbage", "a-directory"])
def test_a_damaged_file_is_ignored_and_made_again(many, bases_read, damage):
    expected = _answers(many)
    path = _fleet_file(many)
    sound = damage_cache(path, damage)
    assert _answers(many) == expected
    if damage == "a-directory":
        assert path.is_dir()
        return
    if damage in ("flipped", "regions"):  # found when a region is read: the file is dropped
        assert _answers(many) == expected
    assert _answers(many) == expected
    assert path.read_bytes() == sound  # made again from the bases' own caches
    _settled(many, bases_read)


def test_a_root_that_cannot_be_written_keeps_none_and_reads_the_bases(many, bases_read):
    expected = _answers(many)
    shutil.rmtree(many / ".kb")
    (many / ".kb").write_text("not a folder\n", encoding="utf-8")  # nothing can be written under it
    assert _answers(many) == expected
    bases_read.clear()
    assert _answers(many) == expected
    assert len(bases_read) == 3  # each base's own cache


def test_a_small_fleet_keeps_no_fleet_file(demo):
    index_aged(demo)
    _answers(demo)
    _answers(demo)
    assert not _fleet_file(demo).exists()
