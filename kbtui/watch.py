"""Which file changes matter to the reading room, and how to say what changed."""

from __future__ import annotations

import os
from pathlib import Path

# Our own writes (the index, the miss log and its lock) must not wake the watcher, or an
# Enter that records a miss would re-index the fleet.
_IGNORED_DIRS = {".kb", ".git", "__pycache__", "node_modules"}
_IGNORED_FILES = {"kb-misses.txt", ".kb-misses.txt.lock"}
_WATCHED_TXT = {"agent.txt", "fleet.txt", "kb-aliases.txt"}


def is_watched(path: str) -> bool:
    p = Path(path)
    if any(part in _IGNORED_DIRS for part in p.parts):
        return False
    name = p.name
    if name in _IGNORED_FILES or name.startswith(".#") or name.endswith("~"):
        return False
    return name.endswith(".md") or name in _WATCHED_TXT


def describe_changes(changes, root: Path, known: set[str] | frozenset[str] = frozenset()) -> tuple[str, ...]:
    """("edited zed/knowledge/x.md", ...) from watchfiles' (Change, path) pairs.

    `known` holds the paths indexed before: an editor that saves by replacing the file shows
    up as "added", and a note that was already there and still is was edited, not added."""
    verbs = {1: "added", 2: "edited", 3: "deleted"}  # watchfiles.Change values
    out = []
    seen = set()
    for change, path in changes:
        try:
            rel = os.path.relpath(path, root)
        except ValueError:
            rel = path
        verb = verbs.get(int(change), "changed")
        if path in known and os.path.exists(path):
            verb = "edited"
        key = (verb, rel)
        if key not in seen:
            seen.add(key)
            out.append(f"{verb} {rel}")
    return tuple(out)
