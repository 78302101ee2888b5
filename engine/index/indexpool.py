"""The process's idle SQLite connections, shared by every base's index.

A pool per base, not a connection per thread: `kb serve` runs tools on up to 40 threads, and
a connection per thread per base ran a 16-base fleet out of file descriptors. Idle connections
are capped for the whole process, oldest closed first.
"""

from __future__ import annotations

import sqlite3
import threading
from collections import OrderedDict
from types import SimpleNamespace

try:
    import resource  # Unix: the descriptor limit the connection pool stays under
except ImportError:
    resource = SimpleNamespace()  # type: ignore[assignment]

# An index (engine/index/textindex.py's TextIndex) is only a key here, never imported: the pool and
# the index import one way.
TextIndex = object


READERS_PER_BASE = 4  # readers of one base at once; a further one waits its turn
MAX_IDLE_CONNECTIONS = 32  # idle in the whole process, every base together...
_idle_cap: int | None = None


def _max_idle() -> int:
    """...and no more than a sixteenth of the descriptors this process may open (`ulimit -n`):
    idle connections must never be what runs it out."""
    global _idle_cap
    if _idle_cap is None:
        try:
            soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
            if soft == resource.RLIM_INFINITY:
                soft = -1
        except (AttributeError, OSError):  # no `resource` module here, or no such limit
            soft = -1
        _idle_cap = MAX_IDLE_CONNECTIONS if soft < 0 else max(1, min(MAX_IDLE_CONNECTIONS, soft // 16))
    return _idle_cap


_POOL_LOCK = threading.Lock()  # one lock for every pool: eviction crosses bases
_IDLE_ORDER: "OrderedDict[int, tuple[TextIndex, sqlite3.Connection]]" = OrderedDict()  # oldest first
# Each index's idle connections, newest last; an index with none has no entry (held here, not on
# the index, so eviction across bases touches no index's fields).
_IDLE: "dict[TextIndex, list[sqlite3.Connection]]" = {}


def take_idle(index: TextIndex) -> sqlite3.Connection | None:
    with _POOL_LOCK:
        idle = _IDLE.get(index)
        if not idle:
            return None
        con = idle.pop()
        if not idle:
            del _IDLE[index]
        _IDLE_ORDER.pop(id(con), None)
        return con


def give_back(index: TextIndex, con: sqlite3.Connection) -> None:
    evicted = []
    with _POOL_LOCK:
        _IDLE.setdefault(index, []).append(con)
        _IDLE_ORDER[id(con)] = (index, con)
        while len(_IDLE_ORDER) > _max_idle():
            _, (owner, old) = _IDLE_ORDER.popitem(last=False)
            idle = _IDLE[owner]
            idle.remove(old)
            if not idle:
                del _IDLE[owner]
            evicted.append(old)
    for old in evicted:  # closed outside the lock: closing can wait on the disk
        old.close()


def drop_idle(index: TextIndex) -> list[sqlite3.Connection]:
    with _POOL_LOCK:
        out = _IDLE.pop(index, [])
        for con in out:
            _IDLE_ORDER.pop(id(con), None)
        return out


