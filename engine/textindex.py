"""The text index: one SQLite file per base at <base>/.kb/index.db, FTS5 with BM25.

The file holds nothing that cannot be recomputed from the markdown: delete it and the next
index rebuilds it. A damaged file is not repaired, it is replaced. Besides the chunks it
keeps each note's parsed label, so a fresh process routes without re-reading every note.

Chunk rowids carry their file: rowid = file_id << FILE_SHIFT | chunk_number, so the best
chunk per file is a GROUP BY over an integer the FTS5 index already holds, with no join.
"""

from __future__ import annotations

import errno
import hashlib
import itertools
import json
import os
import sqlite3
import stat
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from types import SimpleNamespace
from dataclasses import dataclass, field
from pathlib import Path

try:
    import resource  # Unix: the descriptor limit the connection pool stays under
except ImportError:
    resource = SimpleNamespace()  # type: ignore[assignment]

from . import bignote
from .chunking import Chunk, chunk_sections
from .excerpt import plain
from .errors import KbError
from .fleet import Base
from .nofollow import make_dirs, refuse_links
from .notes import Note, is_map_file, parse_note
from .names import is_valid_text, shown
from .stemming import note_language, stem_question, stem_text

SCHEMA_VERSION = 4  # 4: the indexed columns hold Snowball stems (engine/stemming.py)
FILE_SHIFT = 20  # a million chunks per file; a 50 MB note makes ~35,000
PRUNE_ABOVE_CHUNKS = 10_000  # "How the Catalogue Ranks": above this, the commonest terms leave the expression
PRUNE_DF_FRACTION = 0.25  # a term in more than a quarter of the chunks moves nothing in BM25
# FTS5's own record of its row count and each column's token total (fts5_index.c,
# FTS5_AVERAGES_ROWID): the chunk count without `count(*)`, which reads every row.
FTS5_AVERAGES_ID = 1
# Above SHORTCUT_ABOVE_CHUNKS a base's search first reads its SHORTCUT_CHUNKS best chunks (at
# least 4 per file asked for) and groups them by file, and keeps that only when it provably
# is the exact query's answer (_best_files). Below, grouping every match is as fast (measured
# at 7,000 chunks) and the shortcut would mostly fall back.
SHORTCUT_ABOVE_CHUNKS = 10_000
SHORTCUT_CHUNKS = 200
MAX_NOTE_BYTES = 64 * 1024 * 1024  # a note larger than this is skipped, not read
# A stat vouches for a note only if the note is older than this before the last update began:
# on a coarse clock (FAT keeps 2 s, many kernels a few ms) an edit that keeps the size can keep
# the mtime too, and would otherwise never be read. Younger notes are hashed again (cheap).
RACY_NS = 2_000_000_000

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
    problems TEXT NOT NULL
);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks USING fts5(
    heading_path UNINDEXED, body UNINDEXED, line UNINDEXED, heading_stems, body_stems,
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_vocab USING fts5vocab(chunks, 'row');
PRAGMA user_version = {SCHEMA_VERSION};
"""


@dataclass(frozen=True)
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


@dataclass
class IndexReport:
    base: str
    files: int = 0
    entries: int = 0
    chunks: int = 0
    unchanged: int = 0
    changed: int = 0
    added: int = 0
    removed: int = 0
    unreachable: list[str] = field(default_factory=list)  # notes with no Search for: line
    skipped: list[str] = field(default_factory=list)  # "path: why", files that could not be read
    warnings: list[str] = field(default_factory=list)  # "path:line: what", indexed anyway
    rebuilt: bool = False  # the file was damaged and replaced
    seconds: float = 0.0

    @property
    def touched(self) -> int:
        return self.changed + self.added + self.removed


def content_hash(data: bytes) -> str:
    # Not cryptographic on purpose: the question is "did it change", the adversary an editor.
    return hashlib.blake2b(data, digest_size=8).hexdigest()


def list_notes(root: Path) -> tuple[dict[str, os.stat_result], list[str]]:
    """Every markdown file below a base (hidden folders skipped, links not followed)."""
    found: dict[str, os.stat_result] = {}
    problems: list[str] = []

    def onerror(err: OSError) -> None:
        problems.append(f"{shown(_rel(root, err.filename))}: cannot list ({err.strerror})")

    top = os.fspath(root)
    for dirpath, dirnames, filenames in os.walk(root, onerror=onerror, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        # os.walk yields `top` itself, then `top/sub/...`: the relative part is a slice
        # (os.path.relpath made two absolute paths per file, a fifth of a 5,000-file check).
        under = "" if dirpath == top else dirpath[len(top):].lstrip(os.sep).replace(os.sep, "/") + "/"
        for name in filenames:
            if not name.endswith(".md") or name.startswith("."):
                continue
            full = os.path.join(dirpath, name)
            rel = under + name
            if not is_valid_text(rel):
                # SQLite, JSON and the terminal all refuse it; the rest of the base still answers.
                problems.append(f"{shown(rel)}: file name is not valid UTF-8; rename it to index it")
                continue
            try:
                st = os.stat(full)  # follows a file symlink; a dangling one is reported
            except OSError as e:
                problems.append(f"{rel}: cannot read ({e.strerror})")
                continue
            if not _is_regular(st):
                continue
            found[rel] = st
    return found, problems


_LISTING_FAILED = ": cannot list ("


def listing_gaps(problems: list[str]) -> list[str]:
    """The folders list_notes could not list, from its problem lines: "" for the base itself,
    else "sub/dir/". What was in them is unknown, so an index keeps its notes below them."""
    gaps = []
    for p in problems:
        rel, sep, _ = p.rpartition(_LISTING_FAILED)
        if sep:
            gaps.append("" if rel == "." or os.path.isabs(rel) else rel.rstrip("/") + "/")
    return gaps


def _in_gap(rel: str, gaps: list[str]) -> bool:
    return any(rel.startswith(g) for g in gaps)  # "" (the base unlisted) holds every note


def _is_regular(st: os.stat_result) -> bool:
    return stat.S_ISREG(st.st_mode)


def _rel(root: Path, p: str | None) -> str:
    if not p:
        return str(root)
    try:
        return os.path.relpath(p, root).replace(os.sep, "/")
    except ValueError:
        return p


_SIDE_FILES = ("", "-wal", "-shm", "-journal")  # index.db and what SQLite writes beside it


class TextIndex:
    """One base's index. Safe to share between threads: each thread gets its own connection."""

    def __init__(self, base: Base):
        self.base = base
        self.path = base.index_path
        # Bounded connections: a pool per base (see _checkout), not one per thread: `kb serve`
        # runs tools on up to 40 threads, and a connection per thread per base ran a 16-base
        # fleet out of file descriptors.
        self._idle: list[sqlite3.Connection] = []  # guarded by _POOL_LOCK
        self._readers = threading.BoundedSemaphore(READERS_PER_BASE)
        self._generation = 0  # moved on when the file is replaced: older connections are closed
        self._pinned: sqlite3.Connection | None = None  # conn()'s, for the bench and the tests
        self._write_lock = threading.RLock()  # re-entered: update() may find the file damaged
        self.was_rebuilt = False
        # When the file cannot be made or written (a read-only fleet, a full disk, `.kb` that is
        # not a directory), one connection to an index in memory serves this process instead:
        # the answer is still served, and says so.
        self._memory: sqlite3.Connection | None = None
        self.memory_why: str | None = None
        # The pruning threshold; an instance may move it (the bench, the tests), never the rule.
        self.prune_above = PRUNE_ABOVE_CHUNKS

    # -- connections -------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        # `.kb`, index.db and SQLite's side files are never reached through a link (engine/nofollow);
        # checked below the folder holding `.kb` (the base, or a bench's scratch folder).
        make_dirs(self.path.parent, below=self.path.parent.parent)
        for suffix in _SIDE_FILES:
            refuse_links(str(self.path) + suffix, below=self.path.parent.parent)
        con = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
        con.execute("PRAGMA busy_timeout = 30000")
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
            con = _take_idle(self)
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
                    _give_back(self, con)
                else:  # failed (perhaps damaged), or the file was replaced meanwhile
                    con.close()
        finally:
            if gate is not None:
                gate.release()

    def _open_checked(self) -> sqlite3.Connection:
        """Open, and if the file is not an index of ours, replace it with an empty one."""
        if self._memory is not None:
            return self._memory
        con = None
        try:
            con = self._connect()
            version = con.execute("PRAGMA user_version").fetchone()[0]
            if version != SCHEMA_VERSION:
                tables = con.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
                if tables:
                    raise sqlite3.DatabaseError(f"schema version {version}, expected {SCHEMA_VERSION}")
                self._create(con)
            else:
                con.execute("SELECT count(*) FROM files").fetchone()
                con.execute("SELECT rowid FROM chunks LIMIT 1").fetchone()
            return con
        except OSError as e:  # `.kb` cannot be made: a read-only fleet, no permission, a file there
            return self._in_memory(_os_why(self.path.parent, e))
        except sqlite3.DatabaseError as e:
            if con is not None:
                con.close()
            if is_unwritable(e):
                return self._in_memory("index.db is a directory" if _is_dir(self.path) else str(e))
            if not is_damage(e):
                if "locked" in str(e) or "busy" in str(e):
                    raise KbError(f"{self.path}: locked by another process ({e})") from e
                raise
            return self._replace_damaged()

    def _create(self, con: sqlite3.Connection) -> None:
        try:
            con.execute("PRAGMA journal_mode = WAL")
        except sqlite3.OperationalError:
            pass  # a read-only or odd filesystem: the default journal still works
        # One transaction, version stamp included: a second process opening the file meanwhile
        # sees an empty file or a whole index, never tables without a version (which it would
        # take for damage, and delete from under the first).
        con.execute("BEGIN IMMEDIATE")
        try:
            if con.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        con.execute(statement)
            con.execute("COMMIT")
        except BaseException:
            if con.in_transaction:  # a failed COMMIT (a full disk) has rolled back already
                con.execute("ROLLBACK")
            raise

    def _in_memory(self, why: str) -> sqlite3.Connection:
        """Serve this process from an index in memory: a copy of the file when it can be read."""
        with self._write_lock:
            if self._memory is None:
                if why in _UNWRITABLE_WORDS:  # SQLite's words for it; say what is actually wrong
                    why = _fs_why(self.path.parent, why)
                mem = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
                if not _copy_readable(self.path, mem):
                    mem.close()
                    mem = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
                    self._create(mem)
                self.close()
                self._memory, self.memory_why = mem, why
            return self._memory

    @property
    def memory_reason(self) -> str | None:
        """One line naming the file and the problem, when this process indexes in memory."""
        if self.memory_why is None:
            return None
        return f"{self.path}: cannot be written ({self.memory_why}); the notes were indexed in memory for this run"

    def _replace_damaged(self) -> sqlite3.Connection:
        with self._write_lock:
            if self._memory is not None:
                self._memory.close()
                self._memory = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
                self._create(self._memory)
                self.was_rebuilt = True
                return self._memory
            self.close()  # the pool's connections are to the file about to go: none is reused
            for suffix in _SIDE_FILES:
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
            self._create(con)
            return con

    def close(self) -> None:
        """Close every idle connection; one in use is closed when given back."""
        self._generation += 1
        for con in _drop_idle(self):
            con.close()
        if self._pinned is not None:
            self._pinned.close()
            self._pinned = None

    def _replaced(self, con: sqlite3.Connection) -> None:
        """The file was replaced: every older connection goes, the new one waits in the pool."""
        self.close()
        if con is not self._memory:
            _give_back(self, con)

    def _guard(self, fn, *args):
        """Run a read; a file damaged under us is replaced and the read retried once."""
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
                return self._guard(fn, *args)
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

    # -- reading ---------------------------------------------------------------------

    def records(self) -> list[FileRecord]:
        return self._guard(_records)

    def skipped(self) -> list[str]:
        """The notes the last update could not read, as "path: why" lines."""
        raw = self._guard(lambda c: _meta_get(c, "skipped"))
        out = json.loads(raw) if raw else []
        if self.memory_why is not None:
            out.insert(0, self._memory_line())
        return out

    def _memory_line(self) -> str:
        return f".kb/index.db: cannot be written ({self.memory_why}); indexed in memory for this run"

    def chunk_count(self) -> int:
        return self._guard(chunk_total)

    def search(
        self, terms: list[str], limit: int, question: str = ""
    ) -> tuple[list[tuple[str, float, str, str, int]], list[str]]:
        """Files ranked by BM25 at their best chunk: (path, bm25, heading_path, text, line).

        `terms` are the question's content words; they are stemmed here (in the language
        `question` is written in, engine/stemming.py) because the index holds stems.
        Returns the rows and the stems that were sent, after pruning.
        """
        return self.search_stems(stem_question(question, terms), limit)

    def search_stems(self, stems: list[str], limit: int) -> tuple[list[tuple[str, float, str, str, int]], list[str]]:
        """As `search`, for terms already stemmed (the resident leg's fallback)."""
        return self._guard(_search, stems, limit, self.prune_above)

    def sent_terms(self, terms: list[str], question: str = "") -> list[str]:
        """The stems `search` would send to FTS5 for these, after pruning (for the bench)."""
        return self._guard(terms_to_send, stem_question(question, terms), self.prune_above)

    def chunks_of(self, path: str) -> list[tuple[str, str, int]]:
        return self._guard(_chunks_of, path)

    def passage_candidates(self, path: str, terms: list[str], cap: int) -> list[tuple[int, tuple[str, str, int]]]:
        """(ordinal, chunk) for the chunks of a note that can hold the question's words: all of a
        note of up to `cap` chunks; of a longer one (a 50 MB note makes 45,000), the `cap` that
        FTS5 matches best and the first few, so a passage never costs reading the whole note."""
        return self._guard(_passage_candidates, path, stem_question("", terms), cap)

    def terms_held(self, path: str, terms: list[str]) -> set[str]:
        """Which of `terms` this note's indexed text holds (the coverage rule, engine/covered.py)."""
        return self._guard(_terms_held, path, terms)

    # -- writing ---------------------------------------------------------------------

    def stale(self) -> bool:
        """Cheap check: has any note been added, removed, or touched since the last index?"""
        on_disk, problems = list_notes(self.base.root)
        gaps = listing_gaps(problems)
        # A listing that fails, or fails no more, is news the stored answer must tell.
        said = json.loads(self._guard(lambda c: _meta_get(c, "skipped")) or "[]")
        if {p for p in problems if _LISTING_FAILED in p} != {p for p in said if _LISTING_FAILED in p}:
            return True
        known = self._guard(lambda c: dict(c.execute("SELECT path, mtime_ns || ':' || size FROM files")))
        known_skips = self._guard(lambda c: _meta_get(c, "skipped_stats")) or "{}"
        skips = json.loads(known_skips)
        racy_from = self._guard(_racy_from)
        for rel, st in on_disk.items():
            sig = f"{st.st_mtime_ns}:{st.st_size}"
            if is_map_file(rel):
                continue
            if known.get(rel) != sig and skips.get(rel) != sig:
                return True
            if racy_from is not None and st.st_mtime_ns >= racy_from:
                return True  # same stat, but too young for the stat to prove the same content
        # A note that was skipped and is gone must leave the skipped list too.
        return any(rel not in on_disk and not _in_gap(rel, gaps) for rel in (*known, *skips))

    def update(self, *, force: bool = False) -> IndexReport:
        """Bring the index up to date with the markdown. The markdown is only ever read."""
        t0 = time.perf_counter()
        report = IndexReport(base=self.base.name)
        for attempt in (1, 2):
            try:
                with self._write_lock:
                    if self._memory is not None:
                        _update(self._memory, self.base.root, report, force)
                    else:
                        with self._checkout(reader=False) as con:
                            _update(con, self.base.root, report, force)
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
            report.skipped.insert(0, self._memory_line())
        report.rebuilt = self.was_rebuilt
        report.seconds = time.perf_counter() - t0
        return report


# -- the process's idle connections ------------------------------------------------------

READERS_PER_BASE = 4  # readers of one base at once; a further one waits its turn
MAX_IDLE_CONNECTIONS = 32  # idle in the whole process, every base together...
_idle_cap: int | None = None


def _max_idle() -> int:
    """...and no more than a sixteenth of the descriptors this process may open (`ulimit -n`):
    idle connections must never be what runs it out."""
    global _idle_cap
    if _idle_cap is None:
        try:
            soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
            if soft == resource.RLIM_INFINITY:
                soft = -1
        except (AttributeError, OSError):  # no `resource` module here, or no such limit
            soft = -1
        _idle_cap = MAX_IDLE_CONNECTIONS if soft < 0 else max(1, min(MAX_IDLE_CONNECTIONS, soft // 16))
    return _idle_cap
_POOL_LOCK = threading.Lock()  # one lock for every pool: eviction crosses bases
_IDLE_ORDER: "OrderedDict[int, tuple[TextIndex, sqlite3.Connection]]" = OrderedDict()  # oldest first


def _take_idle(index: TextIndex) -> sqlite3.Connection | None:
    with _POOL_LOCK:
        if not index._idle:
            return None
        con = index._idle.pop()
        _IDLE_ORDER.pop(id(con), None)
        return con


def _give_back(index: TextIndex, con: sqlite3.Connection) -> None:
    evicted = []
    with _POOL_LOCK:
        index._idle.append(con)
        _IDLE_ORDER[id(con)] = (index, con)
        while len(_IDLE_ORDER) > _max_idle():
            _, (owner, old) = _IDLE_ORDER.popitem(last=False)
            owner._idle.remove(old)
            evicted.append(old)
    for old in evicted:  # closed outside the lock: closing can wait on the disk
        old.close()


def _drop_idle(index: TextIndex) -> list[sqlite3.Connection]:
    with _POOL_LOCK:
        out, index._idle = index._idle, []
        for con in out:
            _IDLE_ORDER.pop(id(con), None)
        return out


_DAMAGE_WORDS = ("malformed", "not a database", "corrupt", "no such table", "no such column", "schema version")


# The file or its folder cannot be written or opened: not damage (deleting would not help).
_UNWRITABLE_WORDS = ("readonly database", "unable to open database file", "disk I/O error", "database or disk is full")


def is_unwritable(e: sqlite3.DatabaseError) -> bool:
    return isinstance(e, sqlite3.OperationalError) and any(w in str(e) for w in _UNWRITABLE_WORDS)


def _is_dir(p: Path) -> bool:
    """Path.is_dir, but False when the question itself cannot be asked (a folder mode 000)."""
    try:
        return p.is_dir()
    except OSError:
        return False


def _os_why(folder: Path, e: OSError) -> str:
    if os.path.lexists(folder) and not _is_dir(folder):
        return f"{folder.name} is not a directory"
    return e.strerror or str(e)


def _fs_why(folder: Path, fallback: str) -> str:
    probe = folder if _is_dir(folder) else folder.parent
    try:
        if os.statvfs(probe).f_flag & os.ST_RDONLY:
            return "read-only file system"
    except OSError:
        pass
    if not os.access(probe, os.W_OK):
        return "permission denied"
    crowded = _descriptors_near_limit()  # SQLite says "unable to open" for that too: name it
    return f"too many open files: {crowded}" if crowded else fallback


def _descriptors_near_limit() -> str | None:
    """"N of the limit of M in use" when this process is (nearly) out of file descriptors."""
    try:
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        used = len(os.listdir("/proc/self/fd"))  # Linux; elsewhere the question is not asked
    except OSError as e:
        return "the limit reached" if e.errno == errno.EMFILE else None
    except AttributeError:  # no `resource` module here
        return None
    if soft == resource.RLIM_INFINITY or used < soft - 8:
        return None
    return f"{used} of this process's limit of {soft} in use"


def _copy_readable(path: Path, mem: sqlite3.Connection) -> bool:
    """Copy a sound index file into `mem`, read as immutable (it may sit on a read-only disk)."""
    try:
        refuse_links(path, below=path.parent.parent)  # another program's file is not our index
        if not path.is_file():
            return False
        src = sqlite3.connect(path.resolve().as_uri() + "?immutable=1", uri=True)
        try:
            if src.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
                return False
            src.execute("SELECT count(*) FROM files").fetchone()
            src.backup(mem)
            return True
        finally:
            src.close()
    except (sqlite3.Error, OSError):
        return False


def is_damage(e: sqlite3.DatabaseError) -> bool:
    """A file that is not a sound index of ours, as opposed to a lock or a bug."""
    if isinstance(e, sqlite3.OperationalError) and not any(w in str(e) for w in _DAMAGE_WORDS):
        return False
    return True


def _racy_from(con: sqlite3.Connection) -> int | None:
    """Notes with an mtime at or after this may have changed without their stat showing it."""
    last = _meta_get(con, "indexed_at_ns")
    return int(last) - RACY_NS if last else None


def _meta_get(con: sqlite3.Connection, key: str) -> str | None:
    row = con.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None


def _records(con: sqlite3.Connection) -> list[FileRecord]:
    rows = con.execute(
        "SELECT id, path, hash, is_entry, title, purpose, keys, species, label_line,"
        " label_under_title, title_line, links, date, chunks, mtime_ns, problems FROM files ORDER BY path"
    ).fetchall()
    return [
        FileRecord(
            id=r[0], path=r[1], hash=r[2], is_entry=bool(r[3]), title=r[4], purpose=r[5],
            keys=_tuple_of(r[6]), species=r[7], label_line=r[8], label_under_title=bool(r[9]),
            title_line=r[10], links=_tuple_of(r[11]), date=r[12], chunks=r[13], mtime_ns=r[14],
            problems=_tuple_of(r[15]),
        )
        for r in rows
    ]


def _tuple_of(raw: str) -> tuple[str, ...]:
    # Most notes have no links and no problems: '[]' needs no parser (15,000 loads at 5,000 files).
    return () if raw == "[]" else tuple(json.loads(raw))


def fts_expression(terms: list[str]) -> str:
    """Every term quoted: a question's words are words, never FTS5 query syntax.

    A NUL would end the expression inside its quotes (FTS5 reads a C string): it is dropped.
    """
    return " OR ".join('"' + t.replace("\x00", "").replace('"', '""') + '"' for t in terms)


def _varint(blob: bytes, i: int = 0) -> tuple[int, int]:
    """SQLite's varint (what FTS5 writes): big-endian 7-bit groups, a 9th byte of 8 bits."""
    v = 0
    for k in range(9):
        c = blob[i]
        i += 1
        if k == 8:
            return (v << 8) | c, i
        v = (v << 7) | (c & 0x7F)
        if not c & 0x80:
            return v, i
    return v, i  # pragma: no cover - the loop always returns


def _averages(con: sqlite3.Connection) -> bytes:
    row = con.execute("SELECT block FROM chunks_data WHERE id = ?", (FTS5_AVERAGES_ID,)).fetchone()
    return bytes(row[0]) if row and row[0] else b""


def chunk_total(con: sqlite3.Connection, blob: bytes | None = None) -> int:
    """Chunks in the index, as FTS5 itself counts them for BM25; `count(*)` if that cannot be read."""
    if blob is None:
        blob = _averages(con)
    if blob:
        try:
            return _varint(blob)[0]
        except IndexError:
            pass
    return con.execute("SELECT count(*) FROM chunks").fetchone()[0]


def _common_terms(con: sqlite3.Connection, blob: bytes) -> frozenset[str] | None:
    """The terms in more than PRUNE_DF_FRACTION of the chunks, stored by the last update.

    Valid only for the exact index state it was computed at (FTS5's averages record, which
    changes with every row added or removed); otherwise None, and the caller asks FTS5.
    """
    raw = _meta_get(con, "common_terms")
    if not raw or not blob:
        return None
    try:
        stored = json.loads(raw)
    except ValueError:
        return None
    if stored.get("averages") != blob.hex() or stored.get("fraction") != PRUNE_DF_FRACTION:
        return None
    return frozenset(stored.get("terms", ()))


def refresh_common_terms(con: sqlite3.Connection, min_chunks: int | None = None) -> None:
    """Store the frequency table pruning reads, so a question needs no fts5vocab probe.

    Its own transaction, after the update committed: FTS5 writes its averages record when
    pending rows are flushed, so only a committed index has one that matches its terms.
    Made only for a base the seed's rule prunes (over `min_chunks`): it is a scan of the
    whole vocabulary (~95 ms at 42,000 chunks) after every update that changed something,
    and a smaller base never reads it (a threshold moved below that probes instead).
    """
    try:
        blob = _averages(con)
        floor = PRUNE_ABOVE_CHUNKS if min_chunks is None else min_chunks
        if chunk_total(con, blob) <= floor or _common_terms(con, blob) is not None:
            return  # not needed, or already describes this exact index
        con.execute("BEGIN IMMEDIATE")
        try:
            blob = _averages(con)
            cutoff = chunk_total(con, blob) * PRUNE_DF_FRACTION
            common = {t: d for t, d in con.execute("SELECT term, doc FROM chunks_vocab WHERE doc > ?", (cutoff,))}
            con.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES ('common_terms', ?)",
                (json.dumps({"averages": blob.hex(), "fraction": PRUNE_DF_FRACTION, "terms": common},
                            ensure_ascii=False, sort_keys=True),),
            )
            con.execute("COMMIT")
        except BaseException:
            if con.in_transaction:
                con.execute("ROLLBACK")
            raise
    except sqlite3.OperationalError:
        pass  # read-only or busy: the table is a shortcut, and the probes give the same answer


def terms_to_send(con: sqlite3.Connection, terms: list[str], prune_above: int = PRUNE_ABOVE_CHUNKS) -> list[str]:
    """The question's terms less those pruning drops ("How the Catalogue Ranks": above `prune_above` chunks,
    a term in more than PRUNE_DF_FRACTION of them leaves the expression)."""
    return _send(con, terms, prune_above)[0]


def _send(con: sqlite3.Connection, terms: list[str], prune_above: int) -> tuple[list[str], int]:
    if not terms:
        return [], 0
    blob = _averages(con)
    total = chunk_total(con, blob)
    if total <= prune_above:
        return list(terms), total
    cutoff = total * PRUNE_DF_FRACTION
    common = _common_terms(con, blob)
    if common is not None:
        return [t for t in terms if t not in common], total
    kept = []  # no table for this exact index: ask FTS5, term by term
    for t in terms:
        row = con.execute("SELECT doc FROM chunks_vocab WHERE term = ?", (t,)).fetchone()
        if row is None or row[0] <= cutoff:
            kept.append(t)
    return kept, total


@contextmanager
def one_snapshot(con: sqlite3.Connection) -> Iterator[None]:
    """Several SELECTs read one state of the index: a read transaction around them.

    In autocommit each SELECT sees the latest commit, so a `kb index` committing between
    the file ids and their chunks made a search look up a chunk that was gone (KeyError).
    Under WAL the writer does not wait for this reader, nor the reader for the writer.
    """
    if con.in_transaction:  # already inside one (an update reading its own writes)
        yield
        return
    con.execute("BEGIN")
    try:
        yield
    finally:
        if con.in_transaction:
            con.execute("COMMIT")  # nothing written: ends the read, releases the snapshot


def _search(con: sqlite3.Connection, terms: list[str], limit: int, prune_above: int = PRUNE_ABOVE_CHUNKS):
    with one_snapshot(con):
        return _search_in_snapshot(con, terms, limit, prune_above)


def _search_in_snapshot(con: sqlite3.Connection, terms: list[str], limit: int, prune_above: int):
    if not terms:
        return [], []
    sent, total = _send(con, terms, prune_above)
    if not sent:
        return [], sent
    expr = fts_expression(sent)
    best = _best_files(con, expr, limit) if total > SHORTCUT_ABOVE_CHUNKS else _best_files_exact(con, expr, limit)
    if not best:
        return [], sent
    fids = [b[1] for b in best]
    paths = dict(
        con.execute(f"SELECT id, path FROM files WHERE id IN ({','.join('?' * len(fids))})", fids).fetchall()
    )
    rowids = [b[0] for b in best]
    texts = {
        r[0]: (r[1], r[2], r[3])
        for r in con.execute(
            f"SELECT rowid, heading_path, body, line FROM chunks WHERE rowid IN ({','.join('?' * len(rowids))})",
            rowids,
        )
    }
    out = []
    for rowid, fid, score in best:
        if fid not in paths:
            continue
        hp, body, line = texts[rowid]
        out.append((paths[fid], score, hp, body, line))
    # Ties in BM25 order by path, as the keyword ranking does.
    out.sort(key=lambda r: (r[1], r[0]))
    return out, sent


def _best_files_exact(con: sqlite3.Connection, expr: str, limit: int) -> list[tuple[int, int, float]]:
    # The bare `rowid` beside min() takes the row that holds the minimum: the best chunk.
    return con.execute(
        # MATERIALIZED: bm25() may not run inside an aggregate, so the match is not flattened.
        "WITH m AS MATERIALIZED (SELECT rowid AS r, bm25(chunks) AS s FROM chunks WHERE chunks MATCH ?)"
        f" SELECT r, r >> {FILE_SHIFT} AS fid, min(s) AS best FROM m GROUP BY fid ORDER BY best, fid LIMIT ?",
        (expr, limit),
    ).fetchall()


def _best_files(con: sqlite3.Connection, expr: str, limit: int) -> list[tuple[int, int, float]]:
    """(best chunk's rowid, file id, bm25) of the `limit` best files, best first, ties by file id.

    The exact answer groups every matching chunk by file. The shortcut reads only the
    n best chunks (by bm25, then rowid) and keeps each file's first; that is the exact
    answer when every match was read, or when the limit-th file's best is strictly better
    than the last chunk read (an unread chunk scores no better than that one, so no unread
    file can climb into the list, and every listed file's best chunk was read). A file
    whose best score is held by two chunks read would leave which chunk to show to the
    SQL's tie rule (unspecified for a bare column beside min()), so a listed file with such
    a tie sends the question to the exact query too. Measured on a 42,000-chunk base (300
    questions), the shortcut cut the p95 of this step by a fifth (16.7 to 13.3 ms) and fell
    back on 33 of 1,200 searches.
    """
    n = max(SHORTCUT_CHUNKS, 4 * limit)
    rows = con.execute(
        "SELECT rowid, bm25(chunks) FROM chunks WHERE chunks MATCH ? ORDER BY bm25(chunks), rowid LIMIT ?", (expr, n)
    ).fetchall()
    first: dict[int, tuple[int, int, float]] = {}
    tied: set[int] = set()
    for rowid, score in rows:
        fid = rowid >> FILE_SHIFT
        seen = first.get(fid)
        if seen is None:
            first[fid] = (rowid, fid, score)
        elif seen[2] == score:
            tied.add(fid)
    best = sorted(first.values(), key=lambda b: (b[2], b[1]))[:limit]
    if not tied or not any(b[1] in tied for b in best):
        if len(rows) < n:
            return best  # every match was read
        if len(best) == limit and best[-1][2] < rows[-1][1]:
            return best
    return _best_files_exact(con, expr, limit)


def _chunks_of(con: sqlite3.Connection, path: str) -> list[tuple[str, str, int]]:
    row = con.execute("SELECT id FROM files WHERE path = ?", (path,)).fetchone()
    if not row:
        return []
    lo = row[0] << FILE_SHIFT
    return con.execute(
        "SELECT heading_path, body, line FROM chunks WHERE rowid >= ? AND rowid < ? ORDER BY rowid",
        (lo, lo + (1 << FILE_SHIFT)),
    ).fetchall()


def _passage_candidates(con: sqlite3.Connection, path: str, terms: list[str], cap: int):
    with one_snapshot(con):
        return _passage_candidates_in_snapshot(con, path, terms, cap)


def _passage_candidates_in_snapshot(con: sqlite3.Connection, path: str, terms: list[str], cap: int):
    row = con.execute("SELECT id, chunks FROM files WHERE path = ?", (path,)).fetchone()
    if not row:
        return []
    lo = row[0] << FILE_SHIFT
    span = (lo, lo + (1 << FILE_SHIFT))
    cols = "SELECT rowid, heading_path, body, line FROM chunks WHERE rowid >= ? AND rowid < ?"
    if row[1] <= cap:
        rows = con.execute(cols + " ORDER BY rowid", span).fetchall()
    else:
        found = {r[0]: r for r in con.execute(cols + " ORDER BY rowid LIMIT 8", span)}
        if terms:
            for r in con.execute(cols + " AND chunks MATCH ? ORDER BY rank LIMIT ?", (*span, fts_expression(terms), cap)):
                found[r[0]] = r
        rows = sorted(found.values())
    return [(r[0] - lo, (r[1], r[2], r[3])) for r in rows]


def _terms_held(con: sqlite3.Connection, path: str, terms: list[str]) -> set[str]:
    row = con.execute("SELECT id FROM files WHERE path = ?", (path,)).fetchone()
    if not row:
        return set()
    lo = row[0] << FILE_SHIFT
    held = set()
    for t in terms:
        hit = con.execute(
            "SELECT 1 FROM chunks WHERE chunks MATCH ? AND rowid >= ? AND rowid < ? LIMIT 1",
            (fts_expression(stem_question("", [t])), lo, lo + (1 << FILE_SHIFT)),
        ).fetchone()
        if hit:
            held.add(t)
    return held


def read_note(root: Path, rel: str, st: os.stat_result | None = None) -> tuple[str | None, bytes | None, str | None]:
    """(text, raw bytes, problem). A note that cannot be read is reported, never fatal."""
    full = root / rel
    try:
        if st is not None and st.st_size > MAX_NOTE_BYTES:
            return None, None, f"{rel}: too large to index ({st.st_size:,} bytes; limit {MAX_NOTE_BYTES:,})"
        raw = full.read_bytes()
    except FileNotFoundError:
        return None, None, f"{rel}: vanished before it could be read"
    except PermissionError:
        return None, None, f"{rel}: cannot read (permission denied)"
    except IsADirectoryError:
        return None, None, f"{rel}: is a directory"
    except OSError as e:
        return None, None, f"{rel}: cannot read ({e.strerror})"
    if not raw.strip():
        return None, raw, f"{rel}: empty file"
    if b"\x00" in raw[:8192]:
        return None, raw, f"{rel}: binary, not markdown (NUL byte)"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        return None, raw, f"{rel}: not UTF-8 (byte 0x{raw[e.start]:02x} at offset {e.start})"
    return text.lstrip("\ufeff"), raw, None


# How read_note and bignote.scan word a read that failed (as opposed to bytes that are wrong).
_READ_FAILURES = (": cannot read (", ": vanished before it could be read", ": is a directory")


def _is_read_failure(problem: str) -> bool:
    return any(w in problem for w in _READ_FAILURES)


def _update(con: sqlite3.Connection, root: Path, report: IndexReport, force: bool) -> None:
    started_ns = time.time_ns()
    # A folder that cannot be listed (no permission, out of file descriptors) is not a folder
    # emptied: its notes stay indexed as they were, and the answer says the listing failed.
    on_disk, list_problems = list_notes(root)
    gaps = listing_gaps(list_problems)
    report.skipped.extend(list_problems)
    skipped_stats: dict[str, str] = {}
    con.execute("BEGIN IMMEDIATE")
    try:
        # Read under the write lock: another process may have indexed while this one waited.
        known = {
            r[0]: (r[1], r[2], r[3], r[4], bool(r[5]), r[6])
            for r in con.execute("SELECT path, id, mtime_ns, size, hash, is_entry, chunks FROM files")
        }
        racy_from = _racy_from(con)
        for rel in sorted(known):
            if (rel not in on_disk and not _in_gap(rel, gaps)) or is_map_file(rel):
                _delete_file(con, known[rel][0])
                report.removed += 1
        for rel, st in sorted(on_disk.items()):
            if is_map_file(rel):
                continue
            sig = (st.st_mtime_ns, st.st_size)
            old = known.get(rel)
            if old and not force and (old[1], old[2]) == sig and (racy_from is None or sig[0] < racy_from):
                report.unchanged += 1
                continue
            # A large note is read in two bounded passes (engine/bignote.py), never whole.
            big = bignote.scan(root, rel, st, MAX_NOTE_BYTES) if st.st_size > bignote.STREAM_ABOVE_BYTES else None
            text, raw, problem = (None, None, big.problem) if big else read_note(root, rel, st)
            if problem:
                report.skipped.append(problem)
                # What the bytes say (binary, not UTF-8, too large) holds for every reader and
                # is remembered until the stat changes; a failed read (permission denied) says
                # only who tried, so it is re-tried on the next update, not stored for everyone.
                if not _is_read_failure(problem):
                    skipped_stats[rel] = f"{st.st_mtime_ns}:{st.st_size}"
                if old:
                    _delete_file(con, old[0])
                    report.removed += 1
                continue
            h = big.hash if big else content_hash(raw)
            if old and not force and old[3] == h:
                # Touched, not changed: remember the new stat so the next check is free.
                con.execute("UPDATE files SET mtime_ns = ?, size = ? WHERE id = ?", (*sig, old[0]))
                report.unchanged += 1
                continue
            note = big.note if big else parse_note(rel, text)
            if old:
                _delete_file(con, old[0])
                report.changed += 1
            else:
                report.added += 1
            _insert(con, note, h, sig, report, bignote.chunks(root, rel, big) if big else None)
        con.execute(
            "INSERT OR REPLACE INTO meta(key, value) VALUES ('skipped_stats', ?)", (json.dumps(skipped_stats),)
        )
        con.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('indexed_at_ns', ?)", (str(started_ns),))
        # Remembered so a later answer still says which notes it could not read.
        con.execute(
            "INSERT OR REPLACE INTO meta(key, value) VALUES ('skipped', ?)",
            (json.dumps(report.skipped, ensure_ascii=False),),
        )
        con.execute("COMMIT")
    except BaseException:
        # A COMMIT that fails on a full disk has already rolled back, and a second ROLLBACK
        # would raise over the error that says what happened.
        if con.in_transaction:
            con.execute("ROLLBACK")
        raise
    refresh_common_terms(con)
    report.files = con.execute("SELECT count(*) FROM files").fetchone()[0]
    report.entries = con.execute("SELECT count(*) FROM files WHERE is_entry").fetchone()[0]
    report.chunks = chunk_total(con)
    report.unreachable = [r[0] for r in con.execute("SELECT path FROM files WHERE NOT is_entry ORDER BY path")]
    for path, problems in con.execute("SELECT path, problems FROM files WHERE problems != '[]' ORDER BY path"):
        report.warnings.extend(f"{path}: {p}" for p in json.loads(problems))


def _delete_file(con: sqlite3.Connection, file_id: int) -> None:
    lo = file_id << FILE_SHIFT
    con.execute("DELETE FROM chunks WHERE rowid >= ? AND rowid < ?", (lo, lo + (1 << FILE_SHIFT)))
    con.execute("DELETE FROM files WHERE id = ?", (file_id,))


def _insert(
    con: sqlite3.Connection, note: Note, h: str, sig: tuple[int, int], report: IndexReport,
    streamed: Iterator[Chunk] | None = None,
) -> None:
    if streamed is None:
        chunks: list[Chunk] | Iterator[Chunk] = chunk_sections(note.sections)
        if len(chunks) >= (1 << FILE_SHIFT):
            chunks = chunks[: (1 << FILE_SHIFT) - 1]
            report.warnings.append(f"{note.relpath}: more chunks than one file may hold; the rest is not indexed")
    else:
        chunks = itertools.islice(streamed, (1 << FILE_SHIFT) - 1)  # counted as they go in
    cur = con.execute(
        "INSERT INTO files(path, mtime_ns, size, hash, is_entry, title, purpose, keys, species, label_line,"
        " label_under_title, title_line, links, date, chunks, problems) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (
            note.relpath, sig[0], sig[1], h, int(note.is_entry), note.title, note.purpose,
            json.dumps(list(note.keys), ensure_ascii=False), note.species, note.label_line,
            int(note.label_under_title), note.title_line, json.dumps(list(note.links), ensure_ascii=False),
            note.date, 0 if streamed is not None else len(chunks), json.dumps(list(note.problems)),
        ),
    )
    fid = cur.lastrowid
    base_rowid = fid << FILE_SHIFT
    # The note's language decides its stems (engine/stemming.py); a streamed note is judged chunk by chunk.
    language = note_language(c.text for c in chunks) if isinstance(chunks, list) else None

    def row(i: int, c: Chunk) -> tuple:
        # Indexed as read: a link's target is an address, not prose, and would make every
        # note that links to deploy-checklist.md look like it talks about deploys.
        body = plain(c.text)
        lang = language or note_language([body])
        return (base_rowid + i, c.heading_path, body, c.line, stem_text(c.heading_path, lang), stem_text(body, lang))

    con.executemany(
        "INSERT INTO chunks(rowid, heading_path, body, line, heading_stems, body_stems) VALUES (?,?,?,?,?,?)",
        (row(i, c) for i, c in enumerate(chunks)),
    )
    if streamed is not None:
        n = con.execute(
            "SELECT count(*) FROM chunks WHERE rowid >= ? AND rowid < ?", (base_rowid, base_rowid + (1 << FILE_SHIFT))
        ).fetchone()[0]
        con.execute("UPDATE files SET chunks = ? WHERE id = ?", (n, fid))
