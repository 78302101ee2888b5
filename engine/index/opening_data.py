"""Opening: one base's index as a fresh process needs it, and how it is read anew from the
index in one snapshot. The opening cache (engine/index/catalogue_cache.py) keeps it beside the
index; its key's code digest covers this module (the code that turns records into rows)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence

from ..shared.record import fields as record_fields, record

from ..rank.catalogue import Catalogue, Entry, make_entry
from .fts5search import chunk_total, one_snapshot
from .indexupdate import RACY_NS
from .notestore import FileRecord, records as read_records
from .sealedfile import Region

# A base of at most this many chunks keeps its vocabulary in the cache (a few thousand words
# at most): over 2,000 small bases most hold none of a question's words, and skipping them
# is what keeps a one-shot from opening 2,000 indexes. A larger base is always searched.
VOCABULARY_MAX_CHUNKS = 2_000


@record
class Opening:
    """One base's index as a fresh process needs it (from the cache or read anew)."""

    key: tuple | None  # the index file's state it was read at; None: not to be kept
    known: dict[str, str] | Region  # path -> "mtime_ns:size" as indexed (the stale check; cached, a region)
    skipped_stats: dict[str, str]  # path -> "mtime_ns:size" of notes skipped for their bytes
    said: tuple[str, ...]  # the skipped lines the last update stored
    indexed_at_ns: int | None
    # Read from the index these hold the values; loaded from the cache, each value's
    # blob, decoded when first read (opening_reader.decoded).
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


def read_opening(con, key) -> Opening:
    """The base's opening read from its index `con` in one snapshot, at the file state `key`."""
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
    fields = record_fields(FileRecord)
    entries = [make_entry("", r.path, r.title, r.purpose, r.species, r.keys) for r in records if r.is_entry]
    local = Catalogue(entries)  # this base's inverted index: entry indices are local
    words = local.index_by_word()
    return Opening(
        key=key,
        known=known,
        skipped_stats=json.loads(meta.get("skipped_stats") or "{}"),
        said=tuple(json.loads(meta.get("skipped") or "[]")),
        indexed_at_ns=int(meta["indexed_at_ns"]) if meta.get("indexed_at_ns") else None,
        records={r.path: tuple(getattr(r, f) for f in fields) for r in records},
        entries=tuple((e.path, entry_row(e)) for e in local.entries),
        words=words,
        unreachable=tuple(r.path for r in records if not r.is_entry),
        chunks=sum(r.chunks for r in records),
        vocabulary=vocabulary,
        columns=(tuple(e.path for e in local.entries), tuple(e.species for e in local.entries)),
    )


def entry_row(e: Entry) -> tuple:
    return (e.title, e.purpose, e.species, e.keys, tuple(sorted(e.one_word_keys)), e.phrases,
            tuple(sorted(e.title_words)), tuple(sorted(e.stem_words)), tuple(sorted(e.purpose_words)))
