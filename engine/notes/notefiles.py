"""A base's markdown files on disk: which there are, and reading one. Only ever read.

What the index update, `kb check` and `kb label` agree a note is: a `.md` file below the base,
hidden folders skipped, links not followed into folders, a name that is valid UTF-8, a regular
file. A note that cannot be read is a problem line ("path: why"), never an exception.
"""

from __future__ import annotations

import errno
import io
import os
import stat
from pathlib import Path

from hashlib import blake2b
from ..clean import is_valid_text, shown
from .textfile import open_regular


MAX_NOTE_BYTES = 64 * 1024 * 1024  # a note larger than this is skipped, not read
# A stat vouches for a note, or a folder's listing, only if it is older than this before the
# last update (or walk) began: on a coarse clock (FAT keeps 2 s, many kernels a few ms) an
# edit that keeps the size can keep the mtime too, and would otherwise never be read. Younger
# notes are hashed again (cheap). Read by the index update, the kept listing and the opening
# cache: one number, so none trusts a stat another doubts.
RACY_NS = 2_000_000_000


def content_hash(data: bytes) -> str:
    # Not cryptographic on purpose: the question is "did it change", the adversary an editor.
    return blake2b(data, digest_size=8).hexdigest()


def list_notes(root: Path, folders: list | None = None) -> tuple[dict[str, os.stat_result], list[str]]:
    """Every markdown file below a base (hidden folders skipped, links not followed).

    With `folders`, each folder walked is appended to it as (its path below the base, "" or
    "sub/dir/"; the names in it that can be notes), for engine/index/listing_cache.py."""
    found: dict[str, os.stat_result] = {}
    problems: list[str] = []

    # What os.walk(followlinks=False) did, in its order (a folder's files, then its folders
    # by name), on os.scandir directly: every one-shot lists every base (the stale check),
    # and the walk's own path joins and per-folder islink cost a third of it over 2,000 bases.
    def walk(dirpath: str, under: str) -> None:
        try:
            with os.scandir(dirpath) as listing:
                entries = list(listing)
        except OSError as err:
            problems.append(base_unlisted(root, err) if not under else
                            f"{shown(_rel(root, err.filename))}{LISTING_FAILED}{err.strerror})")
            return
        if folders is not None:
            names: list[str] = []
            folders.append((under, names))
        subfolders = []
        for entry in entries:
            name = entry.name
            try:
                is_dir = entry.is_dir()  # follows a link, as os.walk did, to leave it out below
            except OSError:
                is_dir = False
            if is_dir:
                if not name.startswith("."):
                    subfolders.append(entry)
                    if folders is not None and name.endswith(".md"):
                        names.append(name)  # a link to a folder today may be one to a note tomorrow
                continue
            if not name.endswith(".md") or name.startswith("."):
                continue
            if folders is not None:
                names.append(name)
            rel = under + name
            st = _note_stat(entry, rel, problems)
            if st is not None:
                found[rel] = st
        for entry in sorted(subfolders, key=lambda e: e.name):
            try:
                if entry.is_symlink():
                    continue  # a linked folder is not walked into
            except OSError:
                pass
            walk(entry.path, under + entry.name + "/")

    walk(os.fspath(root), "")
    return found, problems


def _note_stat(entry: os.DirEntry, rel: str, problems: list[str]) -> os.stat_result | None:
    """A listed .md file's stat when it is a note kb reads; else None, with a problem said when
    it is one a person should hear about."""
    if not rel.isascii() and not is_valid_text(rel):  # ASCII is valid: the common case costs no encode
        # SQLite, JSON and the terminal all refuse it; the rest of the base still answers.
        problems.append(f"{shown(rel)}: file name is not valid UTF-8; rename it to index it")
        return None
    try:
        st = entry.stat()  # follows a file symlink (as os.stat); a dangling one is reported
    except OSError as e:
        problems.append(f"{rel}: cannot read ({e.strerror})")
        return None
    if not _is_regular(st):
        return None
    return st


LISTING_FAILED = ": cannot list ("
BASE_MISSING = "the base's folder is missing: deleted or moved"


def base_unlisted(root: Path, err: OSError) -> str:
    """The problem line of a base whose own folder cannot be listed: named by its path (a
    `zed/.` names nothing anyone wrote), and a folder gone (deleted while a room or `kb serve`
    held it) said to be missing. Its notes stay indexed as they were: a listing gap."""
    why = BASE_MISSING if err.errno in (errno.ENOENT, errno.ENOTDIR) else err.strerror
    return f"{shown(str(root))}{LISTING_FAILED}{why})"


def on_base(name: str, line: str) -> str:
    """A base's problem line as a fleet shows it, `base/path: why`; a line that names the
    base's own folder (base_unlisted) already says which base."""
    return line if os.path.isabs(line) else f"{name}/{line}"


def listing_gaps(problems: list[str]) -> list[str]:
    """The folders list_notes could not list, from its problem lines: "" for the base itself,
    else "sub/dir/". What was in them is unknown, so an index keeps its notes below them."""
    gaps = []
    for p in problems:
        rel, sep, _ = p.rpartition(LISTING_FAILED)
        if sep:
            gaps.append("" if rel == "." or os.path.isabs(rel) else rel.rstrip("/") + "/")
    return gaps


def in_gap(rel: str, gaps: list[str]) -> bool:
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


def read_note(root: Path, rel: str, st: os.stat_result | None = None) -> tuple[str | None, bytes | None, str | None]:
    """(text, raw bytes, problem). A note that cannot be read is reported, never fatal."""
    full = root / rel
    try:
        if st is not None and st.st_size > MAX_NOTE_BYTES:
            return None, None, f"{rel}: too large to index ({st.st_size:,} bytes; limit {MAX_NOTE_BYTES:,})"
        with open_note(full) as f:
            raw = f.read(MAX_NOTE_BYTES + 1)  # a note that grew since its stat is read no further
        if len(raw) > MAX_NOTE_BYTES:
            return None, None, f"{rel}: too large to index (over the limit of {MAX_NOTE_BYTES:,} bytes)"
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


def open_note(path: str | os.PathLike[str]) -> io.BufferedReader:
    """A note opened for reading. The listing saw a regular file, but it may have been replaced
    since by a FIFO: textfile.open_regular refuses it instead of waiting for a writer."""
    return open_regular(path)


def content_problem(raw: bytes) -> str | None:
    """Why these bytes are not a note kb indexes, in read_note's words, or None. kb label asks:
    a label written into a note the index never reads would answer nothing."""
    if not raw.strip():
        return "empty file"
    if b"\x00" in raw[:8192]:
        return "binary, not markdown (NUL byte)"
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as e:
        return f"not UTF-8 (byte 0x{raw[e.start]:02x} at offset {e.start})"
    return None


# How read_note and bignote.scan word a read that failed (as opposed to bytes that are wrong).
_READ_FAILURES = (": cannot read (", ": vanished before it could be read", ": is a directory")


def is_read_failure(problem: str) -> bool:
    return any(w in problem for w in _READ_FAILURES)
