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
