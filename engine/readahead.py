"""Work done ahead, in order, on one thread: an index build's notes read and stemmed while
SQLite writes the ones before.

Reading, parsing, chunking and stemming a note is Python; writing its rows is SQLite, which
lets go of the GIL while FTS5 tokenizes and stores them. One thread for each, a few notes
apart, so the two overlap on a machine with a core to spare and cost what they did on one
without. Results come back in the order asked for; an exception raised by the work is
raised again by `next_result` for that item, so the caller fails where it would have.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

K = TypeVar("K")
R = TypeVar("R")

# Notes held ready at most: enough to ride over a slow one, few enough that memory stays
# that of a handful of notes (each at most bignote.STREAM_ABOVE_BYTES; larger ones stream).
AHEAD = 8


class ReadAhead(Generic[K, R]):
    def __init__(self, keys: Iterable[K], work: Callable[[K], R], ahead: int = AHEAD):
        self._results: queue.Queue = queue.Queue(maxsize=ahead)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(list(keys), work), daemon=True,
                                         name="kb-readahead")
        self._thread.start()

    def _run(self, keys: list[K], work: Callable[[K], R]) -> None:
        for key in keys:
            if self._stop.is_set():
                return
            try:
                item = (key, work(key), None)
            except BaseException as e:  # handed to the caller, raised where it asks for this key
                item = (key, None, e)
            while not self._stop.is_set():
                try:
                    self._results.put(item, timeout=0.1)
                    break
                except queue.Full:
                    continue
            if item[2] is not None:
                return

    def next_result(self, key: K) -> R:
        """The work's result for `key`, which must be the next key in the order given."""
        got, value, error = self._results.get()
        if got != key:
            raise RuntimeError(f"read-ahead out of order: expected {key!r}, got {got!r}")
        if error is not None:
            raise error
        return value

    def close(self) -> None:
        """Stop the thread (the caller finished, or failed part way) and wait for it."""
        self._stop.set()
        self._thread.join()
