"""The cycle collector paused while a long batch builds what it keeps.

A full pass walks every live container. `kb misses` over a long log keeps a review per entry
and fills the caches with the words of thousands of questions, tens of thousands of live
containers, and Python starts a pass every few hundred allocations' worth of growth: about
0.4 s of a 10,000-entry review went to passes that found nothing, because nothing the review
builds is a cycle. Paused, the garbage it does make (none of it cyclic) is freed as before,
by reference counting.
"""

from __future__ import annotations

import atexit
import gc
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def paused(*, freeze_after: bool = False) -> Iterator[None]:
    """The collector off inside; switched back on only by whoever switched it off, so a
    pause inside another (or beside one in another thread) never ends the outer one.

    freeze_after: for a one-shot process that keeps what it built until it exits. Everything
    allocated in the pause sits in the youngest generation, so the first allocation after it
    starts a pass over all of it (0.15-0.2 s of a 10,000-entry `kb misses`, finding nothing):
    frozen first (gc.freeze), that pass walks only what is allocated after."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        if freeze_after:
            gc.freeze()
        gc.enable()


def no_pass_at_exit() -> None:
    """Freeze the heap when the interpreter exits, before its last full collection.

    A one-shot `kb misses` ends right after printing, and the interpreter's shutdown runs one
    full pass over everything still alive: the review, its caches, the index's postings (0.3 s
    of a 10,000-entry review's process). Frozen, the pass walks nothing; a process that goes
    on (a test calling the verb in process) is unchanged until it ends, but for what
    paused(freeze_after=True) froze: freed by reference counting as ever, never walked.
    """
    atexit.register(gc.freeze)
