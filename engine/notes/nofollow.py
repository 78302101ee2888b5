"""No links followed for files kb writes, locks or rewrites beside the notes.

A fleet is a folder other people (and other programs) can put things in. A symlink planted
where kb writes would turn kb's write into a write somewhere else: `<base>/.kb` pointing at
another program's folder had its index.db deleted and ours written there; a lock file
pointing outside was created; a log or a .gitignore pointing outside was read and its content
copied into the fleet. So every path kb writes is checked with lstat, component by component
below the folder it belongs to (a base, the fleet root), and a lock is opened O_NOFOLLOW.
A link is refused with one line naming it, as a FIFO is; nothing is created or deleted first.

The folder a fleet or a base lives in may itself be reached through a link (`~/fleet ->
/data/fleet`): that is the user's choice, made before kb runs, so components above `below`
are not checked. Only what kb itself creates or replaces inside it is.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path


class LinkRefused(OSError):
    """A path kb was about to write, lock or rewrite is, or passes through, a symbolic link."""


def _refuse(link: Path, target: Path) -> LinkRefused:
    what = "is a symbolic link" if link == target else f"{link} is a symbolic link"
    return LinkRefused(errno.ELOOP, f"{what}; kb follows no link where it writes", str(target))


def refuse_links(path: str | os.PathLike[str], *, below: str | os.PathLike[str] | None = None,
                 no_special: bool = False) -> os.stat_result | None:
    """Raise LinkRefused if `path`, or any component of it under `below`, is a symlink.
    Returns `path`'s own lstat (None when it is absent), for a caller that needs its size.

    Without `below` only `path` itself is checked. A component that does not exist yet is no
    link; the check stops there (what kb then creates is created by kb). `no_special`: raise
    OSError too when `path` is a FIFO, a socket or a device, which an open would wait on (a
    FIFO, for a writer) or read as no file (checked on the same lstat).
    """
    target = Path(path)
    if below is None:
        chain = [target]
    else:
        rel = target.relative_to(Path(below))
        chain, here = [], Path(below)
        for part in rel.parts:
            here = here / part
            chain.append(here)
    for p in chain:
        try:
            st = os.lstat(p)
        except OSError:
            # Absent, under a non-directory, or in a folder nobody may search: no link can be
            # followed there either, and the caller's own open reports it in its own words.
            return None
        if stat.S_ISLNK(st.st_mode):
            raise _refuse(p, target)
    if no_special and chain and not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
        raise OSError(errno.EINVAL, f"{target.name} is not a regular file; kb opens no FIFO, socket or device", str(target))
    return st if chain else None


def make_dirs(folder: str | os.PathLike[str], *, below: str | os.PathLike[str]) -> None:
    """mkdir -p `folder` under `below`, refusing any component that is a link, before or after
    it is made (mkdir never follows a link it creates, but one may be there already).

    `below` itself (a base, the fleet root) is never made: it is the user's, and one that is
    gone was deleted (a long-lived server whose base was removed made it again, as an empty
    base, when it next opened that base's index). FileNotFoundError names it instead."""
    folder, here = Path(folder), Path(below)
    rel = folder.relative_to(here)
    if not os.path.exists(here):
        raise FileNotFoundError(errno.ENOENT, "the folder is gone, deleted or moved; kb does not make it again", str(here))
    for part in rel.parts:
        here = here / part
        try:
            os.mkdir(here)
        except FileExistsError:
            pass
        mode = os.lstat(here).st_mode
        if stat.S_ISLNK(mode):
            # Named in full: the caller reports the file it meant to write inside the folder.
            raise LinkRefused(errno.ELOOP, f"{here} is a symbolic link; kb follows no link where it writes", str(here))
        if not stat.S_ISDIR(mode):
            raise FileExistsError(errno.EEXIST, "exists and is not a directory", str(here))  # as mkdir -p says


def open_lock(path: str | os.PathLike[str]) -> int:
    """A lock file's descriptor, opened without following a link and refused unless regular.

    O_NONBLOCK: a FIFO planted there would otherwise hold the open; it is refused below.
    """
    path = Path(path)
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o600)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise _refuse(path, path) from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file", str(path))
    return fd
