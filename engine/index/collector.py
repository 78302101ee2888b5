"""The cycle collector's policy, in one place: when its full passes may run, and what they skip.

Three processes keep a great deal alive and gain nothing from passes over it: a long batch
(`kb misses`: paused, frozen at exit), a large snapshot (frozen once built: out_of_sight) and
the reading room (its full passes put off to when nobody types: kbtui/idle_gc.py runs the
timer; the thresholds, and the pass itself, are here). No other module in engine/ or kbtui/
imports gc (tests/test_layout.py).

A batch: a full pass walks every live container. `kb misses` over a long log keeps a review per entry
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

# A snapshot of this many chunks or more is frozen once built. At 60,000 chunks a snapshot and
# the caches filled while building it are ~60,000 containers, and a heavy question allocates
# enough to set a pass off every few dozen asks: ~50 ms each (measured), most of the fused
# answer's worst times. A snapshot is immutable and acyclic; small fleets never pay.
FREEZE_ABOVE_CHUNKS = 10_000
# The reading room: no keystroke for IDLE_S, and a full pass cannot delay a frame anyone waits
# for; while it runs the third threshold is PUT_OFF (passes only when idle).
IDLE_S = 1.0
PUT_OFF = 1_000_000
_frozen = False


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


def out_of_sight() -> None:
    """gc.freeze() what is alive now; a previous freeze is lifted and collected first, so
    anything frozen with an old snapshot that has since become garbage is still reclaimed."""
    global _frozen
    if _frozen:
        gc.unfreeze()
        gc.collect()
    gc.freeze()
    _frozen = True


def put_off() -> tuple[int, int, int]:
    """What is alive now frozen and the full passes put off; the thresholds found, for restore."""
    gc.freeze()
    found = gc.get_threshold()
    gc.set_threshold(found[0], found[1], PUT_OFF)
    return found


def due(found: tuple[int, int, int]) -> bool:
    """A full pass Python would have run by now, under the thresholds put_off found."""
    return gc.get_count()[2] >= found[2]


def pass_if_due(found: tuple[int, int, int]) -> bool:
    """The full pass put_off held back, run now if Python would have run it by now (the room
    calls this once nobody types); whether it ran."""
    if not due(found):
        return False
    gc.collect()
    return True


def restore(found: tuple[int, int, int]) -> None:
    gc.set_threshold(*found)
    gc.unfreeze()
