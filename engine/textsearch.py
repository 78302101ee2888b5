"""The text leg's interface: what `Memory` asks of a text search, whichever answers it.

Two implementations: FTS5 over the note store (`Fts5TextSearch`, every process) and the
postings held in memory (`engine/resident.py`, processes that stay up). Both return the same
matches for the same terms; `Memory` chooses which, nobody else. A match's score is higher
for a better match: SQLite's bm25() (lower is better) is negated here, at the border, so no
caller downstream has to remember which way a number points.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class TextMatch:
    """One file at its best chunk."""

    path: str
    score: float  # higher is better: FTS5's bm25() negated, exactly
    heading_path: str
    text: str
    line: int


class TextSearch(Protocol):
    def matches(self, terms: list[str], limit: int, question: str = "") -> list[TextMatch]:
        """The `limit` best files for these content terms, best first (ties by path); the
        question, when given, says which language to stem them in (engine/stemming.py)."""
        ...


def from_rows(rows) -> list[TextMatch]:
    """TextIndex.search's (path, bm25, heading_path, text, line) rows as matches."""
    return [TextMatch(path, -bm25, hp, body, line) for path, bm25, hp, body, line in rows]


class Fts5TextSearch:
    """FTS5 itself: what a one-shot process asks."""

    def __init__(self, index):
        self.index = index

    def matches(self, terms: list[str], limit: int, question: str = "") -> list[TextMatch]:
        return from_rows(self.index.search(terms, limit, question)[0])
