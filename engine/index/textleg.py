"""The text leg over every base: each base asked for its best files, best ceiling first, and
pooled (engine/rank/textpool.py) until no base left can place a file. Memory calls it."""

from __future__ import annotations

from ..rank.textpool import TextHits, TextPool
from . import catalogue_cache
from .textsearch import Matches

# The pool the fusion is computed over is a constant: a caller's page size chooses how much
# of the ordering it sees, never what the ordering is.
RANK_CANDIDATE_POOL = 50


def text_leg(indexes: dict, search_of, terms: list[str], question: str = "", openings: dict | None = None,
             keep: int = RANK_CANDIDATE_POOL, checked: bool = False, every_base: bool = False) -> TextHits:
    """The text leg's files, best first: the pool's first `keep` (kb misses reads 3).
    search_of(name, index): the base's TextSearch. checked: the openings' keys were compared
    with the indexes just now (Routed.fresh). every_base: see bases_to_search.

    Each base ranks its RANK_CANDIDATE_POOL best whatever `keep` is, and hands them in the
    pool's order (score, then path), so no file past a base's `keep`-th can be among the
    pool's first `keep`: only those are pooled, ties and all as the whole pool has them.
    """
    # BM25 values from separate bases are compared as they are: each base's statistics are
    # their own, which is the price of an index per agent (docs/decisions.md, "Several
    # bases, one text leg"). A hit is made for the pool only.
    size = min(keep, RANK_CANDIDATE_POOL)
    pool = TextPool(size)
    for name, idx, ceiling in bases_to_search(indexes, terms, question, openings, checked, every_base):
        if ceiling is not None:
            last = pool.last_if_full()
            if last is not None and ceiling < last:
                # No file of this base can score as high as the pool's last, and the bases
                # left are ordered by that ceiling: none of them can place a file either.
                break
        ms = search_of(name, idx).matches(terms, RANK_CANDIDATE_POOL, question)
        # The resident leg's matches are columns: no match is built to be merged and dropped.
        if isinstance(ms, Matches):
            paths, scores = ms.paths, ms.scores
        else:
            paths, scores = [m.path for m in ms], [m.score for m in ms]
        if size < RANK_CANDIDATE_POOL:
            paths, scores = paths[:size], scores[:size]
        if paths:
            pool.add(name, ms, paths, scores)
    return pool.hits()


def bases_to_search(indexes: dict, terms: list[str], question: str, openings: dict | None,
                    checked: bool = False, every_base: bool = False):
    """(name, index, ceiling) of the bases the text leg asks, in the order it asks them.

    A one-shot reads each small base's vocabulary from its opening cache: a base holding
    none of the words is not opened, and the rest are asked best ceiling first (the best
    score any of their files can reach, engine/index/catalogue_cache.text_ceiling), after the
    bases without one, so the leg stops at the first that cannot reach the pool. A
    process that stays up (`every_base`) searches every base (its snapshot may be older than
    an index another process just wrote)."""
    if not openings or every_base:
        return [(name, idx, None) for name, idx in indexes.items()]
    unbounded, bounded = [], []
    for name, idx in indexes.items():
        op = openings.get(name)
        ceiling = catalogue_cache.text_ceiling(idx, op, terms, question, checked) if op is not None else None
        if ceiling is None:
            unbounded.append((name, idx, None))
        elif ceiling > 0.0:
            bounded.append((name, idx, ceiling))  # 0.0: none of the words is in this base
    bounded.sort(key=lambda b: -b[2])
    return unbounded + bounded
