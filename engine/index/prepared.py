"""A note prepared for the index: read, hashed and, when it changed, parsed, cut into chunk
rows and stemmed, apart from the connection that writes it.

An update prepares each note it must read with `prepare`, in its own process, or a large
build hands the notes to a second process (engine/index/prepworker.py), which sends back the
same values through `to_wire` / `from_wire`: plain tuples that engine/index/helperprocess.py carries.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields
from pathlib import Path

from ..notes.notefiles import content_hash, read_note
from ..notes.note import Note, parse_note
from .notestore import ChunkRows, chunk_rows


@dataclass
class Prepared:
    """What a note needing reading gave: its text's problem, or its hash and (unless only
    touched) the parsed note with its chunk rows."""

    problem: str | None
    hash: str | None = None
    note: Note | None = None
    rows: ChunkRows | None = None


def prepare(root: Path, rel: str, st: os.stat_result, old_hash: str | None) -> Prepared:
    """The note at `rel`; `old_hash`, the hash the index holds when a touched note whose
    bytes are the same needs no parsing (None: parse it whatever it holds)."""
    text, raw, problem = read_note(root, rel, st)
    if problem:
        return Prepared(problem)
    h = content_hash(raw)
    if old_hash == h:
        return Prepared(None, h)
    note = parse_note(rel, text)
    return Prepared(None, h, note, chunk_rows(note))


# The note's fields that an index row holds; its sections are already in the chunk rows.
_NOTE_FIELDS = tuple(f.name for f in fields(Note) if f.name != "sections")


def to_wire(p: Prepared) -> tuple:
    note = None if p.note is None else tuple(getattr(p.note, name) for name in _NOTE_FIELDS)
    rows = None if p.rows is None else (p.rows.rows, p.rows.cut)
    return p.problem, p.hash, note, rows


def from_wire(wire: tuple) -> Prepared:
    problem, h, note, rows = wire
    return Prepared(
        problem, h,
        None if note is None else Note(sections=(), **dict(zip(_NOTE_FIELDS, note))),
        None if rows is None else ChunkRows(rows[0], rows[1]),
    )
