"""The one answer object every surface renders (CLI text, JSON, the reading room, MCP).

`Memory.ask` builds it; nothing else assembles a pipeline. Field names follow the JSON of
"How the Catalogue Ranks" (`kb route --json`), so `to_json()` is a plain walk over these records (engine/record.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .stages.coverage import coverage_line  # the one wording of the coverage line, on every surface
from .shared.record import as_dict, factory, record
from .index.textsearch import ChunkFields, ChunkText

VERDICTS = ("hit", "guess", "nothing")


@record
class Passage:
    """One chunk of a note, as handed to a reader."""

    heading_path: str
    text: str
    excerpt: str


@record
class KeywordHit:
    """One entry as the keyword scorer (the labels) ranked it."""

    base: str  # the agent's directory name, e.g. "zed"
    path: str  # relative to the base, e.g. "knowledge/deploy-checklist.md"
    score: float
    matched: tuple[str, ...]  # keys and words that scored, phrases first
    species: str  # memory | skills | tools
    title: str = ""
    purpose: str = ""
    # the arithmetic behind `score`, one line per term, e.g. ("deploy", "key 6 + title 3 + stem 3", 12, 1.8718)
    terms: tuple[tuple[str, str, float, float], ...] = ()

    @property
    def id(self) -> str:
        return f"{self.base}/{self.path}"


@record
class TextHit(ChunkFields):
    """One file as the text scorer (FTS5 BM25) ranked it, at its best chunk."""

    base: str
    path: str
    score: float  # higher is better: FTS5's bm25() negated (engine/index/textsearch.py)
    chunk: ChunkText  # the best chunk; the resident leg reads its text only when asked for

    @property
    def id(self) -> str:
        return f"{self.base}/{self.path}"


@record
class Result:
    """One row of the fused reading list."""

    base: str
    path: str
    title: str
    purpose: str
    score: float  # the RRF sum
    keyword_score: float
    keyword_rank: int | None  # 1-based, None when the keyword scorer did not rank it
    text_rank: int | None
    why: str  # provenance, e.g. "keywords #1 + text #2"
    matched: tuple[str, ...]
    species: str
    passages: tuple[Passage, ...] = ()
    content_hash: str = ""  # the file's content hash in the index: a row's version
    # filled by the optional deeper stages; None when the stage did not run on this row
    rerank_score: float | None = None
    fusion: dict[str, Any] | None = None

    @property
    def id(self) -> str:
        return f"{self.base}/{self.path}"


# What engine/rank/vouch.py says of a HIT resting on keys kb label wrote and nobody has read:
AGREED = "agreed"  # rests on unread keys; the question names the note and the text leg put it first: the HIT stands
DEMOTED = "demoted"  # rests on unread keys; the text leg put another note first: a guess
UNNAMED = "unnamed"  # rests on unread keys; the text leg agrees, the question does not name the note: a guess
UNCOVERED = "uncovered"  # rests on unread keys; named and agreed, but the note holds under half the question: a guess
UNREAD_WHY = {
    AGREED: "the keyword score rests on keys kb label proposed that nobody has read; the question names the note "
            "(every word of its file name), the text search put it first too, and it holds at least half of the "
            "question's words",
    DEMOTED: "a guess, not a hit: the keyword score rests on keys kb label proposed that nobody has read, and the "
             "text search put another note first (delete the kb label line under the label once you have read its keys)",
    UNNAMED: "a guess, not a hit: the keyword score rests on keys kb label proposed that nobody has read; the text "
             "search put the same note first, but the question does not name it (every word of its file name), and "
             "both read the same words (delete the kb label line under the label once you have read its keys)",
    UNCOVERED: "a guess, not a hit: the keyword score rests on keys kb label proposed that nobody has read; the "
               "question names the note and the text search put it first, but the note holds under half of the "
               "question's words: it is the tool's page, maybe not the answer (delete the kb label line under the "
               "label once you have read its keys)",
}
# The few words a one-line surface (the verdict line, the room's verdict bar) says it in.
UNREAD_SHORT = {
    AGREED: "on keys kb label proposed, unread; the question names the note, the text search agrees",
    DEMOTED: "on keys kb label proposed, unread; the text search put another note first",
    UNNAMED: "on keys kb label proposed, unread; the question does not name the note",
    UNCOVERED: "on keys kb label proposed, unread; the note holds under half the question",
}
# The room's verdict bar: ~20 columns are left at 80 (the Gate pane says it whole).
UNREAD_BAR = {AGREED: "unread · agreed", DEMOTED: "unread · text disagrees",
              UNNAMED: "unread · not named", UNCOVERED: "unread · under half held"}



@record
class Gate:
    """Whether the keyword ranking may be served, and the floor it was judged against."""

    served: bool
    floor: float
    ranked_by_text_only: bool
    entries: int  # N, the fleet's entry count the floor was computed at
    min_entries_to_route: int
    # engine/rank/vouch.py: "agreed" or "demoted" when the top note's score rests on keys kb
    # label wrote that nobody has read; None (and absent from the JSON) otherwise
    unread: str | None = None


@record
class Confidence:
    """How far the top keyword file can be trusted: agreement, score, margin."""

    agreement: int  # how many of the two scorers ranked the keyword top file (0-2)
    keyword_score: float
    margin: float | None  # keyword top / keyword second; None when one file scored


@record
class AgentTotal:
    """One agent's folded score, and its parts per species."""

    agent: str
    score: float
    memory: float = 0.0
    skills: float = 0.0
    tools: float = 0.0


@record
class AgentChoice:
    """The owner: the agent chosen, by what, and by how much."""

    name: str | None
    score: float
    files: int  # files of the owner the keyword scorer matched
    margin: float | None  # owner total / runner-up total; None when one agent scored
    contenders: int
    totals: tuple[AgentTotal, ...]
    chosen_by: str = "fold"  # "fold" or "classifier"
    coverage: str | None = None  # covered | adjacent | uncovered, when a classifier spoke
    subject: str | None = None
    reason: str | None = None
    note: str | None = None  # why the classifier did not choose, when it was asked


@record
class Indexed:
    """What was indexed when the question was answered."""

    entries: int
    agents: int
    aliases: int
    chunks: int = 0


@record
class Miss:
    """A recall loss, as recorded (or not) in kb-misses.txt."""

    question: str
    looked_like: tuple[str, ...]
    date: str
    path: str
    recorded: bool
    error: str | None = None


@record
class Timings:
    """Where the answer's milliseconds went."""

    keyword_ms: float = 0.0
    text_ms: float = 0.0
    fuse_ms: float = 0.0
    total_ms: float = 0.0


@record
class Answer:
    """Everything one question produces; every surface renders this."""

    question: str
    terms: tuple[str, ...]  # the normalised, alias-expanded terms both scorers saw
    verdict: str  # hit | guess | nothing
    gate: Gate
    confidence: Confidence
    agent: AgentChoice
    keyword: Sequence[KeywordHit]  # the ranking's KeywordHits (engine/memory.py), each built when read
    text: Sequence[TextHit]  # the pool's TextHits (engine/rank/textpool.py), each built when read
    results: tuple[Result, ...]
    indexed: Indexed
    unreachable: tuple[str, ...]
    skipped: tuple[str, ...]  # "base/path: why" for files that could not be read
    index_was_rebuilt: bool
    reindexed: int  # files brought up to date before answering
    suggestions: tuple[str, ...]
    miss: Miss | None
    timings: Timings = factory(Timings)
    stages: dict[str, Any] = factory(dict)  # stamps of optional stages
    query: Any = None  # the engine.query.Query this answers (how the page was asked); not on the wire
    question_chars: int = 0  # the question's length when it was cut to `question` (engine/rank/question.py)
    index_rebuilt_for_version: bool = False  # the rebuild was an upgrade, not damage; not on the wire

    @property
    def keyword_top(self) -> str | None:
        return self.keyword[0].id if self.keyword else None

    @property
    def served(self) -> bool:
        return self.gate.served

    def to_json(self) -> dict[str, Any]:
        """The wire form of `kb route --json`; keys as "How the Catalogue Ranks" prints them."""
        agent = self.agent
        out: dict[str, Any] = {
            "agent": {
                "contenders": agent.contenders,
                "files": agent.files,
                "margin": _round(agent.margin),
                "name": agent.name,
                "score": _round(agent.score),
                "totals": [{"agent": t.agent, "score": _round(t.score)} for t in agent.totals],
                "chosen_by": agent.chosen_by,
            },
            "confidence": {
                "agreement": self.confidence.agreement,
                "keyword_score": _round(self.confidence.keyword_score),
                "margin": _round(self.confidence.margin),
            },
            "gate": {
                "floor": _round(self.gate.floor),
                "ranked_by_text_only": self.gate.ranked_by_text_only,
                "served": self.gate.served,
                **({"unread_keys": self.gate.unread, "why": UNREAD_WHY[self.gate.unread]} if self.gate.unread else {}),
            },
            "index_was_rebuilt": self.index_was_rebuilt,
            "reindexed": self.reindexed,
            "indexed": {
                "agents": self.indexed.agents,
                "aliases": self.indexed.aliases,
                "entries": self.indexed.entries,
            },
            "keyword_top": self.keyword_top,
            "miss": as_dict(self.miss) if self.miss else None,
            "question": self.question,
            "results": [_result_json(r) for r in self.results],
            "skipped": list(self.skipped),
            "suggestions": list(self.suggestions),
            "unreachable": list(self.unreachable),
            "verdict": self.verdict,
        }
        if agent.chosen_by == "classifier" or agent.note:
            out["agent"].update(
                {"coverage": agent.coverage, "subject": agent.subject, "reason": agent.reason, "note": agent.note,
                 "line": coverage_line(agent)}
            )
        if self.miss:
            out["miss"]["looked_like"] = list(self.miss.looked_like)
        if self.stages:
            out["stages"] = self.stages
        if self.question_chars:
            out["question_cut"] = {"chars": self.question_chars, "read": len(self.question)}
        return out


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 6)


def _result_json(r: Result) -> dict[str, Any]:
    row: dict[str, Any] = {
        "agent": r.base,
        "base": r.base,
        "path": r.path,
        "title": r.title,
        "purpose": r.purpose,
        "score": _round(r.score),
        "keyword_score": _round(r.keyword_score),
        "why": r.why,
        "matched": list(r.matched),
        "species": r.species,
        "passages": [as_dict(p) for p in r.passages],
    }
    if r.rerank_score is not None:
        row["rerank_score"] = r.rerank_score
    if r.fusion is not None:
        row["fusion"] = r.fusion
    return row
