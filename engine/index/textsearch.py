"""The text leg's interface: what `Memory` asks of a text search, whichever answers it.

Two implementations: FTS5 over the note store (`Fts5TextSearch`, every process) and the
postings held in memory (`engine/index/resident.py`, processes that stay up). Both return the same
matches for the same terms; `Memory` chooses which, nobody else. A match's score is higher
for a better match: SQLite's bm25() (lower is better) is negated here, at the border, so no
caller downstream has to remember which way a number points.
"""

from __future__ import annotations

from typing import Any, Callable, Protocol

from ..rank.lazylist import LazyList
from ..shared.record import record


class ChunkText:
    """A hit's best chunk: (heading path, text, first line), held, or read when first asked for.

    A question ranks 50 files per base and shows a handful: the resident leg reads the text
    of only the hits something reads (a passage on a shown row), one primary-key lookup each,
    instead of all 50 per base per question. Equal when the chunks are equal, as a tuple is.
    """

    __slots__ = ("_value", "_load", "_key", "_load_many")

    def __init__(self, value: tuple[str, str, int] | None = None,
                 load: Callable[[Any], tuple[str, str, int]] | None = None, key: Any = 0,
                 load_many: Callable[[list], dict[Any, tuple[str, str, int]]] | None = None):
        self._value = value
        self._load = load  # called with `key` (the store's name for the chunk) on the first read
        self._key = key
        self._load_many = load_many  # reads several keys of one store at once (read_all)

    def get(self) -> tuple[str, str, int]:
        value = self._value
        if value is None:
            # Two threads may both read it (the same value either way). One that finds the
            # loader dropped was overtaken by a reader that set the value first, so it stands.
            load = self._load
            value = self._value if load is None else load(self._key)
            self._value, self._load = value, None  # the value first: see above
        return value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ChunkText) and self.get() == other.get()

    def __hash__(self) -> int:
        return hash(self.get())

    def __repr__(self) -> str:
        return f"ChunkText({self._value!r})" if self._value is not None else "ChunkText(<not read yet>)"


def read_all(chunks) -> None:
    """Read every chunk not read yet, one read per store that can read several (a page of
    rows shows a passage each: one query for the page, not one per row)."""
    pending: dict = {}
    for c in chunks:
        if c._value is None and c._load_many is not None:
            pending.setdefault(c._load_many, []).append(c)
    for load_many, cs in pending.items():
        got = load_many([c._key for c in cs])
        for c in cs:
            if c._value is None:
                c._value = got.get(c._key, ("", "", 0))
                c._load = None


class ChunkFields:
    """The best chunk's fields, read through `self.chunk` (a ChunkText) only when asked for."""

    chunk: ChunkText

    @property
    def heading_path(self) -> str:
        return self.chunk.get()[0]

    @property
    def text(self) -> str:
        return self.chunk.get()[1]

    @property
    def line(self) -> int:
        return self.chunk.get()[2]


@record
class TextMatch(ChunkFields):
    """One file at its best chunk."""

    path: str
    score: float  # higher is better: FTS5's bm25() negated, exactly
    chunk: ChunkText


class Matches(LazyList):
    """Matches best first as two columns (paths, scores), each TextMatch built when read:
    a base ranks 50 files per question, Memory keeps 50 of every base's, and a surface shows
    a handful. Compares equal to a list of the same matches."""

    def __init__(self, paths: list[str], scores: list[float], chunk_at: Callable[[int], ChunkText]):
        super().__init__(len(paths))
        self.paths = paths
        self.scores = scores
        self._chunk_at = chunk_at

    def _build(self, k: int) -> TextMatch:
        return TextMatch(self.paths[k], self.scores[k], self._chunk_at(k))

    def chunk(self, k: int) -> ChunkText:
        """Match k's chunk, without building the match (Memory makes its own hit of it)."""
        built = self._built[k]
        return built.chunk if built is not None else self._chunk_at(k)


class TextSearch(Protocol):
    def matches(self, terms: list[str], limit: int, question: str = "") -> list[TextMatch]:
        """The `limit` best files for these content terms, best first (ties by path); the
        question, when given, says which language to stem them in (engine/rank/stemming.py)."""
        ...

    def terms_held(self, path: str, terms: list[str]) -> set[str]:
        """Which of `terms` the note's indexed text holds (the coverage rule, engine/rank/covered.py)."""
        ...


def from_rows(rows) -> list[TextMatch]:
    """TextIndex.search's (path, bm25, heading_path, text, line) rows as matches."""
    return [TextMatch(path, -bm25, ChunkText((hp, body, line))) for path, bm25, hp, body, line in rows]


class Fts5TextSearch:
    """FTS5 itself: what a one-shot process asks."""

    def __init__(self, index):
        self.index = index

    def matches(self, terms: list[str], limit: int, question: str = "") -> list[TextMatch]:
        return from_rows(self.index.search(terms, limit, question)[0])

    def terms_held(self, path: str, terms: list[str]) -> set[str]:
        return self.index.terms_held(path, terms)
