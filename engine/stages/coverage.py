"""What a surface says about coverage, worded once.

The desk, the hook (`kb boot`), the reading room, JSON and MCP all print these lines from
here, so one wrong answer cannot be worded three ways. UNCOVERED_LINE is "How the Catalogue Ranks"'s sentence
verbatim.
"""

from __future__ import annotations

from typing import Protocol


class AgentChoice(Protocol):
    """What these lines read of engine/answer.AgentChoice (answer.py words its line from
    here, so this module imports nothing of it)."""

    name: str | None
    chosen_by: str
    coverage: str | None
    subject: str | None
    reason: str | None
    note: str | None

UNCOVERED_LINE = (
    "VESTA: nothing in this fleet covers {subject}, and no agent is near enough to name. {reason} "
    "This is a gap in the fleet rather than a gap in the question: it is worth deciding whether an agent "
    "should exist for it."
)
# Adjacent names the nearest agent and says plainly that answering from there is a stretch,
# and what the honest options are ("How the Catalogue Ranks").
ADJACENT_LINE = (
    "VESTA: no agent in this fleet owns {subject}. {owner} is the nearest: {reason} Answering from there is "
    "a stretch; the honest options are to give {owner} the knowledge or to create an agent for {subject}."
)
NO_SUBJECT = "this subject"


def _sentence(s: str | None) -> str:
    s = (s or "").strip()
    if not s:
        return "The classifier gave no reason."
    return s if s[-1] in ".!?" else s + "."


def coverage_line(agent: AgentChoice) -> str | None:
    """The one line for `uncovered` or `adjacent`; None when covered or the fold chose."""
    if agent.chosen_by != "classifier":
        return None
    subject = (agent.subject or "").strip() or NO_SUBJECT
    if agent.coverage == "uncovered":
        return UNCOVERED_LINE.format(subject=subject, reason=_sentence(agent.reason))
    if agent.coverage == "adjacent":
        return ADJACENT_LINE.format(subject=subject, owner=agent.name or "no one", reason=_sentence(agent.reason))
    return None


def chooser_line(agent: AgentChoice) -> str | None:
    """Who chose the agent, when a classifier was involved; None when none is configured."""
    if agent.chosen_by == "classifier":
        who = agent.name or "no one"
        subject = f" on {agent.subject}" if agent.subject else ""
        return f"chosen by the classifier: {who}, {agent.coverage}{subject}"
    if agent.note:
        return f"chosen by the fold, because {agent.note}"
    return None
