"""The text leg's pool over several bases: the best files by score, ties by id.

Each base hands its matches best first, ties by path. The pool is ordered by score, then id
(base/path): a total order, so the pool cut after each base is the pool of all of them.

No id string is built and no tuple compared: two ids of different bases order as their
bases' names followed by "/" do, whatever the paths (a name holds no "/", so the two differ
within the shorter name and its slash), and one base's ties are already in path order. So
the bases' matches laid end to end in that order, then sorted by score alone with a stable
sort, are in (score, id) order.
"""

from __future__ import annotations

from typing import Any

from ..answer import TextHit
from .lazylist import LazyList
from ..index.textsearch import Matches


class TextPool:
    def __init__(self, size: int):
        self.size = size
        # Per base asked: (name + "/", name, its matches, their places, paths, scores), best first.
        self._blocks: list[tuple[str, str, Any, list[int], list[str], list[float]]] = []
        self._held = 0

    def add(self, name: str, matches: Any, paths: list[str], scores: list[float]) -> None:
        self._blocks.append((name + "/", name, matches, list(range(len(paths))), paths, scores))
        self._held += len(paths)

    def rows(self) -> list[tuple[str, Any, int, str, float]]:
        """(base, its matches, the place in them, path, score) of the pool, best first."""
        names: list[str] = []
        held: list[Any] = []
        places: list[int] = []
        paths: list[str] = []
        scores: list[float] = []
        for _, name, matches, at, ps, sc in sorted(self._blocks, key=lambda b: b[0]):
            names += [name] * len(at)
            held += [matches] * len(at)
            places += at
            paths += ps
            scores += sc
        best = sorted(range(len(scores)), key=scores.__getitem__, reverse=True)[:self.size]  # stable
        return [(names[i], held[i], places[i], paths[i], scores[i]) for i in best]

    def hits(self) -> TextHits:
        return TextHits(self.rows())

    def last_if_full(self) -> float | None:
        """The pool's last score when it is full, else None; the pool is cut to its size, so
        asking after every base costs what the pool holds, not what every base returned."""
        if self._held < self.size:
            return None
        rows = self.rows()
        kept: dict[str, tuple[str, str, Any, list[int], list[str], list[float]]] = {}
        for name, matches, place, path, score in rows:  # a base's rows stay in its own order
            block = kept.get(name)
            if block is None:
                block = kept[name] = (name + "/", name, matches, [], [], [])
            block[3].append(place)
            block[4].append(path)
            block[5].append(score)
        self._blocks = list(kept.values())
        self._held = len(rows)
        return rows[-1][4]


class TextHits(LazyList):
    """The pool as TextHits, each built when first read: the fusion reads the 50 ids, a page
    shows a handful of hits. Compares equal to a list or tuple of the same hits."""

    def __init__(self, rows: list[tuple[str, Any, int, str, float]]):
        super().__init__(len(rows))
        self._rows = rows

    def _build(self, k: int) -> TextHit:
        name, matches, place, path, score = self._rows[k]
        chunk = matches.chunk(place) if isinstance(matches, Matches) else matches[place].chunk
        return TextHit(name, path, score, chunk)

    def ids(self) -> list[str]:
        """Each hit's id (base/path), without building the hits."""
        return [f"{name}/{path}" for name, _, _, path, _ in self._rows]

    def __repr__(self) -> str:
        return f"TextHits({list(self)!r})"
