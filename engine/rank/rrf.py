"""Reciprocal Rank Fusion: positions, never raw scores.

A BM25 value and a keyword score live in different numeric universes; ranks need no
conversion factor, and so nothing to tune per corpus.
"""

from __future__ import annotations

RRF_K = 60  # each list contributes 1 / (RRF_K + rank)

from .terms import Term  # noqa: E402  (after the constant it explains)


def rrf(*rankings: list[str]) -> list[tuple[str, float, list[int | None]]]:
    """Fuse ranked id lists. Returns (id, score, [rank in each list or None]), best first.

    Ties order by the best rank held in the earlier list, then by id, so the keyword
    scorer's order decides between files the fusion cannot separate.
    """
    ranks: dict[str, list[int | None]] = {}
    for li, ranking in enumerate(rankings):
        for pos, ident in enumerate(ranking, start=1):
            ranks.setdefault(ident, [None] * len(rankings))
            if ranks[ident][li] is None:
                ranks[ident][li] = pos
    return _ordered(ranks)


def rrf_top(keyword: list[str], text: list[str], limit: int) -> list[tuple[str, float, list[int | None]]]:
    """rrf(keyword, text)[:limit], without scoring and sorting every keyword-ranked id.

    An id only the keyword list ranks scores 1/(RRF_K + its rank), so those ids fall in rank
    order, each strictly below the one before: past the first `limit` of them none can reach
    the page. The candidates are the text list's ids and those first `limit`, fused as rrf
    fuses them, so every score and every tie is decided exactly as the whole list decides it.
    (A common word ranks thousands of keyword entries and a page shows five.)
    """
    if limit <= 0:
        return []  # an empty page (kb misses asks for none: it reads the rankings themselves)
    in_text = set(text)
    head: list[str] = []
    for ident in keyword:
        if len(head) >= limit:
            break
        if ident not in in_text and ident not in head:
            head.append(ident)
    if len(head) < limit:
        return rrf(keyword, text)[:limit]
    # The kept ids at the ranks the whole lists give them (an id's first place in each list),
    # so every score is the float rrf computes and every tie is broken as it breaks it.
    first_in_keyword = dict(zip(reversed(keyword), range(len(keyword), 0, -1)))
    ranks: dict[str, list[int | None]] = {ident: [first_in_keyword[ident], None] for ident in head}
    for pos, ident in enumerate(text, start=1):
        r = ranks.setdefault(ident, [first_in_keyword.get(ident), None])
        if r[1] is None:
            r[1] = pos
    return _ordered(ranks)[:limit]


def _ordered(ranks: dict[str, list[int | None]]) -> list[tuple[str, float, list[int | None]]]:
    """Each id's fused score from its ranks, best first; ties by the better rank in each list
    in turn (an unranked place counts as last), then by id."""
    fused = [(ident, sum(1.0 / (RRF_K + r) for r in rs if r is not None), rs) for ident, rs in ranks.items()]
    big = 1 << 30
    fused.sort(key=lambda f: (-f[1], *(r if r is not None else big for r in f[2]), f[0]))
    return fused


def parts(ranks: dict[str, int | None]) -> tuple[Term, ...]:
    """One row's RRF score as labelled terms, one per ranked list (label -> 1-based rank, None
    when that list did not rank it), then the sum: the arithmetic a surface prints."""
    terms = []
    total = 0.0
    for label, rank in ranks.items():
        if rank is None:
            terms.append(Term(label, "not ranked", 0.0))
            continue
        part = 1.0 / (RRF_K + rank)
        total += part
        terms.append(Term(label, f"#{rank} 1/({RRF_K} + {rank})", part))
    terms.append(Term("sum", "", total))
    return tuple(terms)
