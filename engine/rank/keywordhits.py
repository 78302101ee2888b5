"""The keyword ranking as a surface reads it: KeywordHits built when read, and the owner
folded from the ranking (engine/rank/fold.py). Memory (engine/memory.py) hands both out."""

from __future__ import annotations

from ..answer import AgentChoice, KeywordHit
from .catalogue import Ranking, Scored
from .fold import fold
from .lazylist import LazyList


def _keyword_hit(s: Scored) -> KeywordHit:
    e = s.entry
    return KeywordHit(
        base=e.base, path=e.path, score=s.score, matched=s.matched, species=e.species,
        title=e.title, purpose=e.purpose, terms=s.terms,
    )


class KeywordHits(LazyList):
    """The keyword ranking as KeywordHits, each built when first read: a question with a
    common word scores a quarter of a large fleet, and a surface shows a handful of them.
    Compares equal to a list or tuple of the same hits."""

    def __init__(self, ranking: Ranking):
        super().__init__(len(ranking))
        self.ranking = ranking

    def _build(self, k: int) -> KeywordHit:
        return _keyword_hit(self.ranking[k])

    def ids(self) -> list[str]:
        return self.ranking.ids()

    def score_at(self, k: int) -> float:
        """hits[k].score, without building the hit."""
        return self.ranking.score_at(k)

    def id_at(self, k: int) -> str:
        """hits[k].id, without building the hit."""
        return self.ranking.entry_at(k).id

    def matched_anywhere(self) -> set[str]:
        """The union of every hit's `matched`, without building the hits."""
        return self.ranking.matched_anywhere()

    def __repr__(self) -> str:
        return f"KeywordHits({list(self)!r})"


def keyword_ids(keyword) -> list[str]:
    """The keyword ranking's ids, without building a hit per entry when it is a KeywordHits."""
    return keyword.ids() if isinstance(keyword, KeywordHits) else [k.id for k in keyword]


def choose_agent(scored: Ranking) -> AgentChoice:
    # The fold keeps each agent's best file per species: in a ranking that is best first, the
    # first of each (agent, species) is that best, so only those are handed to it.
    groups, names = scored.groups(), scored.group_names()  # (base, species) per ranked entry, as numbers
    present = set(groups)
    first_at: dict[int, int] = {}  # group -> its first place, in the order of those places
    for k, g in enumerate(groups):
        if g not in first_at:
            first_at[g] = k
            if len(first_at) == len(present):
                break  # every group met: the rest of the ranking adds nothing to the fold
    score_at = scored.score_at
    totals = fold([(*names[g], score_at(k)) for g, k in first_at.items()])
    if not totals:
        return AgentChoice(name=None, score=0.0, files=0, margin=None, contenders=0, totals=())
    owner = totals[0]
    margin = owner.score / totals[1].score if len(totals) > 1 and totals[1].score > 0 else None
    files = sum(groups.count(g) for g in present if names[g][0] == owner.agent)
    return AgentChoice(
        name=owner.agent, score=owner.score, files=files, margin=margin, contenders=len(totals),
        totals=tuple(totals),
    )
