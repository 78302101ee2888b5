"""A fleet's stale-check plans for its small bases, kept in one file.

A base of fewer than listing_cache.MIN_NOTES notes keeps no listing of its own: reading a
file per base cost what walking its few folders did. So over 2,000 small bases every
one-shot walked every base (a third of a hit, by cProfile). A fleet of at least FLEET_FROM
bases keeps the plans of its small bases at `<fleet root>/.kb/fleet-plans.cache` instead: one
file read once, then each base's check is its plan, one stat per folder and note
(engine/index/listing_cache.py says what a plan holds and why it misses no change).

Each plan is stamped, as a base's own is, with the index state it was made against, and is
used only against that state. The file is rewritten (atomically, no link followed) after a
refresh that added a plan or found one that no longer holds; a file that is damaged, foreign
or of another format is read as holding none, and replaced. A fleet root that cannot be
written keeps none: each small base is walked, as before.
"""

from __future__ import annotations

import threading

from .fleet_cache import FLEET_FROM, fleet_file, keep, writable_folder
from .sealedfile import Damaged, decode, encode, open_shaped, seal

FLEET_PLANS_NAME = "fleet-plans.cache"
MAGIC = b"kb-fleet-plans\n"
FORMAT = 2  # 2: signed, kb's own value layout (engine/index/sealedfile.py)
MAX_BYTES = 256 << 20  # names and numbers of small bases: a larger file is not ours

# A base's root -> the plans of the fleet it belongs to (for_fleet).
_of: dict[str, FleetPlans] = {}


def for_fleet(root: str, base_roots: list[str]) -> FleetPlans | None:
    """The plans file of a fleet of FLEET_FROM bases or more, which its small bases' checks
    read and keep their plans in; None for a smaller fleet (a small base is walked)."""
    if len(base_roots) < FLEET_FROM or not root:
        return None
    plans = FleetPlans(fleet_file(root, FLEET_PLANS_NAME), base_roots)
    for base_root in base_roots:
        _of[base_root] = plans
    return plans


def of(base_root: str) -> FleetPlans | None:
    """The fleet plans a base's small-base plan is kept in, or None (kept in its own listing)."""
    return _of.get(base_root)


class FleetPlans:
    """The plans of a fleet's small bases: read once, looked up per base, written when changed."""

    def __init__(self, path: str, base_roots: list[str]):
        self.path = path
        self._bases = frozenset(base_roots)
        # base root -> its plan's bytes, as the file holds them: each decoded when its base is
        # checked and then dropped (2,000 plans decoded at once were ~2 MiB held for nothing)
        self._file: dict[str, bytes] | None = None
        self._added: dict[str, bytes] = {}  # plans made this process, not in the file yet
        self._failed: set[str] = set()  # bases whose plan in the file did not hold
        self._lock = threading.Lock()

    def find(self, base_root: str) -> tuple | None:
        """The plan the file holds for this base (unchecked: listing_cache checks its shape)."""
        with self._lock:
            if self._file is None:
                self._file = _read(self.path)
            blob = self._file.get(base_root)
        try:
            return decode(blob, self.path) if type(blob) is bytes else None
        except Damaged:
            return None  # not of our making: the base is checked in full

    def failed(self, base_root: str) -> None:
        """This base's plan did not hold (or was of another index state): not kept again."""
        with self._lock:
            self._failed.add(base_root)

    def add(self, base_root: str, plan: tuple) -> None:
        """A plan made by a check that found nothing changed, kept at the next keep()."""
        with self._lock:
            self._added[base_root] = encode(plan)
            self._failed.discard(base_root)

    def keep(self) -> None:
        """After a refresh: write the file again when a plan was made or one failed, with the
        plans of the fleet's bases that still hold and those made since."""
        with self._lock:
            if self._file is None:
                self._file = _read(self.path)
            if not self._added and not self._failed and self._file.keys() <= self._bases:
                return
            plans = {root: plan for root, plan in self._file.items() if root in self._bases and root not in self._failed}
            plans.update(self._added)
            self._added, self._failed = {}, set()
            if plans == self._file or not writable_folder(self.path):
                return
            keep(self.path, seal(MAGIC, (FORMAT, plans)))
            self._file = plans


def _read(path: str) -> dict[str, bytes]:
    got = open_shaped(path, MAGIC, MAX_BYTES, FORMAT, 2, 0)
    if got is None or type(got[0][1]) is not dict:
        return {}
    return got[0][1]
