"""The opening cache (engine/index/catalogue_cache.py): a fresh `kb route` reads what opening the
index used to rebuild, and gives the same bytes; a cache that no longer describes the index,
or that is not a cache kb wrote, is never served; no link is followed where it is written.

Real parts: the real index on disk, real `kb` processes. Nothing here is timed."""

from __future__ import annotations

import json
import marshal
import os
import zlib
from pathlib import Path

import pytest

from engine.index import catalogue_cache
from engine.rank.catalogue import Catalogue, make_entry
from engine.memory import Memory
from engine.rank.normalize import terms as normalise
from kbtools.haystack import generate
from engine.index.sealedfile import seal
from tests.conftest import age_indexes, damage_cache, index_aged, run_kb, sealed_parts, sound_cache


def _caches(fleet: Path) -> list[Path]:
    return sorted(fleet.glob("*/.kb/" + catalogue_cache.CACHE_NAME))


def _route(fleet: Path, question: str) -> str:
    """`kb route --json`, as text, less the timings (the one field that differs run to run)."""
    r = run_kb("route", "--json", question, str(fleet))
    assert r.returncode in (0, 1), r.stderr
    answer = json.loads(r.stdout)
    answer.pop("timings", None)
    return json.dumps(answer, sort_keys=True, ensure_ascii=False)


def _gold_questions(demo: Path) -> list[str]:
    lines = (demo / "gold.tsv").read_text(encoding="utf-8").splitlines()
    return [ln.split("\t")[0] for ln in lines if ln and not ln.startswith("#")]


@pytest.fixture(scope="module")
def many(tmp_path_factory) -> Path:
    """40 bases, most of a few chunks: the many-bases shape, small enough to test."""
    root = tmp_path_factory.mktemp("many") / "fleet"
    generate(root, 400, seed=5, bases=40, questions=24)
    index_aged(root)
    return root


def _haystack_questions(root: Path) -> list[str]:
    lines = (root / "questions.tsv").read_text(encoding="utf-8").splitlines()
    return [ln.split("\t")[0] for ln in lines if ln and not ln.startswith("#")]


# -- the same answer, byte for byte -------------------------------------------------------


def test_demo_routes_the_same_bytes_with_and_without_the_cache(demo):
    index_aged(demo)
    questions = _gold_questions(demo)[:6] + ["me conta uma piada"]
    without = [_route(demo, q) for q in questions[:1]]  # the first run reads the index and keeps it
    assert len(_caches(demo)) == 3
    for path in _caches(demo):
        path.unlink()
    without = [_route(demo, q) for q in questions]
    for path in _caches(demo):  # each run without a cache kept one; read back from here on
        assert path.stat().st_size > 0
    with_cache = [_route(demo, q) for q in questions]
    assert with_cache == without


def test_many_bases_route_the_same_bytes_with_and_without_the_cache(many):
    questions = _haystack_questions(many)[:8]
    for path in _caches(many):
        path.unlink()
    first = _route(many, questions[0])
    assert len(_caches(many)) == 40
    with_cache = [first] + [_route(many, q) for q in questions[1:]]
    for path in _caches(many):
        path.unlink()
    without = []
    for q in questions:
        without.append(_route(many, q))
        for path in _caches(many):
            path.unlink()
    assert with_cache == without


def test_the_cached_catalogue_scores_as_the_catalogue_built_from_every_record(many):
    """FleetCatalogue (decoded word by word) against Catalogue built as before, every float."""
    m = Memory(many)
    snap = m.snapshot()
    entries = [
        make_entry(base, r.path, r.title, r.purpose, r.species, r.keys)
        for base, recs in snap.records.items() for r in recs.values() if r.is_entry
    ]
    built = Catalogue(entries)
    cached = snap.catalogue
    assert isinstance(cached, catalogue_cache.FleetCatalogue)
    assert cached.n == built.n and list(cached.entries) == list(built.entries)
    assert cached.keys_as_written() == built.keys_as_written()
    for q in _haystack_questions(many) + ["how much protein per meal", "deploy rollback"]:
        segments = [normalise(q)]
        assert cached.score(segments) == built.score(segments), q


def test_a_base_without_the_questions_words_is_not_opened(many, monkeypatch):
    """Over many small bases, a question opens only the indexes that may hold its words, and
    the text leg's answer is what searching every base gives."""
    m = Memory(many)
    snap = m.snapshot()
    opened = []
    real = catalogue_cache.TextIndex._open_checked

    def counted(self):
        opened.append(self.base.name)
        return real(self)

    monkeypatch.setattr(catalogue_cache.TextIndex, "_open_checked", counted)
    large = {name for name, op in snap.openings.items() if op.vocabulary is None}
    assert len(large) < 5  # most bases are small enough to keep their vocabulary
    lines = (many / "questions.tsv").read_text(encoding="utf-8").splitlines()
    asked = [ln.split("\t") for ln in lines if ln and not ln.startswith("#")]
    misses = [q for q, answer in asked if answer == "-"]
    assert misses
    total = 0
    for q, _ in asked:
        words = list(dict.fromkeys(normalise(q)))
        opened.clear()
        skipping = m._text_leg(words, q, snap.openings)
        if q in misses:  # words no note holds: only the large bases are even opened
            assert set(opened) <= large, q
        total += len(set(opened))
        assert skipping == m._text_leg(words, q), q  # what searching every base gives
    assert total < 0.75 * len(asked) * len(m.indexes)  # common words reach most bases; rare ones few


def test_opening_a_current_cache_opens_no_index(demo, monkeypatch):
    """The stale check and the snapshot of a fresh process, from current caches: no SQLite."""
    index_aged(demo)
    _route(demo, "deploy")
    opened = []
    real = catalogue_cache.TextIndex._open_checked
    monkeypatch.setattr(catalogue_cache.TextIndex, "_open_checked", lambda self: opened.append(1) or real(self))
    m = Memory(demo)
    snap = m.snapshot()
    assert opened == [] and snap.catalogue.n > 0 and all(op.key for op in snap.openings.values())


def test_a_vouched_index_is_opened_without_its_probes_until_it_moves(demo, monkeypatch):
    """A current cache vouches for its index file (TextIndex.vouched): the text leg's
    connections skip the row count and the stemmer's check, until the file's stat moves."""
    index_aged(demo)
    q = _gold_questions(demo)[0]
    _route(demo, q)
    sent: list[str] = []
    real = catalogue_cache.TextIndex._connect

    def traced(self):
        con = real(self)
        con.set_trace_callback(sent.append)
        return con

    monkeypatch.setattr(catalogue_cache.TextIndex, "_connect", traced)
    probe = "SELECT count(*) FROM files"
    m = Memory(demo)
    m.ask(q, record_miss=False)
    assert any("MATCH" in s for s in sent) and probe not in sent
    zed = m.indexes["zed"]
    assert zed.vouched is not None
    zed.close()  # the next read opens a connection
    zed.records()
    assert probe not in sent
    index = demo / "zed" / ".kb" / "index.db"
    os.utime(index, ns=(index.stat().st_atime_ns, index.stat().st_mtime_ns - 10**9))  # the file's stat moves
    zed.close()
    zed.records()
    assert probe in sent


# -- never stale ---------------------------------------------------------------------------


def _note(demo: Path) -> Path:
    return demo / "zed" / "knowledge" / "deploy-checklist.md"


def test_an_edited_added_deleted_or_renamed_note_is_never_answered_from_the_cache(demo):
    index_aged(demo)
    q = "zorblat quaffle"
    before = _route(demo, q)
    assert len(_caches(demo)) == 3 and json.loads(before)["results"] == []

    note = _note(demo)
    text = note.read_text(encoding="utf-8")
    note.write_text(text.replace("`deploy`, ", "`deploy`, `zorblat quaffle`, ", 1), encoding="utf-8")
    edited = json.loads(_route(demo, q))
    assert edited["keyword_top"] == "zed/knowledge/deploy-checklist.md"

    age_indexes(demo)
    renamed = note.with_name("zorblat-checklist.md")
    note.rename(renamed)
    after_rename = json.loads(_route(demo, q))
    assert after_rename["keyword_top"] == "zed/knowledge/zorblat-checklist.md"

    age_indexes(demo)
    added = demo / "steve" / "zorblat.md"
    added.write_text("# Zorblat\n\nSearch for: zorblat, quaffle\n\nThe zorblat quaffle note.\n", encoding="utf-8")
    after_add = json.loads(_route(demo, q))
    assert {r["base"] + "/" + r["path"] for r in after_add["results"]} >= {
        "steve/zorblat.md", "zed/knowledge/zorblat-checklist.md"}

    age_indexes(demo)
    renamed.unlink()
    added.unlink()
    gone = json.loads(_route(demo, q))
    assert gone["keyword_top"] is None and not any("zorblat" in r["path"] for r in gone["results"])


def test_an_index_written_by_another_process_is_never_answered_from_the_cache(demo):
    """The notes and the index both move on before the next route: its cache is of the old index."""
    index_aged(demo)
    q = "zorblat quaffle"
    _route(demo, q)
    note = _note(demo)
    note.write_text(note.read_text(encoding="utf-8").replace("`deploy`, ", "`deploy`, `zorblat quaffle`, ", 1),
                    encoding="utf-8")
    index_aged(demo)  # another process brings the index up to date (aged: old enough to vouch)
    idx = Memory(demo).indexes["zed"]
    assert catalogue_cache.cached(idx) is None  # the cache describes the index before the edit
    answer = json.loads(_route(demo, q))
    assert answer["keyword_top"] == "zed/knowledge/deploy-checklist.md"


def test_a_touched_index_file_invalidates_its_cache(demo):
    index_aged(demo)
    _route(demo, "deploy")
    idx = Memory(demo).indexes["zed"]
    assert catalogue_cache.cached(idx) is not None
    st = os.stat(idx.path)
    os.utime(idx.path, ns=(st.st_atime_ns, st.st_mtime_ns - 1_000_000_000))
    assert catalogue_cache.cached(idx) is None


def test_a_cache_derived_by_other_code_is_not_served(demo, monkeypatch):
    """A kb whose normalising or scoring changed, with the index's schema the same, must not
    read catalogue rows another version derived."""
    index_aged(demo)
    _route(demo, "deploy")
    idx = Memory(demo).indexes["zed"]
    assert catalogue_cache.cached(idx) is not None
    monkeypatch.setattr(catalogue_cache, "_code_stamp", lambda: "another kb")
    catalogue_cache._last.clear()
    assert catalogue_cache.cached(idx) is None


def test_an_index_younger_than_the_clock_can_vouch_for_keeps_no_cache(demo):
    r = run_kb("index", str(demo))
    assert r.returncode == 0
    _route(demo, "deploy")  # right after the index was written: a stat cannot vouch for it yet
    assert _caches(demo) == []


# -- damaged, foreign, linked ----------------------------------------------------------------


def _foreign(payload, regions=()) -> bytes:
    return seal(catalogue_cache.MAGIC, payload, regions)


@pytest.mark.parametrize("damage", [
    "truncated", "flipped", "regions", "garbage", "empty", "foreign", "other-format", "a-directory", "huge",
])
def test_a_damaged_or_foreign_cache_is_ignored_and_rebuilt(demo, damage):
    """Damage in the head is found at load, in a region when its bytes are read (before they
    are used): either way the answer is the index's, and the file is written again."""
    index_aged(demo)
    q = _gold_questions(demo)[0]
    expected = _route(demo, q)
    path = demo / "zed" / ".kb" / catalogue_cache.CACHE_NAME
    raw = damage_cache(path, damage)
    if damage == "foreign":  # sound marshal, a checksum that matches, not our shape
        path.write_bytes(_foreign({"hello": ["world"]}))
    elif damage == "other-format":
        payload, regions = sealed_parts(raw)
        path.write_bytes(_foreign((catalogue_cache.FORMAT + 99, *payload[1:]), regions))
    elif damage == "huge":  # a sound cache, checksum and all, padded past its index's size
        payload, regions = sealed_parts(raw)
        padding = bytes(sum(p.stat().st_size for p in path.parent.glob("index.db*")) + (2 << 20))
        path.write_bytes(_foreign(payload, [*regions[:-1], regions[-1] + padding]))
        catalogue_cache._last.clear()
        assert catalogue_cache.cached(Memory(demo).indexes["zed"]) is None  # not read into memory
    r = run_kb("route", "--json", q, str(demo))
    assert r.returncode in (0, 1) and not r.stderr.strip(), r.stderr
    answer = json.loads(r.stdout)
    answer.pop("timings", None)
    assert json.dumps(answer, sort_keys=True, ensure_ascii=False) == expected
    if damage == "a-directory":
        assert path.is_dir()  # not kept, and nothing removed that kb did not write
    else:
        assert sound_cache(path) and sealed_parts(path.read_bytes()) == sealed_parts(raw)  # rebuilt


def test_a_cache_of_the_format_before_is_read_as_absent_and_rebuilt(demo):
    """FORMAT 6 kept one CRC-32 over one marshal of everything: such a file is not read."""
    index_aged(demo)
    q = _gold_questions(demo)[0]
    expected = _route(demo, q)
    path = demo / "zed" / ".kb" / catalogue_cache.CACHE_NAME
    raw = path.read_bytes()
    payload, regions = sealed_parts(raw)
    body = marshal.dumps((6, *payload[1:], *regions))
    path.write_bytes(catalogue_cache.MAGIC + zlib.crc32(body).to_bytes(4, "big") + body)
    catalogue_cache._last.clear()
    assert catalogue_cache.cached(Memory(demo).indexes["zed"]) is None
    assert _route(demo, q) == expected
    assert path.read_bytes() == raw


def test_a_link_planted_where_the_cache_is_written_is_not_followed(demo, tmp_path):
    index_aged(demo)
    outside = tmp_path / "outside.bin"
    outside.write_bytes(b"not kb's\n")
    path = demo / "zed" / ".kb" / catalogue_cache.CACHE_NAME
    q = _gold_questions(demo)[0]
    expected = _route(demo, q)
    path.unlink()
    path.symlink_to(outside)
    assert _route(demo, q) == expected
    assert outside.read_bytes() == b"not kb's\n"  # neither written through nor replaced
    assert path.is_symlink()
    # A link to a sound cache is not read either: the base is read from its index.
    good = demo / "steve" / ".kb" / catalogue_cache.CACHE_NAME
    real = tmp_path / "steve.cache"
    real.write_bytes(good.read_bytes())
    good.unlink()
    good.symlink_to(real)
    idx = Memory(demo).indexes["steve"]
    assert catalogue_cache.cached(idx) is None
    assert _route(demo, q) == expected


def test_markdown_is_never_written_by_keeping_the_cache(demo):
    before = {p: p.read_bytes() for p in demo.rglob("*.md")}
    index_aged(demo)
    _route(demo, "deploy")
    assert _caches(demo)
    assert {p: p.read_bytes() for p in demo.rglob("*.md")} == before


# -- the text leg's ceiling over many small bases ------------------------------------------


@pytest.fixture(scope="module")
def crowd(tmp_path_factory) -> Path:
    """120 bases of a few chunks each: a common word is in most of them, and more files
    match it than the text leg's pool holds."""
    root = tmp_path_factory.mktemp("crowd") / "fleet"
    generate(root, 900, seed=11, bases=120, questions=24)
    index_aged(root)
    return root


def _common_words(m: Memory, snap, count: int) -> list[str]:
    """The words held by the most small bases (from their cached vocabularies)."""
    held: dict[str, int] = {}
    for op in snap.openings.values():
        for line in (op.vocabulary or "").splitlines()[1:]:
            word = line.split(" ")[0]
            if word.isalpha() and len(word) > 3:
                held[word] = held.get(word, 0) + 1
    return sorted(held, key=lambda w: (-held[w], w))[:count]


def test_no_file_scores_above_its_bases_ceiling(crowd):
    """The ceiling is a bound: every file FTS5 finds in a base scores at most its ceiling."""
    m = Memory(crowd)
    snap = m.snapshot()
    questions = _haystack_questions(crowd) + _common_words(m, snap, 6)
    checked = 0
    for q in questions:
        words = list(dict.fromkeys(normalise(q)))
        for name, idx in m.indexes.items():
            ceiling = catalogue_cache.text_ceiling(idx, snap.openings[name], words, q)
            if ceiling is None:
                continue
            scores = [-row[1] for row in idx.search(words, 50, q)[0]]
            assert ceiling > 0.0 or not scores, (q, name)
            assert all(s <= ceiling for s in scores), (q, name, max(scores), ceiling)
            checked += len(scores)
    assert checked > 200  # the bound was held against many real scores


def test_bases_whose_ceiling_cannot_reach_the_pool_are_not_opened(crowd, monkeypatch):
    """A common word over many small bases: the leg stops at the first base whose ceiling is
    below the pool's last score, and answers as searching every base does, row for row."""
    m = Memory(crowd)
    snap = m.snapshot()
    opened = []
    real = catalogue_cache.TextIndex._open_checked

    def counted(self):
        opened.append(self.base.name)
        return real(self)

    monkeypatch.setattr(catalogue_cache.TextIndex, "_open_checked", counted)
    skipped_some = False
    for word in _common_words(m, snap, 6):
        holding = sum(1 for op in snap.openings.values() if op.vocabulary and f"\n{word} " in op.vocabulary)
        opened.clear()
        pruned = m._text_leg([word], word, snap.openings)
        searched = len(set(opened))
        assert pruned == m._text_leg([word], word), word  # every base searched: the same hits
        assert len(pruned) == 50, word  # more files hold it than the pool
        skipped_some |= searched < holding
    assert skipped_some  # the ceiling spared opening bases that hold the word


def test_a_note_whose_name_holds_a_line_break_keeps_its_base_uncached(demo):
    """The cache lists names a line each: a base with a note named across two lines is read
    from its index every time (the same answer, only slower), and its note still answers."""
    odd = demo / "zed" / "odd\nname.md"
    odd.write_text("# Oddly named\n\nSearch for: `zanzibar`\n\nA note about zanzibar.\n")
    index_aged(demo)
    answer = json.loads(_route(demo, "zanzibar"))
    assert answer["keyword_top"] == "zed/odd\nname.md"
    assert not (demo / "zed" / ".kb" / catalogue_cache.CACHE_NAME).exists()
    assert len(_caches(demo)) == 2  # the other bases keep theirs
    assert json.loads(_route(demo, "zanzibar")) == answer


def test_a_damaged_blob_found_after_the_index_moved_is_one_line_naming_the_cache(demo):
    """Its rows can no longer be read again as they were: the question is refused in one line
    naming the file, never answered from damaged bytes nor from another index state."""
    from engine.errors import KbError

    index_aged(demo)
    q = _gold_questions(demo)[0]
    _route(demo, q)
    path = demo / "zed" / ".kb" / catalogue_cache.CACHE_NAME
    damage_cache(path, "regions")
    m = Memory(demo, update=False)  # no stale check: no blob read yet
    m.snapshot()  # the heads read and checked
    index = demo / "zed" / ".kb" / "index.db"
    os.utime(index, ns=(index.stat().st_atime_ns, index.stat().st_mtime_ns - 10**9))
    with pytest.raises(KbError, match="opening.cache: damaged, and its index changed"):
        m.ask(q, record_miss=False)


def test_a_kept_snapshot_stats_each_index_again_before_its_ceiling_prunes_it(tmp_path, monkeypatch):
    """A fresh question's ceilings trust the keys its own stale check just compared (no second
    stat of every index); a Memory that stays up keeps its snapshot across questions, and
    there a base re-indexed meanwhile by another process must not be pruned by the vocabulary
    it had before: its new note is found."""
    root = tmp_path / "fleet"
    generate(root, 200, seed=7, bases=8, questions=4)
    index_aged(root)
    m = Memory(root)
    m.ask("warm the snapshot", record_miss=False)
    snap = m.snapshot()
    name = next(n for n, op in sorted(snap.openings.items()) if op.vocabulary is not None)
    (root / name / "zorblat.md").write_text("# Zorblat\n\nThe zorblat quaffle is kept here.\n", encoding="utf-8")
    index_aged(root)  # another process brings the index up to date
    assert m.snapshot() is snap  # kept: no stale check on this question
    answer = m.ask("zorblat quaffle", record_miss=False)
    assert f"{name}/zorblat.md" in [f"{h.base}/{h.path}" for h in answer.text]
    Memory(root).ask("zorblat quaffle", record_miss=False)  # a fresh process keeps the caches again
    keys_taken = []
    real = catalogue_cache._key
    monkeypatch.setattr(catalogue_cache, "_key", lambda index: (keys_taken.append(index.base.name), real(index))[1])
    fresh = Memory(root)
    answer = fresh.ask("zorblat quaffle", record_miss=False)
    assert f"{name}/zorblat.md" in [f"{h.base}/{h.path}" for h in answer.text]
    assert sorted(keys_taken) == sorted(fresh.indexes)  # each index's key taken once, by its stale check
