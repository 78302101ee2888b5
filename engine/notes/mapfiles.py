"""Which notes are maps: a map is a reading list for people; the catalogue never consults it.

Its own module so that the stale check and fleet discovery, on every route's path, do not
import the note parser (engine/notes/note.py compiles a dozen patterns when imported).
"""

from __future__ import annotations

MAP_NAMES = frozenset({"map.md", "_map.md"})


def is_map_file(relpath: str) -> bool:
    return "/" not in relpath and relpath.lower() in MAP_NAMES
