"""The suggester's kept spellings (engine/index/spelling_cache.py): a refusal in a fresh process
reads each base's prepared vocabulary instead of preparing every key of the fleet, and
offers exactly what the search over the whole key list offers; a spelling that no longer
describes its index, or that is not one kb wrote, is never read.

Real parts: the real index on disk, real `kb` processes. Nothing here is timed."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

import pytest

from engine.index import spelling_cache
from engine.memory import Memory
from engine.rank.normalize import terms
from engine.rank.suggest import suggest
from tests.conftest import age_indexes, damage_cache, index_aged, run_kb

REFUSED = "how do I restore the databas backupp"  # matches nothing; spelled like several keys


def _spellings(fleet: Path) -> list[Path]:
    return sorted(fleet.glob("*/.kb/" + spelling_cache.CACHE_NAME))


def _suggested(fleet: Path, question: str) -> list[str]:
    r = run_kb("route", "--json", question, str(fleet))
    assert r.returncode == 0 and not r.stderr.strip(), r.stderr
    answer = json.loads(r.stdout)
    assert answer["verdict"] == "nothing"
    return answer["suggestions"]


@pytest.fixture
def fleet(demo: Path) -> Path:
    """The demo, with one key spelled two ways in two bases (the first base's spelling is
    the one offered) and a key only the last base holds."""
    (demo / "steve" / "knowledge" / "backups.md").write_text(
        "# Backups\n\n**Search for:** `Database  Backup!`, `rollout calendar`\n\nKeep a copy.\n", encoding="utf-8")
    (demo / "zed" / "knowledge" / "rotations.md").write_text(
        "# Rotations\n\n**Search for:** `database backup`, `key rotation schedule`\n\nRotate.\n", encoding="utf-8")
    index_aged(demo)
    return demo


def test_a_refusal_keeps_each_bases_spelling_and_the_next_process_reads_it(fleet):
    assert _spellings(fleet) == []  # indexing alone keeps none: a fleet never refused never pays
    first = _suggested(fleet, REFUSED)
    assert len(_spellings(fleet)) == 3
    assert "Database Backup!" in first and "database backup" not in first  # the first base's spelling
    stamps = [p.stat().st_mtime_ns for p in _spellings(fleet)]
    assert _suggested(fleet, REFUSED) == first
    assert [p.stat().st_mtime_ns for p in _spellings(fleet)] == stamps  # read, not written again


def test_kept_spellings_offer_what_the_whole_key_list_offers(fleet, monkeypatch):
    """Each base's part, read back from its file and merged, against the search over every
    key of the fleet at once (the suggester as it was), on random questions."""
    _suggested(fleet, REFUSED)  # keeps the three parts
    m = Memory(fleet)
    keys = m.snapshot().catalogue.keys_as_written()

    def not_prepared(keys):
        raise AssertionError("a kept spelling was prepared again")

    monkeypatch.setattr(spelling_cache, "spelling_of", not_prepared)
    speller = m.snapshot().catalogue.speller()
    vocab = sorted({w for k in keys for w in terms(k)})
    rnd = random.Random(11)
    offered = 0
    for _ in range(400):
        q = [w[: rnd.randint(2, len(w))] + rnd.choice(["", "s", "o", "ing", "x"]) for w in rnd.sample(vocab, 3)]
        got = speller.suggest(q)
        assert got == suggest(q, keys), q
        offered += bool(got)
    assert offered > 300  # the questions reached keys: the comparison compared something


def test_a_changed_label_is_offered_and_the_old_spelling_is_not_read(fleet):
    _suggested(fleet, REFUSED)
    note = fleet / "zed" / "knowledge" / "rotations.md"
    note.write_text(note.read_text(encoding="utf-8").replace("key rotation schedule", "zyxwvut quorbling"),
                    encoding="utf-8")
    assert "zyxwvut quorbling" in _suggested(fleet, "quorblin zyxwvu")  # re-indexed, prepared anew
    time.sleep(0.05)
    age_indexes(fleet)
    assert "zyxwvut quorbling" in _suggested(fleet, "quorblin zyxwvu")  # kept for the new index
    assert "key rotation schedule" not in _suggested(fleet, "rotation schedul")


def test_an_index_younger_than_the_clock_can_vouch_for_keeps_no_spelling(demo):
    assert run_kb("index", str(demo)).returncode == 0
    _suggested(demo, REFUSED)
    assert _spellings(demo) == []


@pytest.mark.parametrize("damage", ["truncated", "flipped", "regions", "garbage", "a-directory", "a-link"])
def test_a_damaged_or_foreign_spelling_is_ignored(fleet, tmp_path, damage):
    expected = _suggested(fleet, REFUSED)
    path = fleet / "zed" / ".kb" / spelling_cache.CACHE_NAME
    raw = damage_cache(path, damage)
    damaged = path.read_bytes() if path.is_file() else None
    outside = tmp_path / "outside.bin"
    if damage == "a-link":  # a link to a sound spelling: not read, and not written through
        outside.write_bytes(raw)
        path.symlink_to(outside)
    assert _suggested(fleet, REFUSED) == expected
    if damage == "a-directory":
        assert path.is_dir()
    elif damage == "a-link":
        assert path.is_symlink() and outside.read_bytes() == raw
    elif damage == "flipped":
        # One blob damaged: found if this refusal reads it (then prepared again and kept),
        # otherwise never read; the answer is the same either way.
        assert path.read_bytes() in (raw, damaged)
    else:
        assert path.read_bytes() == raw  # prepared again and kept


def test_a_spelling_of_the_format_before_is_not_read_and_is_kept_anew(fleet):
    """FORMAT 1 kept one CRC-32 over one marshal of everything: such a file is not read."""
    import marshal
    import zlib

    from tests.conftest import sealed_parts

    expected = _suggested(fleet, REFUSED)
    path = fleet / "zed" / ".kb" / spelling_cache.CACHE_NAME
    raw = path.read_bytes()
    payload, regions = sealed_parts(raw)
    body = marshal.dumps(((1, *payload[0][1:]), *payload[1:], *regions))
    path.write_bytes(spelling_cache.MAGIC + zlib.crc32(body).to_bytes(4, "big") + body)
    assert _suggested(fleet, REFUSED) == expected
    assert path.read_bytes() == raw


# -- one spelling for a fleet of many bases ------------------------------------------------


def _fleet_file(fleet: Path) -> Path:
    return fleet / ".kb" / spelling_cache.FLEET_CACHE_NAME


def _speller_offers(fleet: Path, questions: list[list[str]]) -> list[list[str]]:
    """What a fresh Memory's speller offers, and the same questions against every key of the
    fleet at once (the suggester as it was): asserted equal."""
    m = Memory(fleet)
    catalogue = m.snapshot().catalogue
    speller, keys = catalogue.speller(), catalogue.keys_as_written()
    got = [speller.suggest(q) for q in questions]
    assert got == [suggest(q, keys) for q in questions]
    return got


ASKED = [terms(REFUSED), ["rotatio", "schedul"], ["quorblin", "zyxwvu"], ["backupp"]]


@pytest.fixture
def many(fleet, monkeypatch) -> Path:
    """The demo fleet, its three bases counted as many: one spelling for the fleet."""
    monkeypatch.setattr(spelling_cache, "FLEET_FROM", 2)
    return fleet


def test_a_fleet_of_many_bases_keeps_one_spelling_and_the_next_process_reads_it(many, monkeypatch):
    first = _speller_offers(many, ASKED)
    assert "Database Backup!" in first[0] and "database backup" not in first[0]  # the first base's spelling
    assert _fleet_file(many).is_file() and _spellings(many) == []  # one file, no part per base
    stamp = _fleet_file(many).stat().st_mtime_ns

    def not_prepared(keys):
        raise AssertionError("a kept spelling was prepared again")

    monkeypatch.setattr(spelling_cache, "spelling_of", not_prepared)
    assert _speller_offers(many, ASKED) == first
    assert _fleet_file(many).stat().st_mtime_ns == stamp


def test_one_base_edited_makes_the_fleet_spelling_anew(many):
    before = _speller_offers(many, ASKED)
    assert before[2] == []
    note = many / "zed" / "knowledge" / "rotations.md"
    note.write_text(note.read_text(encoding="utf-8").replace("key rotation schedule", "zyxwvut quorbling"),
                    encoding="utf-8")
    index_aged(many)
    after = _speller_offers(many, ASKED)
    assert "zyxwvut quorbling" in after[2] and "key rotation schedule" not in after[1]


def test_one_base_deleted_makes_the_fleet_spelling_anew(many):
    import shutil

    assert "database backup" not in _speller_offers(many, ASKED)[0]  # steve's spelling first
    shutil.rmtree(many / "steve")
    after = _speller_offers(many, ASKED)
    assert "database backup" in after[0] and "Database Backup!" not in after[0]  # zed's, now the only one


@pytest.mark.parametrize("damage", ["truncated", "flipped", "regions", "garbage", "a-directory"])
def test_a_damaged_fleet_spelling_is_ignored_and_replaced(many, damage):
    expected = _speller_offers(many, ASKED)
    path = _fleet_file(many)
    raw = damage_cache(path, damage)
    assert _speller_offers(many, ASKED) == expected
    if damage == "a-directory":
        assert path.is_dir()
    elif damage != "flipped":  # one flipped blob is found only if a question reads it
        assert path.read_bytes() == raw  # prepared again and kept
