"""FleetIndex: every base's index of one fleet behind one interface, the one Memory talks to.

Memory (engine/memory.py) asks it to open (the snapshot a question is scored against),
update (bring the indexes up to date and swap a new snapshot in), and search (the text leg,
each base's text search). What a fresh process needs at open, and how it is kept, stays
here and below: the opening caches and the fleet's files of them (engine/index/catalogue_cache.py,
engine/index/fleet_plans.py), the resident legs and their build threads
(engine/index/resident_legs.py), the swap lock and each thread's held snapshot. So the contract
sees no cache, no thread and no fork, and a change to how the index opens cannot reach the
arithmetic of an answer (tests/test_index_interface.py).

Thread safety: each base's index gives every thread its own SQLite connection, and the
snapshot is immutable and swapped whole under one lock when the notes change, so a question
being scored never sees half of an update.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from . import catalogue_cache, fleet_plans
from .indexupdate import IndexReport
from .resident_legs import ResidentLegs
from .snapshot import Snapshot, brought_up, build_snapshot, file_sig, with_aliases
from .textindex import TextIndex
from .textleg import RANK_CANDIDATE_POOL, text_leg
from .textsearch import TextSearch
from ..notes.fleet import Fleet
from ..rank.textpool import TextHits


class FleetIndex:
    """The indexes of a fleet's bases, the snapshot built from them, and their text legs."""

    def __init__(self, fleet: Fleet, *, update: bool = True, resident: bool = False):
        self.fleet = fleet
        self.indexes: dict[str, TextIndex] = {b.name: TextIndex(b) for b in fleet.bases}
        root = os.fspath(fleet.root)
        # A fleet of many bases reads its bases' openings from one file (engine/index/catalogue_cache.py)
        # and keeps its small bases' stale-check plans in one file (engine/index/fleet_plans.py).
        self._fleet_openings = catalogue_cache.fleet_openings(root, self.indexes)
        self._fleet_plans = fleet_plans.for_fleet(root, [os.fspath(i.base.root) for i in self.indexes.values()])
        self._snapshot: Snapshot | None = None
        self._swap = threading.Lock()
        self._generation = 0
        self._update_on_load = update
        self.last_reports: list[IndexReport] = []
        self.pending_reindexed = 0  # notes the last refresh re-indexed (the answer says so)
        # A process that stays up (the reading room, kb serve) answers the text leg from
        # postings in memory (engine/index/resident.py), ranked exactly as FTS5 ranks; a one-shot
        # asks FTS5, which costs nothing to open.
        self.legs = ResidentLegs(resident, self._swap)
        self._held = threading.local()  # one_state's snapshot, and the one built for this thread

    # -- open ------------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        """The snapshot a question is scored against, built on the first question."""
        held = getattr(self._held, "snap", None)
        if held is not None:
            return held
        snap = self._snapshot
        if snap is None:
            with self._swap:
                if self._snapshot is None:
                    if self._update_on_load:
                        self._refresh_locked(stale_only=True)
                    else:
                        self._snapshot = self._build_snapshot([])
                    self._held.built = self._snapshot  # by this thread, for the question asking
                snap = self._snapshot
        # kb-aliases.txt changes on its own, by hand: one stat per question notices it, so a
        # line added or removed takes effect on the next question in a long-lived Memory too.
        sig = file_sig(self.fleet.aliases_path)
        if sig != snap.aliases_sig:
            with self._swap:
                snap = self._snapshot
                if sig != snap.aliases_sig:
                    snap = with_aliases(snap, self.fleet.aliases_path, sig, self._generation + 1)
                    self._generation = snap.generation
                    self._snapshot = snap
        return snap

    def fresh_snapshot(self) -> tuple[Snapshot, bool]:
        """The snapshot, and whether it was built for this call: then each opening's key was
        compared with its index just now, and the text leg's ceilings need not stat every
        index again (Routed.fresh)."""
        self._held.built = None
        snap = self.snapshot()
        return snap, getattr(self._held, "built", None) is snap

    @contextmanager
    def one_state(self) -> Iterator[Snapshot]:
        """Within the block, this thread's questions are all answered against one snapshot."""
        snap = self.snapshot()
        outer = getattr(self._held, "snap", None)
        self._held.snap = snap
        try:
            yield snap
        finally:
            self._held.snap = outer

    # -- update ----------------------------------------------------------------------

    def refresh(self, *, force: bool = False) -> list[IndexReport]:
        """Bring every base's index up to date and swap in a new snapshot."""
        with self._swap:
            return self._refresh_locked(stale_only=False, force=force)

    def _refresh_locked(self, *, stale_only: bool, force: bool = False) -> list[IndexReport]:
        reports, checked = brought_up(self.indexes, stale_only=stale_only, force=force)
        if self._fleet_plans is not None:
            self._fleet_plans.keep()
        self.legs.refresh()
        real = [r for r in reports if r is not None]
        self.last_reports = real
        self.pending_reindexed = sum(r.touched for r in real)
        self._snapshot = self._build_snapshot(real, checked)
        return real

    def _build_snapshot(self, reports: list[IndexReport], checked: dict | None = None) -> Snapshot:
        # engine/index/snapshot.py: each base's opening, decoded as a question needs it.
        generation = self._generation + 1
        snap = build_snapshot(self.fleet, self.indexes, self._fleet_openings, generation, checked)
        self._generation = generation
        return snap

    def update_each(self, *, force: bool = False) -> Iterator[tuple[IndexReport, str | None]]:
        """Each base's index brought up to date, one at a time: its report, and why nothing
        was saved when the index had to live in memory."""
        for idx in self.indexes.values():
            report = idx.update(force=force)
            yield report, idx.memory_reason

    def stale(self) -> bool:
        return any(idx.stale() for idx in self.indexes.values())

    @property
    def rebuilt_for_version(self) -> bool:
        """Every rebuild this process made was of an index another version of kb wrote."""
        rebuilt = [i for i in self.indexes.values() if i.was_rebuilt]
        return bool(rebuilt) and all(i.rebuilt_for_version for i in rebuilt)

    @property
    def was_rebuilt(self) -> bool:
        return any(i.was_rebuilt for i in self.indexes.values())

    # -- search ----------------------------------------------------------------------

    def search_of(self, name: str) -> TextSearch:
        """The base's text search: FTS5, or the resident leg's postings once built."""
        return self.legs.search(name, self.indexes[name])

    def text_leg(self, terms: list[str], question: str = "", openings: dict | None = None,
                 keep: int = RANK_CANDIDATE_POOL, checked: bool = False) -> TextHits:
        """The text leg's files over every base, best first (engine/index/textleg.py)."""
        return text_leg(self.indexes, self.legs.search, terms, question, openings, keep, checked,
                        every_base=self.legs.wanted)

    def held_key(self, terms: list[str], question: str, keep: int) -> tuple | None:
        """What the text leg's first `keep` hits depend on, when every base answers from memory."""
        return self.legs.held_key(self.indexes, terms, question, keep)

    def hold_text_in_memory(self, timeout: float) -> bool:
        self.legs.wanted = True
        return self.wait_resident(timeout)

    def wait_resident(self, timeout: float) -> bool:
        return self.legs.wait(self.indexes, timeout)
