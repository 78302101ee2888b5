"""What the fleet-level caches share: when a fleet keeps one file, where, and how it is kept.

Over 2,000 small bases a fresh process opened a cache per base (the opening, the spelling),
each a file opened, its head checked and decoded. A fleet of at least FLEET_FROM bases keeps
one file for all of them at `<fleet root>/.kb/` instead (engine/index/catalogue_cache.py's fleet
openings, engine/index/spelling_cache.py's fleet spelling); below it the per-base files cost a few
opens and stay as they are. A fleet root that cannot be written keeps no fleet file: the
bases' own files are read (or kept) as before.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable

from ..notes.atomic import write_atomic
from hashlib import blake2b
from ..notes.nofollow import refuse_links

# Bases from which a fleet keeps one file: below it a file per base costs a few opens (the
# haystack's four bases keep theirs, as measured for the one-shot rows). Kept because measured:
# a fresh hit over 2,000 small bases without the fleet files cost 0.654 s CPU, with them 0.550
# (medians; the pairwise ratio +15%: whole processes in turn, 9 pairs, the 2,000-bases haystack, load ~8).
FLEET_FROM = 32


def fleet_file(root: str, name: str) -> str:
    return os.path.join(root, ".kb", name)


def writable_folder(path: str) -> bool:
    """Whether a fleet file can be kept at `path`: its folder (the fleet root's `.kb`, beside
    its miss log) made when absent, writable, and neither `.kb` nor the file a link, `.kb` not a
    file nor the file a folder. Otherwise a read-only or hostile root keeps no fleet file, and
    the bases' own files serve: prepared there, it would be thrown away and prepared again on
    every process (breaker6: a fleet's spelling rebuilt on every refusal)."""
    folder = os.path.dirname(path)
    try:
        os.mkdir(folder)
    except FileExistsError:
        pass
    except OSError:
        return False
    try:
        refuse_links(path, below=os.path.dirname(folder))
        if not stat.S_ISDIR(os.lstat(folder).st_mode) or not os.access(folder, os.W_OK):
            return False
        return stat.S_ISREG(os.lstat(path).st_mode)
    except FileNotFoundError:
        return True
    except OSError:
        return False


def fleet_stamp(parts: Iterable[tuple[str, str, tuple | None]]) -> str:
    """A digest of each base's name, cache file and opening key (its index file's state): what
    a base holds is a function of its index, so equal stamps mean equal contents. repr: one
    spelling of a value, whatever the encoder."""
    return blake2b(repr(list(parts)).encode(), digest_size=16).hexdigest()


def keep(path: str, data: bytes) -> None:
    """Write a cache file atomically, no link followed under the folder holding its `.kb`; a
    cache that cannot be written (a read-only fleet, a full disk, a link) is not kept."""
    try:
        refuse_links(path, below=os.path.dirname(os.path.dirname(path)))
        write_atomic(path, data)
    except OSError:
        pass
