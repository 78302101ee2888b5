"""The note store: each note's parsed label and its chunks, as rows of the index file.

`files` holds what routing needs without reading a note again (title, keys, purpose, links,
the problems found): the catalogue is built from `records`. `chunks` holds each chunk as
written (what a passage shows) beside its Snowball stems (what FTS5 indexes). A note's rows are
written and deleted together; its chunks are the rowid span of its file id (engine/index/indexschema.py).
"""

from __future__ import annotations

import itertools
import json
import sqlite3
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from ..rank.excerpt import plain
from .indexschema import FILE_SHIFT
from ..rank.normalize import words
from ..shared.record import record
from ..rank.stemming import index_stems, note_language_of_words

if TYPE_CHECKING:
    from ..notes.chunking import Chunk
    from ..notes.note import Note


@record
class FileRecord:
    """One note as the index remembers it: enough to route without reading it again."""

    id: int
    path: str
    hash: str
    is_entry: bool
    title: str
    purpose: str
    keys: tuple[str, ...]
    species: str
    label_line: int | None
    label_under_title: bool
    title_line: int | None
    links: tuple[str, ...]
    date: str | None
    chunks: int
    mtime_ns: int
    problems: tuple[str, ...]
    unread: tuple[str, ...] = ()  # keys kb label wrote that no person has read (engine/notes/proposal.py)


def records(con: sqlite3.Connection) -> list[FileRecord]:
    rows = con.execute(
        "SELECT id, path, hash, is_entry, title, purpose, keys, species, label_line,"
        " label_under_title, title_line, links, date, chunks, mtime_ns, problems, unread FROM files ORDER BY path"
    ).fetchall()
    return [
        FileRecord(
            id=r[0], path=r[1], hash=r[2], is_entry=bool(r[3]), title=r[4], purpose=r[5],
            keys=_tuple_of(r[6]), species=r[7], label_line=r[8], label_under_title=bool(r[9]),
            title_line=r[10], links=_tuple_of(r[11]), date=r[12], chunks=r[13], mtime_ns=r[14],
            problems=_tuple_of(r[15]), unread=_tuple_of(r[16]),
        )
        for r in rows
    ]


def _tuple_of(raw: str) -> tuple[str, ...]:
    # Most notes have no links and no problems: '[]' needs no parser (15,000 loads at 5,000 files).
    return () if raw == "[]" else tuple(json.loads(raw))


def chunks_of(con: sqlite3.Connection, path: str) -> list[tuple[str, str, int]]:
    row = con.execute("SELECT id FROM files WHERE path = ?", (path,)).fetchone()
    if not row:
        return []
    lo = row[0] << FILE_SHIFT
    return con.execute(
        "SELECT heading_path, body, line FROM chunks WHERE rowid >= ? AND rowid < ? ORDER BY rowid",
        (lo, lo + (1 << FILE_SHIFT)),
    ).fetchall()


def delete_note(con: sqlite3.Connection, file_id: int) -> None:
    lo = file_id << FILE_SHIFT
    con.execute("DELETE FROM chunks WHERE rowid >= ? AND rowid < ?", (lo, lo + (1 << FILE_SHIFT)))
    con.execute("DELETE FROM files WHERE id = ?", (file_id,))


@record
class ChunkRows:
    """A note's chunks as the index stores them, (heading_path, body, line, heading_stems,
    body_stems) each, made apart from the connection (engine/index/prepared.py), perhaps in a second
    process; `cut`: the note had more chunks than one file may hold."""

    rows: list[tuple[str, str, int, str, str]]
    cut: bool


def chunk_rows(note: Note) -> ChunkRows:
    from ..notes.chunking import chunk_sections  # the writer's, imported when a note is written

    chunks = chunk_sections(note.sections)
    cut = len(chunks) >= (1 << FILE_SHIFT)
    if cut:
        chunks = chunks[: (1 << FILE_SHIFT) - 1]
    ready = list(_split(chunks))
    return ChunkRows(list(_rows(ready, note_language_of_words(tokens for _c, _b, tokens in ready))), cut)


def _split(chunks: Iterable[Chunk]) -> Iterator[tuple[Chunk, str, list[str]]]:
    for c in chunks:
        # Indexed as read: a link's target is an address, not prose, and would make every
        # note that links to deploy-checklist.md look like it talks about deploys.
        body = plain(c.text)
        yield c, body, words(body)


def _rows(ready: Iterable[tuple[Chunk, str, list[str]]], language: str | None) -> Iterator[tuple[str, str, int, str, str]]:
    # The note's language decides its stems (engine/rank/stemming.py); a streamed note (language
    # None) is judged chunk by chunk. Each chunk is split into words once, for its language
    # and for its stems, and a heading shared by a section's windows is stemmed once.
    heading_stems: dict[tuple[str, str], str] = {}
    for c, body, tokens in ready:
        lang = language or note_language_of_words([tokens])
        key = (c.heading_path, lang)
        if key not in heading_stems:
            heading_stems[key] = index_stems(words(c.heading_path), lang)
        yield c.heading_path, body, c.line, heading_stems[key], index_stems(tokens, lang)


def insert_note(
    con: sqlite3.Connection, note: Note, h: str, sig: tuple[int, int], warnings: list[str],
    streamed: Iterator[Chunk] | None = None, ready: ChunkRows | None = None,
) -> None:
    """The note's rows into the open transaction: its chunks made here, or `ready` (made ahead
    by chunk_rows), or `streamed` from a large note read in pieces (engine/notes/bignote.py)."""
    if streamed is None:
        if ready is None:
            ready = chunk_rows(note)
        if ready.cut:
            warnings.append(f"{note.relpath}: more chunks than one file may hold; the rest is not indexed")
        rows: Iterable[tuple[str, str, int, str, str]] = ready.rows
    else:
        rows = _rows(_split(itertools.islice(streamed, (1 << FILE_SHIFT) - 1)), None)  # counted as they go in
    cur = con.execute(
        "INSERT INTO files(path, mtime_ns, size, hash, is_entry, title, purpose, keys, species, label_line,"
        " label_under_title, title_line, links, date, chunks, problems, unread) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (
            note.relpath, sig[0], sig[1], h, int(note.is_entry), note.title, note.purpose,
            json.dumps(list(note.keys), ensure_ascii=False), note.species, note.label_line,
            int(note.label_under_title), note.title_line, json.dumps(list(note.links), ensure_ascii=False),
            note.date, 0 if streamed is not None else len(ready.rows), json.dumps(list(note.problems)),
            json.dumps(list(note.unread), ensure_ascii=False),
        ),
    )
    fid = cur.lastrowid
    base_rowid = fid << FILE_SHIFT
    con.executemany(
        "INSERT INTO chunks(rowid, heading_path, body, line, heading_stems, body_stems) VALUES (?,?,?,?,?,?)",
        ((base_rowid + i, *r) for i, r in enumerate(rows)),
    )
    if streamed is not None:
        n = con.execute(
            "SELECT count(*) FROM chunks WHERE rowid >= ? AND rowid < ?", (base_rowid, base_rowid + (1 << FILE_SHIFT))
        ).fetchone()[0]
        con.execute("UPDATE files SET chunks = ? WHERE id = ?", (n, fid))
