"""Keeping what kb writes inside a notes folder (`.kb/`, the miss log) out of the user's git.

Only git's own local exclude file (`.git/info/exclude`) is ever written: no tracked file
changes, and a `.gitignore` (which may be a link planted by someone else) is only read.
"""

from __future__ import annotations

import fnmatch
from pathlib import Path

from .atomic import write_atomic
from .textfile import open_regular, read_regular_text


def ensure_ignored(path: Path) -> None:
    """Inside a git work tree, make sure the miss log, its lock and the indexes (`.kb/`) are ignored."""
    keep_out_of_git(path.parent, [path.name, "." + path.name + ".lock"])


def keep_out_of_git(folder: Path, names: list[str]) -> None:
    """Inside a git work tree, make sure these files of `folder`, and every `.kb/`, are ignored.

    A name already covered by a bare pattern in any .gitignore between here and the work
    tree's root (or in the exclude file) is left alone; otherwise it is added to the work
    tree's `.git/info/exclude`, which is git's own place for local ignores: no tracked file
    changes, and nothing appears in `git status`. Best effort: an exclude file that cannot be
    written (or is a symbolic link, never followed) is no reason to lose a miss or an index.
    """
    d = folder.resolve()
    chain = []
    for parent in (d, *d.parents):
        chain.append(parent)
        if (parent / ".git").exists():
            break
    else:
        return
    top = chain[-1]
    exclude = _exclude_file(top / ".git")
    if exclude is None:
        return
    sources = [(_read_quiet(p / ".gitignore"), p == d) for p in chain]
    raw = _read_exclude(exclude)
    if raw is None:
        return
    current = raw.decode("utf-8", errors="replace").removeprefix("\ufeff")
    sources.append((current, False))
    under = d.relative_to(top).as_posix()
    prefix = "/" if under == "." else f"/{under}/"
    # The rules this function writes are anchored at the work tree's top, so they are read back
    # as lines, not as patterns of the log's own folder: else each miss appended them again.
    written = {line.strip() for line in current.splitlines()}
    missing = [
        prefix + w
        for w in names
        if prefix + w not in written and not any(_covers(text, w, here) for text, here in sources)
    ]
    if not any(line.strip() in (".kb/", ".kb", "**/.kb/") for text, _ in sources for line in text.splitlines()):
        missing.append(".kb/")
    if missing:
        # Only the exclude file is ever written, never a .gitignore: a linked .gitignore is read
        # (to see what it covers) and nothing of it is copied anywhere.
        # Appended to the file's own bytes, never to its decoded text: a pattern in another
        # encoding (a Latin-1 name) or a byte-order mark written back through UTF-8 changed.
        sep = b"" if not raw or raw.endswith(b"\n") else b"\n"
        try:
            exclude.parent.mkdir(exist_ok=True)
            if exclude.is_symlink() or exclude.parent.is_symlink():
                return
            write_atomic(exclude, raw + sep + "".join(m + "\n" for m in missing).encode())
        except OSError:
            pass


def _exclude_file(dot_git: Path) -> Path | None:
    """The exclude file git reads for this work tree: `.git/info/exclude`, or for a linked
    work tree (`.git` is a file naming the git dir) the common dir's. None when unclear."""
    try:
        if dot_git.is_symlink():
            return None
        if dot_git.is_dir():
            return dot_git / "info" / "exclude"
        text = read_regular_text(dot_git).strip()
    except (OSError, ValueError):
        return None
    if not text.startswith("gitdir:"):
        return None
    gitdir = (dot_git.parent / text[len("gitdir:"):].strip()).resolve()
    common = gitdir
    try:
        rel = read_regular_text(gitdir / "commondir").strip()
        common = (gitdir / rel).resolve()
    except (OSError, ValueError):
        pass
    return common / "info" / "exclude"


def _read_exclude(p: Path) -> bytes | None:
    """The exclude file's bytes, b"" when there is none; None when it is there but cannot be
    read (a FIFO, a folder, no permission): then it is not replaced by kb's lines alone."""
    try:
        with open_regular(p) as f:
            return f.read()
    except FileNotFoundError:
        return b""
    except OSError:
        return None


def _read_quiet(p: Path) -> str:
    try:
        return read_regular_text(p, errors="replace")  # a FIFO there would hang the miss
    except OSError:
        return ""


def _covers(gitignore: str, name: str, here: bool) -> bool:
    """Does this .gitignore ignore a file called `name`? Only the patterns that can be read
    without git: a bare glob (any depth), `**/name`, and `/name` in the log's own folder. Any
    negation naming it means the answer needs git, so it counts as not covered."""
    hit = False
    for raw in gitignore.splitlines():
        p = raw.strip()
        if not p or p.startswith("#"):
            continue
        if p.startswith("!"):
            if fnmatch.fnmatchcase(name, p[1:].lstrip("/").removeprefix("**/")):
                return False
            continue
        if p.endswith("/"):
            continue  # a directory pattern
        if p.startswith("**/"):
            p = p[3:]
        if here and p.startswith("/"):
            p = p[1:]
        if "/" not in p and fnmatch.fnmatchcase(name, p):
            hit = True
    return hit
