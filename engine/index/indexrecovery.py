"""When the index file is not what it should be: damaged, unwritable, or out of reach.

A damaged file is not repaired, it is replaced (the markdown is the truth). A file that cannot
be written (a read-only fleet, a full disk, `.kb` that is not a directory, a process out of
descriptors) is not damage: the notes are indexed in memory for the run, and the answer names
the true reason, which SQLite's own words often do not.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

try:
    import resource  # Unix: the descriptor limit, where the platform has one
except ImportError:
    from types import SimpleNamespace as _Nothing

    resource = _Nothing()  # type: ignore[assignment]

from .indexschema import SCHEMA_VERSION, NotOurs, check_ours, harden
from .indexupdate import stems_differ
from ..notes.nofollow import open_lock, refuse_links

SIDE_FILES = ("", "-wal", "-shm", "-journal")  # index.db and what SQLite writes beside it
REPLACE_LOCK = "replace.lock"  # in `.kb`: held while a damaged index.db is replaced
# SQLite's words for a file that is not a sound index of ours.
_DAMAGE_WORDS = ("malformed", "not a database", "corrupt", "no such table", "no such column", "schema version")
# The file or its folder cannot be written or opened: not damage (deleting would not help).
UNWRITABLE_WORDS = ("readonly database", "unable to open database file", "disk I/O error", "database or disk is full")


# The bytes SQLite's unix VFS locks (sqlite3.c, os_unix.c): every open connection to a WAL
# file holds a shared lock on the -shm's DMS byte; a writer in rollback mode holds RESERVED.
_SHM_DMS_BYTE = 120 + 8
_RESERVED_BYTE = 0x40000000 + 1


def refuse_unheld(index_path: str, wal: os.stat_result | None, journal: os.stat_result | None) -> None:
    """Raise NotOurs when a write-ahead log or a rollback journal lies beside the index with no
    connection holding it: SQLite would replay it at the open, before check_ours reads a byte,
    and a log kb did not write (a `git pull` brought it) would become the index. One no live
    kb holds is kb's only if a kb was killed; either way the index is rebuilt from the notes
    (docs/decisions.md, "What kb trusts"). Costs nothing when neither file is there."""
    if wal is not None and wal.st_size > 0 and not _held(index_path + "-shm", _SHM_DMS_BYTE):
        raise NotOurs(f"{index_path}-wal: a log no open index holds (not replayed; rebuilt)")
    if journal is not None and journal.st_size > 0 and not _held(index_path, _RESERVED_BYTE):
        raise NotOurs(f"{index_path}-journal: a journal no open index holds (not rolled back; rebuilt)")


def _held(path: str, byte: int) -> bool:
    """Whether any process, this one too, holds a lock on `byte` of `path`, read from the
    kernel's table of locks (/proc/locks), never by opening the file: closing any descriptor of
    a file drops every POSIX lock this process holds on it, SQLite's own included, so a probe
    that opened and closed the -shm broke the locking of a connection kb had open. Where there
    is no such table, the log is trusted as SQLite trusts it."""
    try:
        st = os.stat(path, follow_symlinks=False)
    except OSError:
        return False  # no -shm: nobody has the log open
    try:
        with open("/proc/locks", encoding="ascii", errors="replace") as f:
            table = f.read(_LOCKS_READ_AT_MOST)
    except OSError:
        return True
    return any(_covers(line, st, byte) for line in table.splitlines())


_LOCKS_READ_AT_MOST = 4 << 20  # the whole machine's table; a few hundred bytes a lock


def _covers(line: str, st: os.stat_result, byte: int) -> bool:
    """One /proc/locks row (`1: POSIX ADVISORY READ 123 fe:00:4567 128 128`) holding `byte`
    of the file `st` names; a waiter's row (`->`) holds nothing."""
    parts = line.split()
    if len(parts) < 8 or parts[1] == "->":
        return False
    where, start, end = parts[5], parts[6], parts[7]
    dev_ino = where.rsplit(":", 1)
    if len(dev_ino) != 2 or dev_ino[1] != str(st.st_ino):
        return False
    major, _, minor = dev_ino[0].partition(":")
    try:
        if (int(major, 16), int(minor, 16)) != (os.major(st.st_dev), os.minor(st.st_dev)):
            return False
        return int(start) <= byte and (end == "EOF" or byte <= int(end))
    except ValueError:
        return False


def is_unwritable(e: sqlite3.DatabaseError) -> bool:
    return isinstance(e, sqlite3.OperationalError) and any(w in str(e) for w in UNWRITABLE_WORDS)


def is_damage(e: sqlite3.DatabaseError) -> bool:
    """A file that is not a sound index of ours, as opposed to a lock or a bug."""
    if isinstance(e, sqlite3.OperationalError) and not any(w in str(e) for w in _DAMAGE_WORDS):
        return False
    return True


def is_dir(p: Path) -> bool:
    """Path.is_dir, but False when the question itself cannot be asked (a folder mode 000)."""
    try:
        return p.is_dir()
    except OSError:
        return False


def os_why(folder: Path, e: OSError) -> str:
    if os.path.lexists(folder) and not is_dir(folder):
        return f"{folder.name} is not a directory"
    return e.strerror or str(e)


def fs_why(folder: Path, fallback: str) -> str:
    probe = folder if is_dir(folder) else folder.parent
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


def copy_readable(path: Path, mem: sqlite3.Connection) -> bool:
    """Copy a sound index file into `mem`, read as immutable (it may sit on a read-only disk)."""
    try:
        refuse_links(path, below=path.parent.parent)  # another program's file is not our index
        if not path.is_file():
            return False
        src = sqlite3.connect(path.resolve().as_uri() + "?immutable=1", uri=True)
        try:
            harden(src)
            if not is_sound(src):  # another stemmer's stems too: copied, no question would meet them
                return False
            src.backup(mem)
            return True
        finally:
            src.close()
    except (sqlite3.Error, OSError):
        return False


def is_sound(con: sqlite3.Connection) -> bool:
    """Whether `con` holds an index this kb reads: its schema version, its tables readable,
    stemmed as this process stems, and written by kb on this machine (check_ours, first)."""
    try:
        if con.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
            return False
        check_ours(con)
        con.execute("SELECT count(*) FROM files").fetchone()
        con.execute("SELECT rowid FROM chunks LIMIT 1").fetchone()
        return not stems_differ(con)
    except sqlite3.DatabaseError:
        return False


@contextmanager
def one_replacer(index_path: Path) -> Iterator[bool]:
    """Held while a damaged index file is replaced, by one process at a time. Two processes
    that found it damaged each deleted it and made a new one: the second deleted the file the
    first was building, whose commit then failed ("disk I/O error"). Whoever waited finds
    the new file sound and keeps it. Yields False when no lock can be made (a read-only
    `.kb`, a link or a FIFO there): the caller replaces as before, and fails as before."""
    import fcntl  # POSIX only, and a route that finds its index sound never needs it

    try:
        fd = open_lock(index_path.parent / REPLACE_LOCK)
    except OSError:
        fd = None
    try:
        if fd is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield fd is not None
    finally:
        if fd is not None:
            os.close(fd)
