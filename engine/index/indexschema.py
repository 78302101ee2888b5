"""The text index's file layout: one SQLite file per base at <base>/.kb/index.db.

Two tables hold everything: `files`, one row per note with its parsed label (the note store,
engine/index/notestore.py), and `chunks`, FTS5 over each note's chunks as written and as stems (the
text search, engine/index/fts5search.py); `meta` keeps what the last update learnt. The file holds
nothing that cannot be recomputed from the markdown: delete it and the next index rebuilds it.

Chunk rowids carry their file: rowid = file_id << FILE_SHIFT | chunk_number, so the best
chunk per file is a GROUP BY over an integer the FTS5 index already holds, with no join.
"""

from __future__ import annotations

import hmac
import os
import sqlite3

from ..notes.userstate import secret


SCHEMA_VERSION = 14  # 4: the indexed columns hold Snowball stems (engine/rank/stemming.py); 5: Portuguese endings and the note-language rule changed those stems; 6: a stem that is a stopword, of a word that is not, is marked (stemming._kept); 7: stopwords left out of them; 8: YAML front matter is not prose, an underlined (setext) line is a heading (engine/notes/note.py); 9: every window a full one (engine/notes/chunking.py); 10: a note opening with a `---` rule is no longer titled by its last line (engine/notes/note.py); 11: a quoted front matter title is decoded as YAML reads it (engine/notes/yamlscalar.py); 12: a plain one ends at a YAML comment; 13: a heading after prose is a section, not the title of a note with no level-one heading (engine/notes/note.py); 14: the keys kb label's mark names as unread (engine/notes/proposal.py)
FILE_SHIFT = 20  # a million chunks per file; a 50 MB note makes ~35,000
# FTS5 keeps this much of a transaction's new postings in memory before it writes them out as
# a segment, which it must later merge (its default is 1 MB). A full build writes a base in
# one transaction, so a larger buffer means fewer segments and fewer merges: a 9,818-chunk
# base's inserts took 0.24 s of CPU instead of 0.32 (docs/quality.md). Ranking is unchanged:
# the same postings, laid out in fewer segments. A config value, kept in the index file.
FTS5_HASH_BYTES = 8 << 20

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS files(
    id INTEGER PRIMARY KEY,
    path TEXT UNIQUE NOT NULL,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    hash TEXT NOT NULL,
    is_entry INTEGER NOT NULL,
    title TEXT NOT NULL,
    purpose TEXT NOT NULL,
    keys TEXT NOT NULL,
    species TEXT NOT NULL,
    label_line INTEGER,
    label_under_title INTEGER NOT NULL,
    title_line INTEGER,
    links TEXT NOT NULL,
    date TEXT,
    chunks INTEGER NOT NULL,
    problems TEXT NOT NULL,
    unread TEXT NOT NULL
);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks USING fts5(
    heading_path UNINDEXED, body UNINDEXED, line UNINDEXED, heading_stems, body_stems,
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_vocab USING fts5vocab(chunks, 'row');
INSERT INTO chunks(chunks, rank) VALUES ('hashsize', {FTS5_HASH_BYTES});
PRAGMA user_version = {SCHEMA_VERSION};
"""


# -- what kb trusts (docs/decisions.md, "What kb trusts") ------------------------------------

PROOF_KEY = "written_here"  # meta: this machine's keyed digest of the file's identity


class NotOurs(sqlite3.DatabaseError):
    """An index.db kb did not write on this machine (another schema, no proof or a wrong one):
    replaced as damage is, never queried."""


def harden(con: sqlite3.Connection) -> None:
    """SQLite's defensive options on a connection to a file that may be hostile: no function
    or virtual table a schema names runs in its views or triggers, and (Python 3.12+) no
    writable schema or shadow-table writes by SQL."""
    con.execute("PRAGMA trusted_schema = OFF")
    flag = getattr(sqlite3, "SQLITE_DBCONFIG_DEFENSIVE", None)
    if flag is not None and hasattr(con, "setconfig"):
        con.setconfig(flag, True)


_expected: frozenset | None = None


def expected_master() -> frozenset:
    """sqlite_master's rows (type, name, table, SQL) of an index this kb makes, from a schema
    made in memory once a process: the one layout a file must have before a query reads it."""
    global _expected
    if _expected is None:
        mem = sqlite3.connect(":memory:", isolation_level=None)
        try:
            create_schema(mem)
            _expected = frozenset(mem.execute("SELECT type, name, tbl_name, sql FROM sqlite_master"))
        finally:
            mem.close()
    return _expected


def _proof(con: sqlite3.Connection) -> str | None:
    """This machine's digest of the file `con` opened: its device and inode, keyed with the
    person's secret. A file a clone or a copy brought here is a new inode, so no proof kb wrote
    holds for it; None for an index in memory (never on disk, never to be trusted later)."""
    # As bytes: a folder's name need not be UTF-8 (a path is the file system's, not text).
    row = con.execute("SELECT CAST(file AS BLOB) FROM pragma_database_list WHERE name = 'main'").fetchone()
    if row is None or not row[0]:
        return None
    st = os.stat(bytes(row[0]))
    return hmac.digest(secret(), f"kb-index.db\0{st.st_dev}:{st.st_ino}".encode(), "sha256").hex()


def check_ours(con: sqlite3.Connection) -> None:
    """Raise NotOurs unless `con`'s file is an index kb wrote on this machine: its schema
    exactly kb's (read from sqlite_master, which runs nothing the file defines), then its proof.
    Called before any query of the file's tables."""
    if frozenset(con.execute("SELECT type, name, tbl_name, sql FROM sqlite_master")) != expected_master():
        raise NotOurs("not an index kb wrote (its schema is not kb's)")
    proof = _proof(con)
    if proof is None:
        return
    found = con.execute("SELECT value FROM meta WHERE key = ?", (PROOF_KEY,)).fetchone()
    if found is None or type(found[0]) is not str or not hmac.compare_digest(found[0], proof):
        raise NotOurs("not an index kb wrote on this machine")


def meta_get(con: sqlite3.Connection, key: str) -> str | None:
    row = con.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None


def use_wal(con: sqlite3.Connection) -> None:
    """The file in WAL mode from its first build on: readers then read while an update writes.

    Not before: a new file's first build writes the whole index in one transaction, which WAL
    writes twice (to the log, then again into the file at the checkpoint), and a rollback
    journal once (pages added to a file are not journalled). Measured on the 60,000-chunk
    haystack, 0.3 s less system CPU a full build. A build killed part way leaves a hot
    journal that SQLite rolls back on the next open: an empty index, rebuilt as any other.
    A file made to replace a damaged one is put in WAL at once (TextIndex._replace_damaged).
    """
    try:
        if con.execute("PRAGMA journal_mode").fetchone()[0] not in ("wal", "memory"):
            con.execute("PRAGMA journal_mode = WAL")
    except sqlite3.OperationalError:
        pass  # a read-only or odd filesystem, or a reader holding the file: the default journal still works


def create_schema(con: sqlite3.Connection) -> None:
    """Make the tables in an empty file (or a connection to memory), stamped with the version.
    The journal stays the default until the first build has written (use_wal)."""
    # One transaction, version stamp included: a second process opening the file meanwhile
    # sees an empty file or a whole index, never tables without a version (which it would
    # take for damage, and delete from under the first).
    con.execute("BEGIN IMMEDIATE")
    try:
        if con.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    con.execute(statement)
            proof = _proof(con)
            if proof is not None:  # in the same transaction: no process sees the file without it
                con.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (PROOF_KEY, proof))
        con.execute("COMMIT")
    except BaseException:
        if con.in_transaction:  # a failed COMMIT (a full disk) has rolled back already
            con.execute("ROLLBACK")
        raise
