"""The reading list's page as Result rows: each row's record from the snapshot, its hits from
the two rankings, and its passage from the text leg's chunk or the note's best chunks."""

from __future__ import annotations

from ..answer import Passage, Result
from ..rank.excerpt import count_hits, excerpt
from .textsearch import read_all

# A note of more chunks than this is searched for its passages rather than read whole.
PASSAGE_SCAN_CHUNKS = 2_000


def passages(idx, path: str, terms: list[str], limit: int = 3) -> list[Passage]:
    """A note's chunks in `idx` that hold the most of the question's words, best first."""
    chunks = idx.passage_candidates(path, terms, PASSAGE_SCAN_CHUNKS)
    ranked = sorted(chunks, key=lambda ic: (-count_hits(ic[1][0] + " " + ic[1][1], terms), ic[0]))
    return [Passage(hp, body, excerpt(hp, body, terms)) for _, (hp, body, _line) in ranked[:limit]]


def results(snap, fused, keyword, text_hits, terms, top, with_passages, passages_for) -> list[Result]:
    """The first `top` fused rows as Results; passages_for(base, path, terms, limit) reads a
    note's best chunks for a row the text leg did not rank."""
    # A row's text rank is its place in the text leg's hits: only the page's hits are built.
    if with_passages:  # the page's chunks in one read per base (the resident leg reads them late)
        read_all(text_hits[trank - 1].chunk for _, _, (_, trank) in fused[: max(top, 0)] if trank)
    out = []
    for ident, score, (krank, trank) in fused[: max(top, 0)]:
        base, path = ident.split("/", 1)
        rec = snap.records.get(base, {}).get(path)
        # The fusion carries the row's 1-based keyword rank (an id ranks once there), so
        # no map of every ranked id is made for a page of five.
        k = keyword[krank - 1] if krank else None
        t = text_hits[trank - 1] if trank else None
        why = " + ".join(
            p for p in (f"keywords #{krank}" if krank else "", f"text #{trank}" if trank else "") if p
        )
        found: tuple[Passage, ...] = ()
        if with_passages:
            if t is not None:
                found = (Passage(t.heading_path, t.text, excerpt(t.heading_path, t.text, terms)),)
            else:
                found = tuple(passages_for(base, path, terms, limit=1))
        out.append(
            Result(
                base=base,
                path=path,
                title=rec.title if rec else (k.title if k else ""),
                purpose=rec.purpose if rec else "",
                score=score,
                keyword_score=k.score if k else 0.0,
                keyword_rank=krank,
                text_rank=trank,
                why=why,
                matched=k.matched if k else (),
                species=rec.species if rec else (k.species if k else "memory"),
                passages=found,
                content_hash=rec.hash if rec else "",
            )
        )
    return out
