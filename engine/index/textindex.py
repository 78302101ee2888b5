"""TextIndex: one base's index file, where every read and write meets it.

The parts live in modules named for them: the file's layout (engine/index/indexschema.py), the note
store the catalogue is built from (engine/index/notestore.py), the FTS5 search with its pruning rule
(engine/index/fts5search.py), the incremental update (engine/index/indexupdate.py), the idle connections
(engine/index/indexpool.py) and what is done when the file is damaged or cannot be written
(engine/index/indexrecovery.py). This class holds the state that ties them together: its pooled
connections, the write lock, and the in-memory index that serves a run when the file cannot.
A read that finds the file damaged replaces it, re-indexes and is retried once.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from . import fts5search, notestore
from .fts5search import one_snapshot
from ..errors import KbError
from ..notes.fleet import Base
from .indexpool import READERS_PER_BASE, drop_idle, give_back, take_idle
from .indexrecovery import (
    SIDE_FILES, UNWRITABLE_WORDS, copy_readable, fs_why, is_damage, is_dir, is_sound, is_unwritable, one_replacer,
    os_why, refuse_unheld,
)
from .indexschema import SCHEMA_VERSION, check_ours, create_schema, harden, meta_get, use_wal
from .indexupdate import IndexReport, bring_up_to_date, is_stale, stems_differ
from ..notes.nofollow import make_dirs, refuse_links
from .notestore import FileRecord
from ..rank.stemming import stem_question

_GATE_LOCK = threading.Lock()  # guards making a base's readers' semaphore (TextIndex._readers)


class TextIndex:
    """One base's index. Safe to share between threads: each thread gets its own connection."""

    def __init__(self, base: Base):
        self.base = base
        # The path as a string; its Path is made when first asked for (path): over 2,000
        # bases the stale check and the opening cache use only the string, and making the
        # Path and the readers' semaphore for each base was most of building the indexes.
        self.path_str = os.path.join(os.fspath(base.root), ".kb", "index.db")  # Base.index_path
        self._path: Path | None = None
        # Bounded connections: a pool per base (see _checkout), not one per thread: `kb serve`
        # runs tools on up to 40 threads, and a connection per thread per base ran a 16-base
        # fleet out of file descriptors.
        # Its idle connections are the pool's to hold (engine/index/indexpool.py): eviction crosses bases.
        self._gate: threading.BoundedSemaphore | None = None  # _readers, made at the first read
        self._generation = 0  # moved on when the file is replaced: older connections are closed
        self._pinned: sqlite3.Connection | None = None  # conn()'s, for the bench and the tests
        self._write_lock = threading.RLock()  # re-entered: update() may find the file damaged
        self.was_rebuilt = False
        self.rebuilt_for_version = False  # the rebuild was an upgrade, not damage
        # When the file cannot be made or written (a read-only fleet, a full disk, `.kb` that is
        # not a directory), one connection to an index in memory serves this process instead:
        # the answer is still served, and says so.
        self._memory: sqlite3.Connection | None = None
        self.memory_why: str | None = None
        # The pruning threshold; an instance may move it (the bench, the tests), never the rule.
        self.prune_above = fts5search.PRUNE_ABOVE_CHUNKS
        # The key of a current opening cache, which ends with the file's state (file_state): a
        # cache is read from the index through a checked connection and keyed on the file's
        # state, the schema and the stemmer (engine/index/catalogue_cache.py); opened in that same
        # state, the file needs no probes again. Set only through vouch().
        self._vouched: tuple | None = None

    @property
    def vouched(self) -> tuple | None:
        """The opening-cache key this file was last vouched for in (None: probe at open)."""
        return self._vouched

    def vouch(self, key: tuple | None) -> None:
        """An opening cache keyed `key` was read through a checked connection, and `key` ends with
        the file's state then: a connection opened while the file is still in it skips the probes."""
        self._vouched = key

    @property
    def path(self) -> Path:
        if self._path is None:
            self._path = Path(self.path_str)
        return self._path

    @path.setter
    def path(self, path: Path) -> None:  # the bench points an index at a scratch copy
        # The path as a string, made once: the stale check and the opening cache stat the file
        # (and its log) several times a question, 2,000 bases over.
        self._path, self.path_str = path, os.fspath(path)

    @property
    def _readers(self) -> threading.BoundedSemaphore:
        if self._gate is None:
            with _GATE_LOCK:  # two threads' first reads make one semaphore, not one each
                if self._gate is None:
                    self._gate = threading.BoundedSemaphore(READERS_PER_BASE)
        return self._gate

    # -- connections -------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        # `.kb`, index.db and SQLite's side files are never reached through a link (engine/notes/nofollow);
        # checked below the folder holding `.kb` (the base, or a bench's scratch folder).
        new_folder = not os.path.isdir(self.path.parent)
        make_dirs(self.path.parent, below=self.path.parent.parent)
        if new_folder:
            # An index is megabytes nobody should commit: a notes folder kept in git ignores it
            # from the first `kb index`, not from the first miss (engine/notes/gitignore).
            from ..notes.gitignore import keep_out_of_git

            keep_out_of_git(self.path.parent.parent, [])
        found = {}
        for suffix in SIDE_FILES:
            # no_special: SQLite opens -journal to look for a hot one, and a FIFO there held it for good
            found[suffix] = refuse_links(self.path_str + suffix, below=self.path.parent.parent, no_special=True)
        # A log or journal no connection holds is not replayed (engine/index/indexrecovery): the
        # lstats above are its cost when none is there.
        refuse_unheld(self.path_str, found["-wal"], found["-journal"])
        con = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
        harden(con)  # the file may be a clone's: nothing its schema names runs (engine/index/indexschema)
        con.execute("PRAGMA busy_timeout = 30000")
        # In WAL, NORMAL syncs the log at a checkpoint rather than at every commit: a crash
        # or a kill still leaves every committed update whole (SQLite's guarantee), and a
        # power cut may lose the last ones, which the next update reads again (the index
        # holds nothing the markdown does not). A full build's commit then waits on no disk.
        con.execute("PRAGMA synchronous = NORMAL")
        return con

    def conn(self) -> sqlite3.Connection:
        """One connection of this process's own, kept until close() (the bench reads through it)."""
        if self._memory is not None:
            return self._memory
        if self._pinned is None:
            self._pinned = self._open_checked()
        return self._pinned

    @contextmanager
    def _checkout(self, *, reader: bool = True) -> Iterator[sqlite3.Connection]:
        """A connection from this base's pool, given back after use.

        Readers are at most READERS_PER_BASE at once per base (a further reader waits for
        one); writers are one at a time already (the write lock). Given back, a connection
        waits idle for the next caller; past MAX_IDLE_CONNECTIONS idle in the whole process
        the longest idle one is closed, so 400 bases indexed in turn hold a few dozen files
        open, not 400 (each connection is up to three descriptors: the file, -wal, -shm).
        """
        gate = self._readers if reader else None
        if gate is not None:
            gate.acquire()
        try:
            generation = self._generation
            con = take_idle(self)
            if con is None:
                con = self._open_checked()
            ok = False
            try:
                yield con
                ok = True
            finally:
                if con is self._memory:
                    pass
                elif ok and generation == self._generation and self._memory is None:
                    give_back(self, con)
                else:  # failed (perhaps damaged), or the file was replaced meanwhile
                    con.close()
        finally:
            if gate is not None:
                gate.release()

    def _open_checked(self, *, again: bool = False) -> sqlite3.Connection:
        """Open, and if the file is not an index of ours, replace it with an empty one."""
        if self._memory is not None:
            return self._memory
        con = None
        other_version = False
        try:
            con = self._connect()
            version = con.execute("PRAGMA user_version").fetchone()[0]
            if version != SCHEMA_VERSION:
                tables = con.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
                if tables:
                    # Ours from another version of kb (an upgrade): replaced below as damage
                    # is, but said apart. Another program's database is not ours at all.
                    ours = {"files", "chunks"} <= {r[0] for r in con.execute("SELECT name FROM sqlite_master")}
                    other_version = version > 0 and ours
                    raise sqlite3.DatabaseError(f"schema version {version}, expected {SCHEMA_VERSION}")
                create_schema(con)
            elif self._vouched is None or self._vouched[-2:] != self.file_state():
                # Exactly kb's schema and this machine's proof before any query of its tables: a
                # clone's index.db (a view in place of a table, forged rows) is replaced, unread.
                check_ours(con)
                con.execute("SELECT count(*) FROM files").fetchone()
                con.execute("SELECT rowid FROM chunks LIMIT 1").fetchone()
                if stems_differ(con):
                    # Stemmed by another PyStemmer (an upgrade): an upgrade, rebuilt as one.
                    other_version = True
                    raise sqlite3.DatabaseError("stems made by another stemmer")
            return con
        except OSError as e:  # `.kb` cannot be made: a read-only fleet, no permission, a file there
            return self._in_memory(os_why(self.path.parent, e))
        except sqlite3.DatabaseError as e:
            if con is not None:
                con.close()
            if "disk I/O error" in str(e) and not again:
                # Another process replacing a damaged file deleted it (or its -wal, -shm) under
                # this open: once its replacement is made, the new file opens.
                with one_replacer(self.path):
                    pass
                return self._open_checked(again=True)
            if is_unwritable(e):
                return self._in_memory("index.db is a directory" if is_dir(self.path) else str(e))
            if not is_damage(e):
                if "locked" in str(e) or "busy" in str(e):
                    raise KbError(f"{self.path}: locked by another process ({e})") from e
                raise
            self.rebuilt_for_version = other_version
            con = self._replace_damaged(keep_sound=True)
            if self._vouched is not None:
                # A current opening cache vouched for the old file, so no stale check compared
                # the notes with it: the replacement is filled before it is read, as `read`
                # fills one for damage a read finds (else every answer searched an empty index).
                self._vouched = None
                with self._write_lock:
                    bring_up_to_date(con, self.base.root, IndexReport(base=self.base.name), False)
            return con

    def file_state(self) -> tuple[tuple[int, ...], tuple[int, ...] | None] | None:
        """(device, inode, size, mtime) of index.db and of its write-ahead log (None when
        empty: present or not, the index is the same); None without an index file."""
        db = _stat_key(self.path_str)
        if db is None:
            return None
        wal = _stat_key(self.path_str + "-wal")
        return db, (None if wal is None or wal[2] == 0 else wal)

    def _in_memory(self, why: str) -> sqlite3.Connection:
        """Serve this process from an index in memory: a copy of the file when it can be read."""
        with self._write_lock:
            if self._memory is None:
                if why in UNWRITABLE_WORDS:  # SQLite's words for it; say what is actually wrong
                    why = fs_why(self.path.parent, why)
                mem = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
                if not copy_readable(self.path, mem):
                    mem.close()
                    mem = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
                    create_schema(mem)
                self.close()
                self._memory, self.memory_why = mem, why
            return self._memory

    @property
    def memory_reason(self) -> str | None:
        """One line naming the file and the problem, when this process indexes in memory."""
        if self.memory_why is None:
            return None
        return f"{self.path}: cannot be written ({self.memory_why}); the notes were indexed in memory for this run"

    def _replace_damaged(self, *, keep_sound: bool = False) -> sqlite3.Connection:
        """A new, empty index in place of a damaged one. `keep_sound`: the damage was found by
        the open's own checks (indexrecovery.is_sound), so a file that passes them once the
        lock is held was made by another process meanwhile, and is kept; damage found deeper
        (by a search, an update) is not seen by those checks, and always replaced."""
        with self._write_lock:
            if self._memory is not None:
                self._memory.close()
                self._memory = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
                create_schema(self._memory)
                self.was_rebuilt = True
                return self._memory
            self.close()  # the pool's connections are to the file about to go: none is reused
            with one_replacer(self.path) as locked:
                found = self._sound_connection() if locked and keep_sound else None
                if found is not None:  # another process replaced it while this one waited
                    self.was_rebuilt = True
                    return found
                for suffix in SIDE_FILES:
                    try:
                        refuse_links(str(self.path) + suffix, below=self.path.parent.parent)  # never delete elsewhere
                        os.unlink(str(self.path) + suffix)
                    except FileNotFoundError:
                        pass
                    except OSError as e:  # a read-only fleet: rebuild in memory instead
                        self.was_rebuilt = True
                        return self._in_memory(f"damaged, and cannot be removed: {e.strerror}")
                self.was_rebuilt = True
                con = self._connect()
                # WAL from the start, not after the first build as a new file: a rollback
                # journal unlinked under a writer fails its commit where WAL's goes through.
                use_wal(con)
                create_schema(con)
                return con

    def _sound_connection(self) -> sqlite3.Connection | None:
        try:
            con = self._connect()
        except sqlite3.DatabaseError:  # still damaged: its pragmas fail
            return None
        if is_sound(con):
            return con
        con.close()
        return None

    def close(self) -> None:
        """Close every idle connection; one in use is closed when given back."""
        self._generation += 1
        for con in drop_idle(self):
            con.close()
        if self._pinned is not None:
            self._pinned.close()
            self._pinned = None

    def _replaced(self, con: sqlite3.Connection) -> None:
        """The file was replaced: every older connection goes, the new one waits in the pool."""
        self.close()
        if con is not self._memory:
            give_back(self, con)

    def read(self, fn, *args):
        """fn(connection, *args): a read; a file damaged under us is replaced and the read retried once."""
        try:
            if self._memory is not None:
                with self._write_lock:  # one connection in memory: reads take turns with writes
                    return fn(self._memory, *args)
            with self._checkout() as con:
                return fn(con, *args)
        except sqlite3.DatabaseError as e:
            if is_unwritable(e) and self._memory is None:
                self._in_memory(str(e))
                self.update()
                return self.read(fn, *args)
            if not is_damage(e):
                if "locked" in str(e) or "busy" in str(e):
                    raise KbError(f"{self.path}: locked by another process ({e})") from e
                raise
            self._replaced(self._replace_damaged())
            self.update()
            if self._memory is not None:
                return fn(self._memory, *args)
            with self._checkout() as con:  # once: a file still damaged now is an error to show
                return fn(con, *args)

    def in_snapshot(self, fn) -> None:
        """fn(connection) over one state of the file, however many SELECTs it makes: a `kb index`
        committing between a resident leg's reads gave postings of chunks with no length."""
        self.read(_in_one_snapshot, fn)

    # -- reading ---------------------------------------------------------------------

    def records(self) -> list[FileRecord]:
        return self.read(notestore.records)

    def skipped(self) -> list[str]:
        """The notes the last update could not read, as "path: why" lines."""
        raw = self.read(lambda c: meta_get(c, "skipped"))
        out = json.loads(raw) if raw else []
        if self.memory_why is not None:
            out.insert(0, self.memory_line())
        return out

    def memory_line(self) -> str:
        """The skipped line that says this run indexes in memory (call only when memory_why is set)."""
        return f".kb/index.db: cannot be written ({self.memory_why}); indexed in memory for this run"

    def chunk_count(self) -> int:
        return self.read(fts5search.chunk_total)

    def search(
        self, terms: list[str], limit: int, question: str = ""
    ) -> tuple[list[tuple[str, float, str, str, int]], list[str]]:
        """Files ranked by BM25 at their best chunk: (path, bm25, heading_path, text, line).

        `terms` are the question's content words; they are stemmed here (in the language
        `question` is written in, engine/rank/stemming.py) because the index holds stems.
        Returns the rows and the stems that were sent, after pruning.
        """
        return self.search_stems(stem_question(question, terms), limit)

    def search_stems(self, stems: list[str], limit: int) -> tuple[list[tuple[str, float, str, str, int]], list[str]]:
        """As `search`, for terms already stemmed (the resident leg's fallback)."""
        return self.read(fts5search.search, stems, limit, self.prune_above)

    def sent_terms(self, terms: list[str], question: str = "") -> list[str]:
        """The stems `search` would send to FTS5 for these, after pruning (for the bench)."""
        return self.read(fts5search.terms_to_send, stem_question(question, terms), self.prune_above)

    def chunks_of(self, path: str) -> list[tuple[str, str, int]]:
        return self.read(notestore.chunks_of, path)

    def passage_candidates(self, path: str, terms: list[str], cap: int) -> list[tuple[int, tuple[str, str, int]]]:
        """(ordinal, chunk) for the chunks of a note that can hold the question's words: all of a
        note of up to `cap` chunks; of a longer one (a 50 MB note makes 45,000), the `cap` that
        FTS5 matches best and the first few, so a passage never costs reading the whole note."""
        return self.read(fts5search.passage_candidates, path, stem_question("", terms), cap)

    def terms_held(self, path: str, terms: list[str]) -> set[str]:
        """Which of `terms` this note's indexed text holds (the coverage rule, engine/rank/covered.py)."""
        return self.read(fts5search.terms_held, path, terms)

    # -- writing ---------------------------------------------------------------------

    def stale(self) -> bool:
        """Cheap check: has any note been added, removed, or touched since the last index?"""
        return is_stale(self.base.root, self.read)

    def update(self, *, force: bool = False) -> IndexReport:
        """Bring the index up to date with the markdown. The markdown is only ever read."""
        t0 = time.perf_counter()
        report = IndexReport(base=self.base.name)
        for attempt in (1, 2):
            try:
                with self._write_lock:
                    if self._memory is not None:
                        bring_up_to_date(self._memory, self.base.root, report, force)
                    else:
                        with self._checkout(reader=False) as con:
                            bring_up_to_date(con, self.base.root, report, force)
                break
            except sqlite3.DatabaseError as e:
                if is_unwritable(e) and self._memory is None:
                    self._in_memory(str(e))  # a read-only file or a full disk: index in memory
                    report = IndexReport(base=self.base.name)
                    continue
                if not is_damage(e):
                    if "locked" in str(e) or "busy" in str(e):
                        raise KbError(f"{self.path}: locked by another process ({e})") from e
                    raise
                if attempt == 2:
                    raise KbError(f"{self.path}: cannot be rebuilt ({e})") from e
                # Damaged under us: replace it and index from scratch.
                self._replaced(self._replace_damaged())
                report = IndexReport(base=self.base.name)
        if self.memory_why is not None:
            report.skipped.insert(0, self.memory_line())
        report.rebuilt = self.was_rebuilt
        report.rebuilt_for_version = self.was_rebuilt and self.rebuilt_for_version
        report.seconds = time.perf_counter() - t0
        return report


def _stat_key(path: str) -> tuple[int, int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _in_one_snapshot(con: sqlite3.Connection, fn) -> None:
    with one_snapshot(con):
        fn(con)
