"""What the steps of one question hand on (Memory's read step and reask, engine/memory.py;
the route step's Routed holds the snapshot, so it is Memory's own), and the Answer assembled
from them: the gate, the confidence, the counts."""

from __future__ import annotations

import time
from typing import Any

from ..shared.record import record

from ..answer import Answer, Confidence, Gate, Indexed, Result, TextHit, Timings
from ..query import Query
from . import gate as gate_mod
from .keywordhits import KeywordHits
from .textpool import TextHits

@record
class Reask:
    """A question asked again for what `kb misses` reads of it, and nothing else: the
    verdict, the keyword ranking, the text leg's best files and the refusal's suggestions,
    each what `ask` would give. No owner, no reading list, no hit built."""

    question: str  # as read: repaired, and cut as a route cuts it (engine/rank/question.py)
    words: tuple[str, ...]  # its normalised words (engine/rank/normalize.terms)
    verdict: str
    keyword: "KeywordHits"
    text: tuple[TextHit, ...]  # the text leg's first `text_top` files, in the answer's order
    suggestions: tuple[str, ...]

    @property
    def keyword_top(self) -> str | None:
        return self.keyword.id_at(0) if self.keyword else None


@record
class Reading:
    """What the read step found: the text leg's hits and the page of the reading list."""

    text: TextHits
    results: tuple[Result, ...]
    stages: dict[str, Any]
    text_ms: float
    fuse_ms: float


def text_ids(text) -> list[str]:
    """The text hits' ids, without building a hit per row when they are TextHits."""
    return text.ids() if isinstance(text, TextHits) else [h.id for h in text]


def did_you_mean(routed) -> tuple[str, ...]:
    """A refusal's suggestions: the fleet's keys spelled like the question's words (routed: Memory's Routed)."""
    return tuple(routed.snap.catalogue.speller().suggest(list(routed.words)))


def assemble(query: Query, routed, reading: Reading, *, agents: int, index_was_rebuilt: bool,
             index_rebuilt_for_version: bool, reindexed: int) -> Answer:
    """The Answer of the route step (Memory's Routed) and the read step, with how the fleet's
    indexes were last brought up to date."""
    snap, keyword, text_ids_ = routed.snap, routed.keyword, text_ids(reading.text)
    n = snap.catalogue.n
    # The top two scores and the top id read from the ranking: no hit is built for them
    # (kb misses re-asks thousands of questions and shows none of these hits).
    score_at, id_at = (keyword.score_at, keyword.id_at) if isinstance(keyword, KeywordHits) else (
        lambda k: keyword[k].score, lambda k: keyword[k].id)
    top_score = score_at(0) if keyword else 0.0
    gate = Gate(
        served=routed.verdict != "nothing", floor=gate_mod.floor_for(n),
        ranked_by_text_only=not keyword and bool(text_ids_), entries=n,
        min_entries_to_route=gate_mod.MIN_ENTRIES_TO_ROUTE, unread=getattr(routed, "unread", None),
    )
    margin = top_score / score_at(1) if len(keyword) > 1 and score_at(1) > 0 else None
    agreement = 1 + (id_at(0) in text_ids_) if keyword else 0
    suggestions = did_you_mean(routed) if not gate.served else ()
    return Answer(
        question=query.question, terms=routed.terms, verdict=routed.verdict, gate=gate,
        confidence=Confidence(agreement=agreement, keyword_score=top_score, margin=margin),
        agent=routed.agent, keyword=keyword, text=reading.text, results=reading.results,
        indexed=Indexed(entries=n, agents=agents, aliases=len(snap.aliases), chunks=snap.chunks),
        unreachable=snap.unreachable, skipped=snap.skipped, index_was_rebuilt=index_was_rebuilt,
        index_rebuilt_for_version=index_rebuilt_for_version,
        reindexed=reindexed, suggestions=suggestions, miss=None,
        timings=Timings(
            keyword_ms=routed.keyword_ms, text_ms=reading.text_ms, fuse_ms=reading.fuse_ms,
            total_ms=(time.perf_counter() - routed.started) * 1000,
        ),
        stages=reading.stages, query=query,
    )
