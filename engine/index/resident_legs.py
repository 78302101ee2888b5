"""Which text leg answers each base for a Memory: FTS5 itself, or for a process that stays up
(the reading room, kb serve) the same ranking from postings in memory (engine/index/resident.py),
built in a background thread on a base's first question. Memory (engine/memory.py) owns one."""

from __future__ import annotations

import threading
import time

from ..rank.stemming import stem_question
from .textindex import TextIndex
from .textsearch import Fts5TextSearch, TextSearch

# Resident text legs built at once: each build holds a connection (three descriptors with its
# log) while it reads its base. Fifty bases built together ran a process under `ulimit -n 32`
# out of descriptors, and a third build on two cores gains nothing under the GIL.
_RESIDENT_BUILDS = threading.BoundedSemaphore(2)


class ResidentLegs:
    """The resident legs of one Memory's bases: the built, the building, the failed.

    `lock` is Memory's swap lock: a leg is installed, and every leg followed after an update,
    under it, so an update that landed during a build is followed before the leg answers."""

    def __init__(self, wanted: bool, lock: threading.Lock):
        self.wanted = wanted
        self.lock = lock
        self.legs: dict = {}  # base -> engine.index.resident.ResidentText, built on first use
        self.building: set[str] = set()
        self.failed: set[str] = set()  # builds that raised: FTS5 answers these bases

    def search(self, name: str, idx: TextIndex) -> TextSearch:
        """The base's text leg: FTS5 itself, or when wanted the same ranking in memory.

        The postings are built in a background thread on the first question (seconds at
        60,000 chunks); until they are ready FTS5 answers, with the same ranking, so no
        question waits for the build.
        """
        if not self.wanted or idx.memory_why is not None:
            return Fts5TextSearch(idx)
        leg = self.legs.get(name)
        if leg is None:
            with self.lock:
                if name not in self.building:
                    self.building.add(name)
                    threading.Thread(target=self._build, args=(name, idx), daemon=True,
                                     name=f"kb-resident-{name}").start()
            return Fts5TextSearch(idx)
        return leg

    def _build(self, name: str, idx: TextIndex) -> None:
        from .resident import ResidentText

        try:
            with _RESIDENT_BUILDS:
                leg = ResidentText(idx)
            with self.lock:  # an update that landed during the build is followed before it answers
                leg.refresh()
                self.legs[name] = leg
        except Exception:
            # Out of descriptors or memory, the index unreadable meanwhile: FTS5 keeps answering
            # this base with the same ranking, and nothing waits for a leg that will not come
            # (a traceback from the thread, and kb misses waited two minutes for it).
            with self.lock:
                self.failed.add(name)

    def refresh(self) -> None:
        for name, leg in self.legs.items():
            # Followed whether this process or another wrote the index: a diff of the files
            # table, and the chunks of changed notes only.
            leg.refresh()

    def wait(self, indexes: dict[str, TextIndex], timeout: float) -> bool:
        """Build every base's leg now and wait for it (the bench, the tests)."""
        for name, idx in indexes.items():
            self.search(name, idx)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if all(n in self.legs or n in self.failed
                   for n, i in indexes.items() if i.memory_why is None):
                return True
            time.sleep(0.01)
        return False

    def held_key(self, indexes: dict[str, TextIndex], terms: list[str], question: str, keep: int) -> tuple | None:
        """All the text leg's first `keep` hits depend on when every base answers from memory:
        each base's stems its chunks hold (engine/index/resident.held_stems). None otherwise."""
        if not self.wanted:
            return None
        stems = None
        held = []
        for name, idx in indexes.items():  # every base, as the text leg asks them
            leg = self.legs.get(name)
            if leg is None or idx.memory_why is not None:
                return None  # FTS5 answers this base
            if stems is None:
                stems = stem_question(question, terms)
            got = leg.held_stems(stems)
            if got is None:
                return None
            held.append(got)
        return keep, tuple(held)
