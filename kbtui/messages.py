"""What workers send back to the UI thread. Results leave a thread only as these messages."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from textual.message import Message


@dataclass
class Answered(Message):
    """An answer to question `qid`; the screen drops it when a newer question was asked."""

    qid: int
    answer: Any  # engine.answer.Answer (typed loosely so this module imports no engine)
    submitted: bool  # Enter (a miss may have been recorded) rather than as-you-type


@dataclass
class AskFailed(Message):
    """The engine raised answering question `qid`; `error` is the one line to show."""

    qid: int
    error: str


@dataclass
class Reranked(Message):
    """A slower stage's reading list for question `qid`, painted after the fast one."""

    qid: int
    answer: Any


@dataclass
class FleetLoaded(Message):
    """The index is up to date and the catalogue built: the app can answer."""

    entries: int
    agents: int
    chunks: int
    reindexed: int
    skipped: tuple[str, ...] = ()


@dataclass
class RoomSettled(Message):
    """What the room keeps for its life is built (the text leg held in memory) and moved out
    of the cycle collector's sight."""


@dataclass
class FleetChanged(Message):
    """Notes changed on disk and were re-indexed."""

    changes: tuple[str, ...]  # "edited zed/knowledge/x.md", ...
    problems: tuple[str, ...] = ()  # notes that could not be read, reported not fatal


@dataclass
class NoteLoaded(Message):
    base: str
    path: str
    source: str
    line: int  # 1-based line of the best passage, 0 when unknown
    error: str | None = None
    section_line: int = 0  # 1-based first line of the section holding `line`, 0 when unknown


@dataclass
class EvalProgress(Message):
    done: int
    total: int

    def can_replace(self, message: Message) -> bool:
        # Only the latest progress matters: coalesce a burst into one repaint.
        return isinstance(message, EvalProgress)


@dataclass
class EvalFinished(Message):
    report: Any = None
    error: str | None = None


@dataclass
class CheckFinished(Message):
    findings: list[Any] = field(default_factory=list)
    error: str | None = None


@dataclass
class MissesLoaded(Message):
    path: str
    entries: list[Any] = field(default_factory=list)
    error: str | None = None


@dataclass
class AliasEffectShown(Message):
    """The misses screen's first `a`: what the proposed alias line does to the logged questions."""

    line: str
    effects: list[Any] = field(default_factory=list)  # engine.review.aliasapply.AliasEffect
    error: str | None = None


@dataclass
class AliasWritten(Message):
    """The misses screen's second `a`: the line appended to kb-aliases.txt, or why not."""

    line: str
    wrote: bool = False  # False with no error: the line was there already
    error: str | None = None


@dataclass
class ProposalsLoaded(Message):
    """The labels screen's proposals (engine.review.labelcli.NoteProposal), read in a worker."""

    proposals: list[Any] = field(default_factory=list)
    error: str | None = None


@dataclass
class EffectShown(Message):
    """What one note's kept keys would change, worked out on a private copy."""

    note_id: str
    keys: tuple[str, ...]
    effect: Any = None  # engine.review.labeleffect.Effect
    error: str | None = None


@dataclass
class EffectProgress(Message):
    """How far the effect of one note's keys has got: copying, indexing, asking (F8 on 616
    notes showed nothing for 8 s)."""

    note_id: str
    stage: str
    done: int = 0
    total: int = 1


@dataclass
class LabelWritten(Message):
    note_id: str
    written: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)


@dataclass
class RosterLoaded(Message):
    rows: list[Any] = field(default_factory=list)  # roster_screen.AgentRow
    error: str | None = None


@dataclass
class NoteRendered(Message):
    """A note rendered to lines at `width` (in a thread): the window around the passage
    first for a long note (`whole` False), then the whole note."""

    lines: list = field(repr=False)  # textual.strip.Strip, one per row
    anchors: list[tuple[int, int]] = field(repr=False)  # (1-based source line, row) of each section
    matches: list[int] = field(repr=False)  # rows holding a highlighted word
    first_line: int  # the source line the rendered part begins at
    whole: bool
    width: int
