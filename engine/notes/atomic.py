"""Writing files so a crash leaves the old file or the new one, never half of either."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from .nofollow import refuse_links


def write_atomic(
    path: str | os.PathLike[str], data: str | bytes, *, encoding: str = "utf-8", mode: int | None = None
) -> None:
    """Write to a temporary file beside `path`, fsync it, then rename it over `path`.

    The file keeps the permissions it had; a new one gets `mode`, else what open() would
    give it (0666 less the umask). mkstemp's own 0600 would otherwise leak into every file
    written this way, a .gitignore or a stamp included.
    """
    path = Path(path)
    raw = data.encode(encoding) if isinstance(data, str) else data
    # Replacing a link would not write through it, but what is written was often read through
    # it (a log, a .gitignore): a link where kb writes is refused (engine/notes/nofollow).
    refuse_links(path)
    try:
        st = path.stat()
    except OSError:
        st = None
    if st is not None:
        # A rename needs only the folder's permission: without this a note, an alias file or a
        # log its owner marked read-only (chmod a-w) was replaced, by root or by anyone.
        refuse_read_only(path, st, "replace")
    if mode is None:
        mode = st.st_mode & 0o7777 if st is not None else 0o666 & ~_umask()
    fd, tmp = _temp_beside(path)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError) and e.filename is None:
            # A write or fsync the disk refused (full, a size limit) says only why: the one
            # line a refusal prints must name the file too.
            raise OSError(e.errno, e.strerror, str(path)) from e
        raise


def refuse_read_only(path: Path, st: os.stat_result, verb: str) -> None:
    """A file its owner marked read-only (chmod a-w) is not written, even by root."""
    if not st.st_mode & 0o222 or not os.access(path, os.W_OK):
        raise PermissionError(errno.EACCES, f"read-only (no write permission); kb does not {verb} it", str(path))


def append_once(path: str | os.PathLike[str], data: bytes) -> None:
    """Add `data` at the end of the existing regular file `path` in one write, fsynced,
    without reading what is there (a log of any size costs the same to add to).

    Not a rename: a crash leaves the old file, or the old file and a torn last line, which
    the log's reader keeps as an unreadable line; what was there before is never touched.
    The caller holds the file's lock. A last line without its newline (an editor's) gets one
    first, so the added line stays a line of its own: the one byte before the end is read.
    """
    path = Path(path)
    refuse_links(path)
    flags = os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags | os.O_RDWR)
    except PermissionError:
        fd = os.open(path, flags | os.O_WRONLY)  # writable, not readable: trust its last line
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        refuse_read_only(path, st, "append to")
        if st.st_size and _last_byte(fd, st.st_size) not in (b"\n", None):
            data = b"\n" + data
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)


def _last_byte(fd: int, size: int) -> bytes | None:
    try:
        return os.pread(fd, 1, size - 1)
    except OSError:  # opened write-only
        return None


# A name may be 255 bytes; the temporary name adds a dot, mkstemp's 8 characters and ".tmp".
_TEMP_STEM_BYTES = 200


def _temp_beside(path: Path) -> tuple[int, str]:
    """A new temporary file in `path`'s folder, named after it: (descriptor, its path)."""
    # tempfile (with random) is ~1 ms to import where no site module brought it in already,
    # and most runs of a one-shot `kb route` write nothing: imported when a file is written
    import tempfile

    return tempfile.mkstemp(prefix=_temp_prefix(path), suffix=".tmp", dir=path.parent)


def _temp_prefix(path: Path) -> str:
    """`.name.`, the name cut so the temporary file's name stays legal for any legal `path`
    (a 250-byte note name was once refused because its temporary name was too long)."""
    raw = os.fsencode(path.name)[:_TEMP_STEM_BYTES]
    return "." + raw.decode("utf-8", "ignore") + "."


def _umask() -> int:
    """The process umask, read without setting it where Linux allows (os.umask is racy)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    old = os.umask(0o022)
    os.umask(old)
    return old


def create_atomic(path: str | os.PathLike[str], data: str | bytes, *, encoding: str = "utf-8") -> None:
    """Write a new file whole or not at all, and never over an existing one.

    The temporary file is hard-linked to `path`: link() fails if `path` exists, so the check
    and the write are one step and two writers cannot both win. Raises FileExistsError.
    """
    path = Path(path)
    raw = data.encode(encoding) if isinstance(data, str) else data
    fd, tmp = _temp_beside(path)
    try:
        # A new note is read by whoever reads its siblings: the mode open() would give it,
        # not mkstemp's 0600 (another user's failed read was once stored in a shared index).
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:
            raise
        except OSError:
            # A filesystem without hard links: open(..., "x") still refuses an existing file;
            # only on such a filesystem could a crash mid-write leave a partial note.
            with open(path, "xb") as f:
                f.write(raw)
                f.flush()
                os.fsync(f.fileno())
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass
