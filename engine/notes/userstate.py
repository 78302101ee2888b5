"""Where kb keeps what belongs to the person on this machine, never inside a notes folder.

A notes folder can be a repository someone cloned, so anything kb must be able to trust (the
key its caches are signed with, the commands the person allowed to run) lives here instead:
`$KB_STATE_DIR`, else `$XDG_STATE_HOME/kb`, else `~/.local/state/kb`.
"""

from __future__ import annotations

import os
from pathlib import Path

STATE_ENV = "KB_STATE_DIR"  # tests and sandboxes point this at a folder of their own


def state_dir() -> Path:
    """The person's kb state folder (not created here: each writer creates what it needs)."""
    explicit = os.environ.get(STATE_ENV)
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_STATE_HOME")
    base = Path(xdg).expanduser() if xdg and os.path.isabs(os.path.expanduser(xdg)) else Path.home() / ".local" / "state"
    return base / "kb"


def ensure_state_dir() -> Path:
    """The state folder, made private (0700) if it is new; its parents are made as needed."""
    path = state_dir()
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


KEY_NAME = "cache.key"  # the secret every cache and index kb writes is signed with
KEY_BYTES = 32
_key: bytes | None = None  # read once per process


def secret() -> bytes:
    """This person's secret on this machine: 32 random bytes at `<state>/cache.key`, made once
    (mode 0600, atomically: a temporary file linked into place, so two first processes agree
    on one). kb trusts a cache or an index.db only when it carries a keyed digest made with it,
    so a file a repository carried here (made elsewhere, or by hand) is never decoded."""
    global _key
    if _key is None:
        try:
            _key = _read_or_make(ensure_state_dir() / KEY_NAME)
        except OSError:
            # No state folder can be written (a read-only home): a key of this process only,
            # so nothing on disk is trusted (every cache and index made again): slower, never wrong.
            _key = os.urandom(KEY_BYTES)
    return _key


def _read_or_make(path: Path) -> bytes:
    for _ in range(3):
        found = _read_key(path)
        if found is not None:
            return found
        tmp = path.with_name(f".{KEY_NAME}.{os.getpid()}.{os.urandom(4).hex()}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(os.urandom(KEY_BYTES))
                f.flush()
                os.fsync(f.fileno())
            try:
                os.link(tmp, path)  # whole or not at all; another first process's key, if linked first, is kept
            except FileExistsError:
                if _read_key(path) is None:  # a key of another length (never one half made): replaced
                    os.replace(tmp, path)
        finally:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
    raise OSError(f"{path}: cannot make kb's key")


def _read_key(path: Path) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        raw = os.read(fd, KEY_BYTES + 1)
    finally:
        os.close(fd)
    return raw if len(raw) == KEY_BYTES else None
