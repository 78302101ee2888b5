"""The species fold: which agent owns the question.

Per agent, the best file of each species (memory, skills, tools), summed: at most three
numbers. Dense memory contributes its best note and no more, so an agent cannot win by
mass; an agent scoring in two species beats one scoring the same in one.
"""

from __future__ import annotations

from ..answer import AgentTotal

SPECIES = ("memory", "skills", "tools")


def fold(scored: list[tuple[str, str, float]]) -> list[AgentTotal]:
    """(agent, species, score) rows in; agents best first (ties by name)."""
    best: dict[str, dict[str, float]] = {}
    for agent, species, score in scored:
        per = best.setdefault(agent, {s: 0.0 for s in SPECIES})
        if score > per[species]:
            per[species] = score
    totals = [
        AgentTotal(agent=a, score=sum(per.values()), memory=per["memory"], skills=per["skills"], tools=per["tools"])
        for a, per in best.items()
    ]
    totals.sort(key=lambda t: (-t.score, t.agent))
    return totals
