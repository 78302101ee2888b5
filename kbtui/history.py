"""Question history for up/down in the question box. Kept in memory only: the questions a
person asks are private (the miss log is git-ignored for the same reason)."""

from __future__ import annotations


class History:
    def __init__(self, limit: int = 200) -> None:
        self.items: list[str] = []
        self.limit = limit
        self._pos: int | None = None  # None: not browsing
        self._draft = ""

    def add(self, question: str) -> None:
        q = question.strip()
        if not q:
            return
        if q in self.items:
            self.items.remove(q)
        self.items.append(q)
        del self.items[: -self.limit]
        self._pos = None

    def older(self, current: str) -> str | None:
        if not self.items:
            return None
        if self._pos is None:
            self._draft = current
            self._pos = len(self.items)
        if self._pos == 0:
            return None
        self._pos -= 1
        return self.items[self._pos]

    def newer(self) -> str | None:
        if self._pos is None:
            return None
        self._pos += 1
        if self._pos >= len(self.items):
            self._pos = None
            return self._draft
        return self.items[self._pos]

    def reset(self) -> None:
        self._pos = None
