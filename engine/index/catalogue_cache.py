"""The opening cache: what a fresh process needs from a base's index, kept beside it.

A one-shot (`kb route`, `kb boot` on every prompt) used to rebuild the keyword catalogue from
every note's record at open: about 0.7 s at 60,000 chunks, and over 2,000 small bases a
connection (opened, probed, closed) per base, twice. Everything that work produces depends
on the index alone, so it is kept at `<base>/.kb/opening.cache`, and a fresh process reads
only what its question needs:

- the stale check's data (each note's stat as indexed, the skipped notes, when the index
  was last brought up to date), so deciding "nothing changed" opens no connection;
- each note's record and each entry's catalogue row, one small blob apiece,
  decoded when a row is shown rather than all at open;
- the catalogue's inverted index word by word (postings and phrases), decoded for the
  question's words only (`FleetCatalogue`);
- for a small base, the index's vocabulary, so a question none of whose words the base
  holds does not open its index at all, and one whose best file cannot reach the text leg's
  pool is not either (`text_ceiling`).

Never stale. The cache is keyed on the index file itself: SCHEMA_VERSION, and the device,
inode, size and mtime of index.db and of its write-ahead log; and on the code that derives
catalogue rows from records (a digest of its source: another kb never reads them). Every
write to the index changes one of them (a commit appends to the log; a checkpoint rewrites
index.db; a rebuild is a new inode). As for notes (indexupdate.RACY_NS), a stat can only vouch for content older
than the clock's granularity: a cache is written only when both files are at least RACY_NS
old, so a write landing in the same clock tick as the read cannot hide behind an equal
stat. Every load compares the key again; a mismatch rebuilds from the index (one snapshot).

Safe to read. The file is signed with this machine's key and read only when the signature
holds (a clone's `.kb` is not kb's), and its values are in kb's own length-checked layout
(engine/index/sealedfile.py), not marshal or pickle. A file that is truncated, damaged, of another format or
version, or not a regular file is treated as absent and rebuilt. Its rows stay in the file
until a question reads them, each checked by its own CRC-32 first (engine/index/sealedfile.py); a
damaged one is never decoded: the opening is read again from the index (the same state
gives the same rows) and the file replaced (`_Reread`). A value of another shape than kb
writes (a file sealed right by hand) is damage too (engine/index/blobshape.py). It is opened O_NOFOLLOW and
written atomically (engine/notes/atomic.py) with no link followed on the way (engine/notes/nofollow.py).
A cache that cannot be written (a read-only fleet, a planted link) is simply not kept: the
answer is the same, only slower.
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
import time
import weakref
from bisect import bisect_right
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import lru_cache

from ..rank import catalogue as catalogue_module
from ..rank import normalize as normalize_module
from ..rank import stopwords as stopwords_module
from . import indexupdate as indexupdate_module
from . import listing_cache as listing_module
from .blobshape import NUMBER, OPTIONAL_INT, OPTIONAL_STR, TEXTS, firsts_within, shaped
from .fleet_cache import FLEET_FROM, fleet_file, keep, writable_folder
from dataclasses import dataclass, fields as record_fields, replace
from .sealedfile import (
    Blobs, Damaged, Keyed, Region, encode, ends_and_blobs, is_blobs, is_keyed, keyed, loads, open_sealed, open_shaped, seal,
    source_digest,
)
from ..rank.catalogue import Catalogue, Entry, make_entry
from ..errors import KbError
from ..rank.stemming import stem_question, stems_fingerprint
from ..rank import bm25
from .fts5search import chunk_total, one_snapshot
from .indexschema import SCHEMA_VERSION
from .indexupdate import RACY_NS, notes_changed
from .notestore import FileRecord, records as read_records
from .textindex import TextIndex

CACHE_NAME = "opening.cache"
MAGIC = b"kb-opening-cache\n"
FORMAT = 8  # 7: regions read when asked for, each blob checked by its own CRC; 8: signed, kb's own value layout (engine/index/sealedfile.py)
# A base of at most this many chunks keeps its vocabulary in the cache (a few thousand words
# at most): over 2,000 small bases most hold none of a question's words, and skipping them
# is what keeps a one-shot from opening 2,000 indexes. A larger base is always searched.
VOCABULARY_MAX_CHUNKS = 2_000
# A word the tokenizer keeps as exactly one token of itself (unicode61: letters and digits).
_PLAIN_TOKEN = re.compile(r"[a-z0-9]+\Z")


@dataclass(frozen=True, slots=True)
class Opening:
    """One base's index as a fresh process needs it (from the cache or read anew)."""

    key: tuple | None  # the index file's state it was read at; None: not to be kept
    known: dict[str, str] | Region  # path -> "mtime_ns:size" as indexed (the stale check; cached, a region)
    skipped_stats: dict[str, str]  # path -> "mtime_ns:size" of notes skipped for their bytes
    said: tuple[str, ...]  # the skipped lines the last update stored
    indexed_at_ns: int | None
    # Read from the index these hold the values; loaded from the cache, each value's
    # blob, decoded when first read (_decoded).
    records: Mapping[str, tuple | bytes]  # path -> the record's fields, in path order (Keyed when cached)
    entries: Sequence  # (path, the entry's fields) in path order; cached, each one's blob (Blobs)
    words: Mapping[str, tuple | bytes]  # word -> (postings, phrases) over this base's entries (Keyed when cached)
    unreachable: tuple[str, ...]  # paths of notes with no `Search for:` line
    chunks: int
    vocabulary: str | None  # a small base's row count, then "token rows" a line: "\ntoken " is searched
    # The entries' paths and species, in entry order (cached: one blob, decoded when first
    # read): the fold and the fusion read them for every ranked entry, and decoding each
    # entry whole for them was most of a question whose words rank a thousand entries.
    columns: tuple[tuple[str, ...], tuple[str, ...]] | bytes = ((), ())
    where: str = ""  # the cache file (kept or not): named when a blob in it cannot be decoded
    # _Reread: how a cached opening reads itself again from the index. Nothing compares two
    # openings (a record would compare it by identity).
    reread: Callable[[], Opening] | None = None

    @property
    def racy_from(self) -> int | None:
        return self.indexed_at_ns - RACY_NS if self.indexed_at_ns is not None else None


def cache_path(index: TextIndex) -> str:
    return os.path.join(os.path.dirname(index.path_str), CACHE_NAME)


# The last opening each index gave this process: the stale check and the snapshot read the
# cache once between them, and a long-lived process re-reads it only when the index moved.
_last: "weakref.WeakKeyDictionary[TextIndex, Opening]" = weakref.WeakKeyDictionary()


def cached(index: TextIndex) -> Opening | None:
    """The base's opening from its cache, when the cache describes the index as it is now."""
    if index.memory_why is not None:
        return None
    key = _key(index)
    if key is None:
        return None
    op = _last.get(index)
    if op is None or op.key != key:
        op = _load(index, key)
        if op is not None:
            _last[index] = op
    if op is not None:
        # The file is in the state the cache was read from through a checked connection:
        # a connection opened while it still is skips the checks (TextIndex._open_checked).
        index.vouched = key
    return op


def opening(index: TextIndex) -> Opening:
    """The base's opening: from its cache when current, else read from the index (one
    snapshot) and kept for the next process when the index is old enough to vouch for."""
    found = cached(index)
    if found is not None:
        return found
    key = _key(index) if index.memory_why is None else None
    fresh = replace(index._guard(_read, key), where=cache_path(index))
    if fresh.key is None or fresh.key != _key(index):  # too young, or it moved while it was read
        return replace(fresh, key=None)  # what is derived from it is not kept either
    _store(index, fresh)
    _last[index] = fresh
    return fresh


def stale_check(index: TextIndex) -> tuple[Opening | None, bool]:
    """TextIndex.stale, from the cache when it is current (then no connection is opened), and
    the cache's opening (None without one). A snapshot built right after reuses the opening: the
    index file is not stat'ed twice (2,000 bases: 4,000 stats)."""
    op = cached(index)
    if op is None:
        return None, index.stale()
    return op, notes_changed(index.base.root, lambda: _known(op), op.skipped_stats, list(op.said), op.racy_from, op.key)


def _known(op: Opening) -> dict[str, str]:
    """The notes' stats as indexed: read from the cache only when the stale check's plan
    does not decide."""
    known = _decoded(op, lambda op: op.known)
    return known if type(known) is dict else op.reread().known


def shown_skipped(index: TextIndex, op: Opening) -> list[str]:
    """TextIndex.skipped from an opening."""
    out = list(op.said)
    if index.memory_why is not None:
        out.insert(0, index._memory_line())
    return out


def text_ceiling(index: TextIndex, op: Opening, terms: list[str], question: str = "",
                 checked: bool = False) -> float | None:
    """The best score (bm25() negated, as a TextMatch holds it) any file of this base can
    reach for these terms, or None when that cannot be told without searching (a large
    base, an index that moved since its vocabulary was read, a stem the tokenizer might cut
    or fold). 0.0 when the base holds none of the stems: it answers nothing. From the
    vocabulary's row counts (engine/rank/bm25.ceiling): over 2,000 small bases most
    that hold a common word cannot place a file among the pool's best, and are not opened.
    checked: the opening's key was compared with the index's state by this question's own
    stale check, a moment ago; else (a snapshot kept from an earlier question) the index is
    stat'ed again, as a vocabulary older than the index must not prune it. Over 2,000 bases
    the second stat of each index was ~8% of a fresh hit."""
    vocabulary = op.vocabulary
    if vocabulary is None or op.key is None or (not checked and op.key != _key(index)):
        return None
    hits = []
    try:
        for s in _asked(question, tuple(terms)):
            if _PLAIN_TOKEN.match(s) is None:
                return None
            at = vocabulary.find(f"\n{s} ")
            if at >= 0:
                start = at + len(s) + 2
                hits.append(int(vocabulary[start:vocabulary.index("\n", start)]))
        if not hits:
            return 0.0
        return bm25.ceiling(int(vocabulary[: vocabulary.index("\n")]), hits)
    except ValueError:  # a vocabulary kb did not write (sealed right by hand): search the base
        return None


@lru_cache(maxsize=64)
def _asked(question: str, terms: tuple[str, ...]) -> tuple[str, ...]:
    """The stems TextIndex.search sends for these terms, once per question, not per base."""
    return tuple(stem_question(question, list(terms)))


# -- the key ----------------------------------------------------------------------------


def _key(index: TextIndex) -> tuple | None:
    """The index file's state, or None when it is too young for a stat to vouch for it."""
    state = index.file_state()
    if state is None:
        return None
    db, wal = state
    if max(db[3], wal[3] if wal else 0) >= time.time_ns() - RACY_NS:
        return None
    # The stemmer's fingerprint: an index of another stemmer's stems is rebuilt when opened
    # (indexupdate.stems_differ), so a cache of it never vouches for it (TextIndex.vouched).
    return (FORMAT, SCHEMA_VERSION, _code_stamp(), stems_fingerprint(), db, wal)


def _source_digest() -> str:
    """The code that turns a record into catalogue rows, as a digest of its source: a kb
    whose normalising or scoring changed (with the index's schema unchanged) must not read
    rows another version derived. Taken when this module is imported, so a process that
    outlives an upgrade still stamps what it runs, not what is on disk now. The stale
    check's code is in it too: its kept plan is stamped with this key (listing_cache)."""
    return source_digest([m.__file__ for m in (catalogue_module, normalize_module, stopwords_module,
                                                sys.modules[__name__], indexupdate_module, listing_module)])


def _code_stamp() -> str:
    return _CODE_STAMP


# -- reading the index ----------------------------------------------------------------


def _read(con, key) -> Opening:
    with one_snapshot(con):
        meta = dict(con.execute("SELECT key, value FROM meta WHERE key IN ('skipped_stats', 'skipped', 'indexed_at_ns')"))
        known = dict(con.execute("SELECT path, mtime_ns || ':' || size FROM files"))
        records = read_records(con)
        vocabulary = None
        rows = chunk_total(con)
        if rows <= VOCABULARY_MAX_CHUNKS:
            # One string, not a set: 2,000 bases' sets were a million objects to load. A line
            # is a token and the rows holding it; the first line, FTS5's row count (bm25's N).
            vocabulary = f"{rows}\n" + "".join(f"{t} {d}\n" for t, d in con.execute("SELECT term, doc FROM chunks_vocab"))
    fields = tuple(f.name for f in record_fields(FileRecord))
    entries = [make_entry("", r.path, r.title, r.purpose, r.species, r.keys) for r in records if r.is_entry]
    local = Catalogue(entries)  # this base's inverted index: entry indices are local
    words = {}
    for w in local._postings.keys() | local._phrases.keys():
        words[w] = (local._postings.get(w, []), local._phrases.get(w, []))
    return Opening(
        key=key,
        known=known,
        skipped_stats=json.loads(meta.get("skipped_stats") or "{}"),
        said=tuple(json.loads(meta.get("skipped") or "[]")),
        indexed_at_ns=int(meta["indexed_at_ns"]) if meta.get("indexed_at_ns") else None,
        records={r.path: tuple(getattr(r, f) for f in fields) for r in records},
        entries=tuple((e.path, _entry_row(e)) for e in local.entries),
        words=words,
        unreachable=tuple(r.path for r in records if not r.is_entry),
        chunks=sum(r.chunks for r in records),
        vocabulary=vocabulary,
        columns=(tuple(e.path for e in local.entries), tuple(e.species for e in local.entries)),
    )


def _entry_row(e: Entry) -> tuple:
    return (e.title, e.purpose, e.species, e.keys, tuple(sorted(e.one_word_keys)), e.phrases,
            tuple(sorted(e.title_words)), tuple(sorted(e.stem_words)), tuple(sorted(e.purpose_words)))


# -- the file ------------------------------------------------------------------------------


def _load(index: TextIndex, key: tuple) -> Opening | None:
    """The cache when it is a sound cache of this key; None for anything else (absent, a
    link, not a regular file, truncated, damaged, another format, another index state).
    What is looked up row by row stays in the file until asked for (engine/index/sealedfile.py).
    A base of a fleet that keeps its openings in one file is read from there first."""
    path = cache_path(index)
    pack = _pack_of.get(index)
    got = pack.find(path, key) if pack is not None else None
    if got is not None:
        op = _from_sealed(index, key, path, *got, pack=pack)
        if op is not None:
            return op
    # Everything in a cache comes from its index, so it is never larger than the index
    # (about a tenth of it measured): a larger file is not ours, and is not read.
    got = open_shaped(path, MAGIC, _index_bytes(key) + (1 << 20), FORMAT, 11, 5)
    if got is None or got[0][1] != key:
        return None
    return _from_sealed(index, key, path, *got)


def _from_sealed(index: TextIndex, key: tuple, path: str, payload: tuple, regions: list,
                 pack: FleetOpenings | None = None) -> Opening | None:
    """The opening a cache's payload and regions hold (its own file's, or its part of the
    fleet's); None when they are not the shapes written."""
    (_, _, skipped_stats, said, indexed_at_ns, records, entries, words, unreachable, chunks, vocabulary) = payload
    known, record_blobs, entry_blobs, word_blobs, columns = regions
    if not (_is_stats(skipped_stats) and _is_texts(said) and _is_texts(unreachable)
            and is_keyed(records, record_blobs) and is_blobs(entries, entry_blobs) and is_keyed(words, word_blobs)
            and type(chunks) is int
            and (indexed_at_ns is None or type(indexed_at_ns) is int)
            and (vocabulary is None or type(vocabulary) is str)):
        return None
    return Opening(key, known, skipped_stats, said, indexed_at_ns, Keyed(*records, record_blobs),
                   Blobs(*entries, entry_blobs), Keyed(*words, word_blobs), unreachable, chunks, vocabulary, columns,
                   where=path, reread=_Reread(index, key, path, pack))


def _index_bytes(key: tuple) -> int:
    db, wal = key[-2], key[-1]
    return db[2] + (wal[2] if wal else 0)


def _store(index: TextIndex, op: Opening) -> None:
    """Keep the opening for the next process; a cache that cannot be written is not kept."""
    # Each record, entry and word its own blob, so a reader reads and decodes only what it
    # touches; the notes' stats (read only when the stale check's plan does not decide) and
    # the columns are regions of their own.
    records, words = keyed(op.records), keyed(op.words)
    if records is None or words is None:
        return
    *entries, entry_blobs = ends_and_blobs(encode(entry) for entry in op.entries)  # (path, fields) each
    payload = (FORMAT, op.key, op.skipped_stats, op.said, op.indexed_at_ns, records[0], tuple(entries),
               words[0], op.unreachable, op.chunks, op.vocabulary)
    regions = [encode(op.known), records[1], entry_blobs, words[1], encode(op.columns)]
    keep(cache_path(index), seal(MAGIC, payload, regions))  # not kept: the same answer, only slower


def _decoded(op: Opening, get, fits: Callable[[object], bool] = lambda value: True):
    """`get(op)`, a record's, entry's, word's or the columns' value: decoded from the cache
    file's blob (checked first), or as read from the index (an opening that is not kept is
    never encoded at all). A blob whose bytes are damaged, or whose value `fits` refuses (not
    of the shape kb writes: a file sealed right by hand), is never used: the opening is read
    again from the index, the file replaced, and the value taken from there."""
    try:
        blob = get(op)
        if isinstance(blob, Region):
            value = blob.value()
        elif isinstance(blob, bytes):
            value = loads(blob, op.where)
        else:
            return blob
        if not fits(value):
            raise Damaged(f"{op.where}: a value not of the shape kb writes")
        return value
    except Damaged:
        if op.reread is None:
            raise
        return get(op.reread())


# The shapes of the values _read makes, as kept in the file (engine/index/blobshape.py).
_is_record = shaped((int, str, str, bool, str, str, TEXTS, str, OPTIONAL_INT, bool, OPTIONAL_INT, TEXTS, OPTIONAL_STR,
                     int, int, TEXTS))  # FileRecord's fields in order
_is_entry = shaped((str, (str, str, str, TEXTS, TEXTS, [(str, TEXTS)], TEXTS, TEXTS, TEXTS)))  # (path, _entry_row)
_is_columns = shaped((TEXTS, TEXTS))  # the entries' paths and species
_is_texts = shaped(TEXTS)  # the skipped lines, the unreachable paths
_is_postings = shaped(([(int, bool, NUMBER, int)], [(int, str, TEXTS, str)]))  # as Catalogue makes them


def _is_stats(value) -> bool:
    """Paths to "mtime_ns:size", as the stale check compares them."""
    # Most bases skip nothing: their empty dict is told at once (2,000 bases a fresh hit).
    return type(value) is dict and (not value or (_is_texts(tuple(value)) and _is_texts(tuple(value.values()))))


def _is_word(value, entries: int) -> bool:
    """A word's postings and phrases, each pointing at one of the base's `entries`."""
    return _is_postings(value) and firsts_within(value[0], entries) and firsts_within(value[1], entries)


class _Reread:
    """An opening's values read again from its index, once, when a blob of its cache turns
    out damaged: the same index state gives the same rows in the same order, so the question
    goes on with them; the damaged file is replaced. If the index moved since, its rows are
    not the ones the question began with: then it is asked again."""

    def __init__(self, index: TextIndex, key: tuple, path: str, pack: FleetOpenings | None = None):
        self._index, self._key, self._path = weakref.ref(index), key, path
        self._pack = pack  # the fleet file it was read from: dropped, and made again from the bases'
        self._fresh: Opening | None = None

    # One lock for every base's: a reread is rare, and 2,000 bases made 2,000 locks per process.
    _lock = threading.Lock()

    def __call__(self) -> Opening:
        with self._lock:
            if self._fresh is None:
                index = self._index()
                fresh = None
                if index is not None and _key(index) == self._key:
                    fresh = replace(index._guard(_read, self._key), where=self._path)
                if fresh is None or _key(index) != self._key:
                    raise KbError(f"{self._path}: damaged, and its index changed while it was read; ask again")
                _store(index, fresh)
                if self._pack is not None:
                    self._pack.drop()
                self._fresh = fresh
            return self._fresh


# -- a fleet's openings in one file --------------------------------------------------------

FLEET_CACHE_NAME = "fleet-opening.cache"
FLEET_MAGIC = b"kb-fleet-opening-cache\n"
FLEET_FORMAT = 2  # 2: signed, kb's own value layout (engine/index/sealedfile.py)
FLEET_MAX_BYTES = 1 << 30  # every base's opening: a larger file is not ours
# Each index of a fleet that keeps its openings in one file -> that file (fleet_openings).
_pack_of: "weakref.WeakKeyDictionary[TextIndex, FleetOpenings]" = weakref.WeakKeyDictionary()


def fleet_openings(root: str, indexes: Mapping[str, TextIndex]) -> FleetOpenings | None:
    """The file holding every base's opening, which each base's cache is looked up in first;
    None for a fleet of fewer than FLEET_FROM bases (each base keeps only its own file)."""
    if len(indexes) < FLEET_FROM or not root:
        return None
    pack = FleetOpenings(fleet_file(root, FLEET_CACHE_NAME))
    for index in indexes.values():
        _pack_of[index] = pack
    return pack


class FleetOpenings:
    """Every base's opening cache packed in one file, `<fleet root>/.kb/fleet-opening.cache`:
    over 2,000 small bases a hit opened 2,000 caches (open, head checked, decoded), a quarter
    of it. The file holds each base's cache as its own file does (the head's values and the
    regions), under the base's cache path; a part is used only when its key is the index's
    state now (the same check as a base's own file). Made from the bases' own files after a
    snapshot that did not find every base in it as it is (a base edited, re-indexed, added or
    removed, the file absent or damaged), written atomically; a fleet root that cannot be
    written keeps none. A damaged region found when read drops the file (`_Reread`)."""

    def __init__(self, path: str):
        self.path = path
        self._parts: dict[str, tuple[tuple, list[Region]]] | None = None  # base's cache path -> its payload, regions
        self._served: dict[str, tuple] = {}  # base's cache path -> the key its part was current at
        self._held = -1  # how many bases the file holds (-1: none to trust)
        self._lock = threading.Lock()

    def find(self, where: str, key: tuple) -> tuple[tuple, list[Region]] | None:
        """The payload and regions of this base's cache when the file holds them for `key`."""
        with self._lock:
            if self._parts is None:
                self._parts = self._read()
                self._held = len(self._parts)
            part = self._parts.get(where)
            if part is None or part[0][1] != key:
                return None
            self._served[where] = key
            return part

    def _read(self) -> dict[str, tuple[tuple, list[Region]]]:
        got = open_sealed(self.path, FLEET_MAGIC, FLEET_MAX_BYTES)
        if got is None:
            return {}
        payload, regions = got
        if not (type(payload) is tuple and len(payload) == 2 and payload[0] == FLEET_FORMAT
                and type(payload[1]) is tuple and len(regions) == 5 * len(payload[1])):
            return {}
        parts = {}
        for i, part in enumerate(payload[1]):
            if not (type(part) is tuple and len(part) == 2 and type(part[0]) is str and type(part[1]) is tuple
                    and len(part[1]) == 11 and part[1][0] == FORMAT):
                return {}
            parts[part[0]] = (part[1], regions[5 * i:5 * i + 5])
        return parts

    def keep(self, openings: Mapping[str, Opening]) -> None:
        """After a snapshot: write the file again unless it held every base as it is now."""
        ops = list(openings.values())
        with self._lock:
            if len(ops) == self._held and all(self._served.get(op.where) == op.key for op in ops):
                return
            parts = self._parts or {}
        if any(op.key is None or not op.where for op in ops) or not writable_folder(self.path):
            return  # a base too young for its cache to vouch for it, or a root not writable
        heads, regions = [], []
        try:
            for op in ops:
                part = parts.get(op.where)
                if part is None or part[0][1] != op.key:
                    part = open_shaped(op.where, MAGIC, _index_bytes(op.key) + (1 << 20), FORMAT, 11, 5)
                    if part is None or part[0][1] != op.key:
                        return  # a base whose own cache was not kept: nothing to pack it from
                heads.append((op.where, part[0]))
                regions += [r.raw() for r in part[1]]
        except Damaged:
            return
        keep(self.path, seal(FLEET_MAGIC, (FLEET_FORMAT, tuple(heads)), regions))
        with self._lock:
            # This process's openings are the file's now; a later process reads it.
            self._parts, self._held = None, len(ops)
            self._served = {op.where: op.key for op in ops}

    def drop(self) -> None:
        """A region of the file turned out damaged: removed, and made again after a snapshot."""
        with self._lock:
            self._parts, self._served, self._held = {}, {}, -1
        try:
            os.unlink(self.path)
        except OSError:
            pass


# -- what Memory reads -------------------------------------------------------------------


class Records(Mapping):
    """A base's records by path, each decoded when first read (a one-shot reads a handful)."""

    def __init__(self, op: Opening):
        self._op = op
        self._done: dict[str, FileRecord] = {}

    def __getitem__(self, path: str) -> FileRecord:
        rec = self._done.get(path)
        if rec is None:
            rec = self._done[path] = FileRecord(*_decoded(self._op, lambda op: op.records[path], _is_record))
        return rec

    def __iter__(self) -> Iterator[str]:
        return iter(self._op.records)

    def __len__(self) -> int:
        return len(self._op.records)


class _Entries(Sequence):
    """Every base's entries in id order, each decoded when first read."""

    def __init__(self, parts: list[tuple[str, Opening]]):
        self._parts = parts
        self._starts = []
        n = 0
        for _, op in parts:
            self._starts.append(n)
            n += len(op.entries)
        self._n = n
        self._done: dict[int, Entry] = {}

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self._n))]
        if i < 0:
            i += self._n
        e = self._done.get(i)
        if e is None:
            if not 0 <= i < self._n:
                raise IndexError(i)
            b = bisect_right(self._starts, i) - 1
            base, op = self._parts[b]
            k = i - self._starts[b]
            path, row = _decoded(op, lambda op: op.entries[k], _is_entry)  # a blob, or as read from the index
            title, purpose, species, keys, one, phrases, title_w, stem_w, purpose_w = row
            e = self._done[i] = Entry(
                base=base, path=path, title=title, purpose=purpose, species=species, keys=keys,
                one_word_keys=frozenset(one), phrases=phrases, title_words=frozenset(title_w),
                stem_words=frozenset(stem_w), purpose_words=frozenset(purpose_w),
            )
        return e


class _Words:
    """The fleet's inverted index, merged from each base's word by word when a question
    first asks for the word: postings, phrases and df (the entries whose vocabulary holds it,
    which is the length of its postings)."""

    def __init__(self, parts: list[tuple[str, Opening]], starts: list[int]):
        self._parts = [(op, start) for (_, op), start in zip(parts, starts)]
        self._done: dict[str, tuple[list, list]] = {}

    def word(self, w: str) -> tuple[list, list]:
        got = self._done.get(w)
        if got is None:
            postings: list = []
            phrases: list = []
            for op, start in self._parts:
                got = _decoded(op, lambda op: op.words.get(w), lambda v: _is_word(v, len(op.entries)))
                if got is None:
                    continue
                p, ph = got
                postings += [(start + i, k, o, m) for i, k, o, m in p]
                phrases += [(start + i, written, t, padded) for i, written, t, padded in ph]
            got = self._done[w] = (postings, phrases)
        return got


class _Postings:
    def __init__(self, words: _Words, which: int):
        self._words, self._which = words, which

    def get(self, w: str, default=None):
        found = self._words.word(w)[self._which]
        return found if found else default


class _Df:
    def __init__(self, words: _Words):
        self._words = words

    def get(self, w: str, default=None):
        n = len(self._words.word(w)[0])
        return n if n else default


class FleetCatalogue(Catalogue):
    """The keyword catalogue over cached bases: the same entries in the same order, the same
    postings, the same scores to the bit as Catalogue(all entries), built in microseconds
    per base and decoded only for the words and entries a question touches."""

    def __init__(self, openings: Mapping[str, Opening], fleet_root: str = ""):
        # Entries order by id, "base/path": bases in the order of "name/" (a base whose name
        # extends another's sorts by its next character against "/"), then paths in order.
        parts = sorted(openings.items(), key=lambda kv: kv[0] + "/")
        self.entries = _Entries(parts)  # type: ignore[assignment]
        self.n = len(self.entries)
        words = _Words(parts, self.entries._starts)
        self.df = _Df(words)  # type: ignore[assignment]
        self._idf = {}
        self._postings = _Postings(words, 0)  # type: ignore[assignment]
        self._phrases = _Postings(words, 1)  # type: ignore[assignment]
        self._weights = {}
        self._contributions = {}
        self._phrase_pairs = {}
        self._keys_written = None
        self._parts = parts
        self._fleet_root = fleet_root  # where a fleet of many bases keeps one spelling
        self._base_columns: dict[int, tuple] = {}
        self._speller = None
        self._columns: dict[str, list] = {}
        self._unfilled: dict[str, int] = {}
        self._filling = threading.Lock()
        self.group_names = []
        self._group_of = {}

    def speller(self):
        """The suggester over every key, base by base: each base's part read from beside its
        index (engine/index/spelling_cache.py), or prepared from its entries and kept there."""
        speller = self._speller
        if speller is None:
            # Imported here, once: every refusal asks for the speller (a miss log, thousands).
            from .spelling_cache import base_spelling, fleet_spelling
            from ..rank.suggest import Speller

            entries = self.entries

            def keys_of_base(start: int, n: int):
                return lambda: (k for i in range(start, start + n) for k in entries[i].keys)

            whole = fleet_spelling(self._fleet_root, self._parts, keys_of_base(0, self.n))
            speller = self._speller = Speller([whole] if whole is not None else [
                base_spelling(op, keys_of_base(start, len(op.entries)))
                for (_, op), start in zip(self._parts, entries._starts)
            ])
        return speller

    def _value(self, name: str, i: int):
        """Entry i's id, base, species or group, from its base's columns: no entry decoded."""
        b = bisect_right(self.entries._starts, i) - 1
        base, op = self._parts[b]
        columns = self._base_columns.get(b)
        if columns is None:
            columns = self._base_columns[b] = _decoded(
                op, lambda op: op.columns, lambda v: _is_columns(v) and len(v[0]) == len(v[1]) == len(op.entries))
        paths, species = columns
        k = i - self.entries._starts[b]
        if name == "ids":
            return f"{base}/{paths[k]}"  # Entry.id
        if name == "bases":
            return base
        return species[k] if name == "species" else self.group_id(base, species[k])

    def column(self, name: str, order: list[int]) -> list[str]:
        # Only the ranked entries are decoded (Catalogue holds the whole columns), and each
        # value is kept: the fold and the fusion read three columns of every ranked entry per
        # question, and decoding them each time was a third of a resident answer at 60,000 chunks.
        values = self._columns.get(name)
        if values is None:
            values = self._columns[name] = [None] * self.n
            self._unfilled[name] = self.n
        out = [values[i] for i in order]
        if self._unfilled[name] and None in out:
            with self._filling:  # the count says "all filled" only once every value is there
                for k, i in enumerate(order):
                    if out[k] is None:
                        if values[i] is None:
                            values[i] = self._value(name, i)
                            self._unfilled[name] -= 1
                        out[k] = values[i]
        return out


_CODE_STAMP = _source_digest()  # four small files read once, at import
