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

import os
import sys
import threading
import time
import weakref
from collections.abc import Mapping
from functools import lru_cache

from ..rank import catalogue as catalogue_module
from ..rank import normalize as normalize_module
from ..rank import stopwords as stopwords_module
from . import indexupdate as indexupdate_module
from . import listing_cache as listing_module
from .blobshape import TEXTS, shaped
from .fleet_cache import FLEET_FROM, fleet_file, keep, writable_folder
from ..shared.record import replace
from .sealedfile import (
    Blobs, Damaged, Keyed, Region, encode, ends_and_blobs, is_blobs, is_keyed, keyed, open_sealed, open_shaped, seal,
    source_digest,
)
from ..errors import KbError
from ..rank.stemming import stem_question, stems_fingerprint
from ..rank import bm25
from .indexschema import SCHEMA_VERSION
from .indexupdate import RACY_NS, notes_changed
from . import opening_data as opening_data_module, opening_reader as opening_reader_module
from .opening_data import Opening, read_opening  # Opening: what spelling_cache reads too
from .opening_reader import OpeningCatalogue, Records, decoded  # Records: what Memory's snapshot reads
from .textindex import TextIndex

CACHE_NAME = "opening.cache"
MAGIC = b"kb-opening-cache\n"
FORMAT = 8  # 7: regions read when asked for, each blob checked by its own CRC; 8: signed, kb's own value layout (engine/index/sealedfile.py)


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
        # a connection opened while it still is skips the checks (TextIndex.vouch).
        index.vouch(key)
    return op


def opening(index: TextIndex) -> Opening:
    """The base's opening: from its cache when current, else read from the index (one
    snapshot) and kept for the next process when the index is old enough to vouch for."""
    found = cached(index)
    if found is not None:
        return found
    key = _key(index) if index.memory_why is None else None
    fresh = replace(index.read(read_opening, key), where=cache_path(index))
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
    known = decoded(op, lambda op: op.known)
    return known if type(known) is dict else op.reread().known


def shown_skipped(index: TextIndex, op: Opening) -> list[str]:
    """TextIndex.skipped from an opening."""
    out = list(op.said)
    if index.memory_why is not None:
        out.insert(0, index.memory_line())
    return out


def text_ceiling(index: TextIndex, op: Opening, terms: list[str], question: str = "",
                 checked: bool = False) -> float | None:
    """The best score (bm25() negated, as a TextMatch holds it) any file of this base can
    reach for these terms, or None when that cannot be told without searching (a large
    base, an index that moved since its vocabulary was read, a stem the tokenizer might cut
    or fold). 0.0 when the base holds none of the stems: it answers nothing. From the
    vocabulary's row counts (engine/rank/bm25.vocabulary_ceiling): over 2,000 small bases most
    that hold a common word cannot place a file among the pool's best, and are not opened.
    checked: the opening's key was compared with the index's state by this question's own
    stale check, a moment ago; else (a snapshot kept from an earlier question) the index is
    stat'ed again, as a vocabulary older than the index must not prune it. Over 2,000 bases
    the second stat of each index was ~8% of a fresh hit."""
    vocabulary = op.vocabulary
    if vocabulary is None or op.key is None or (not checked and op.key != _key(index)):
        return None
    return bm25.vocabulary_ceiling(vocabulary, _asked(question, tuple(terms)))


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
    check's code is in it too: its kept plan is stamped with this key (listing_cache); and what
    reads an opening anew and decodes it (opening_data, opening_reader)."""
    return source_digest([m.__file__ for m in (catalogue_module, normalize_module, stopwords_module,
                                                sys.modules[__name__], indexupdate_module, listing_module,
                                                opening_data_module, opening_reader_module)])


def _code_stamp() -> str:
    return _CODE_STAMP


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


_is_texts = shaped(TEXTS)  # the skipped lines, the unreachable paths
def _is_stats(value) -> bool:
    """Paths to "mtime_ns:size", as the stale check compares them."""
    # Most bases skip nothing: their empty dict is told at once (2,000 bases a fresh hit).
    return type(value) is dict and (not value or (_is_texts(tuple(value)) and _is_texts(tuple(value.values()))))


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
                    fresh = replace(index.read(read_opening, self._key), where=self._path)
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


# -- what Memory reads: the records and the catalogue, decoded when read (engine/index/opening_reader.py)


class FleetCatalogue(OpeningCatalogue):
    """OpeningCatalogue with its suggester: the keys' spelling is kept beside each index as
    the opening is (engine/index/spelling_cache.py reads the openings, so it is asked from here)."""

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

            whole = fleet_spelling(self.fleet_root, self.parts, keys_of_base(0, self.n))
            speller = self._speller = Speller([whole] if whole is not None else [
                base_spelling(op, keys_of_base(start, len(op.entries)))
                for (_, op), start in zip(self.parts, entries.starts)
            ])
        return speller


_CODE_STAMP = _source_digest()  # four small files read once, at import
