"""A sequence whose items are built when first read, then kept.

A ranking over a large fleet has thousands of rows and a surface shows a handful: the
keyword ranking (engine/rank/catalogue.Ranking) and its hits (engine/memory.KeywordHits) build
each row only when something reads it. Compares equal to a list or tuple of the same items.
"""

from __future__ import annotations

from collections.abc import Sequence


class LazyList(Sequence):
    def __init__(self, length: int):
        self._built: list = [None] * length

    def _build(self, k: int):
        """Item `k`, built from scratch (called once per item)."""
        raise NotImplementedError

    def __len__(self) -> int:
        return len(self._built)

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self[j] for j in range(*k.indices(len(self)))]
        item = self._built[k]
        if item is None:
            item = self._built[k] = self._build(k)
        return item

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (Sequence, list)) and not isinstance(other, str):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]
