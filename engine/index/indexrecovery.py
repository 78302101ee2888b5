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

from .indexpool import resource  # the descriptor limit, where the platform has one
from .indexschema import SCHEMA_VERSION, check_ours, harden
from .indexupdate import stems_differ
from ..notes.nofollow import open_lock, refuse_links

SIDE_FILES = ("", "-wal", "-shm", "-journal")  # index.db and what SQLite writes beside it
REPLACE_LOCK = "replace.lock"  # in `.kb`: held while a damaged index.db is replaced
# SQLite's words for a file that is not a sound index of ours.
_DAMAGE_WORDS = ("malformed", "not a database", "corrupt", "no such table", "no such column", "schema version")
# The file or its folder cannot be written or opened: not damage (deleting would not help).
UNWRITABLE_WORDS = ("readonly database", "unable to open database file", "disk I/O error", "database or disk is full")


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
