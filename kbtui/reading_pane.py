"""The fused reading list (RRF score, agent, path, provenance, excerpt) and, when nothing
is served, what the base does know that looks like the question, with its stated limit."""

from __future__ import annotations

from dataclasses import dataclass

from engine.sentences import (
    LIMIT_NOTE,
    MISS_NOT_YET,
    MISS_RECORDED,
    MISS_UNWRITTEN,
    NOTHING_HEAD,
    NOTHING_OFFERED,
    NOTHING_WHY,
    SUGGEST_LEAD,
)
from engine.rank.rrf import RRF_K
from rich.console import Group
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message

from .clamp import Clamp
from .clean import name_line, one_line
from .line_list import LineList
from .line_view import LineView
from .pane import Pane


EXCERPT_LINES = 2
# Under the list: what its numbers are (RRF: each scorer's list gives 1/(K + rank), added).
SCORE_SAYS = f"score: 1/({RRF_K}+rank) from each list, added · space: why"
SCORE_SAYS_PURPOSE = "score: share of the top row's · space: why"


def shown_score(r, top_fused: int | None) -> float:
    """The score the list is ordered by: the RRF sum, or under a purpose the row's fused
    integer as a share of the top row's (1.000 on top), so the number never contradicts the
    order (the integer itself is in `w`)."""
    if r.fusion is None or not top_fused:
        return r.score
    return r.fusion.get("fusedScore", 0) / top_fused


def result_prompt(r, top_fused: int | None = None) -> Group:
    """A row: score, agent and path on one line; then provenance and excerpt, two lines."""
    head = Text(no_wrap=True, overflow="ellipsis")
    head.append(f"{shown_score(r, top_fused):.3f}", style="bold")
    head.append(f"  {name_line(r.base)}", style="bold")
    head.append(f"  {name_line(r.path)}")
    if r.rerank_score is not None:
        head.append(f"  rerank {r.rerank_score:.3f}", style="dim")
    excerpt = r.passages[0].excerpt if r.passages else (r.purpose or r.title)
    body = Text()
    body.append(one_line(r.why), style="italic")
    if excerpt:
        body.append("  " + one_line(excerpt), style="dim")
    return Group(head, Clamp(body, EXCERPT_LINES, indent=3))


def suggestions_text(answer, *, fleet_root_name: str = "") -> Text:
    """The miss reply: the refusal, the look-alike keys, the limit, and whether it was logged."""
    t = Text()
    if answer.indexed.entries == 0:
        # There are no Search for lines to blame: the list below is the whole answer for now.
        t.append("no note has a label yet: ", style="bold")
        t.append("the files below are the full-text reading list, never a hit. kb label proposes labels.\n")
    else:
        t.append(NOTHING_HEAD + " ", style="bold")
        t.append(NOTHING_WHY + "\n")
    if answer.indexed.entries == 0:
        pass  # no labels, so no key to be spelled like the question
    elif answer.suggestions:
        t.append(SUGGEST_LEAD + "\n")
        t.append("  " + ", ".join(one_line(s) for s in answer.suggestions) + "\n", style="bold")
        t.append(" ".join(LIMIT_NOTE) + "\n", style="italic dim")
    else:
        t.append(NOTHING_OFFERED + "\n", style="dim")
    miss = answer.miss
    if miss is None:
        t.append(MISS_NOT_YET, style="dim")
    elif miss.recorded:
        t.append(MISS_RECORDED, style="")
        t.append(" (F4 shows the log, most asked first)", style="dim")
    else:
        t.append("NOT recorded: ", style="bold red")
        t.append(one_line(miss.error or MISS_UNWRITTEN))
    return t


class ReadingPane(Pane):
    NAME, TITLE, FOCUS, GRID_SLOT = "reading", "Reading list", "#reading-list", 1
    HELP = "the notes to read, both scorers' lists fused (RRF)"
    # Space, not a letter: a letter typed on the list starts a question (main_screen.on_key).
    BINDINGS = [Binding("space", "why", "Why", tooltip="why this row is where it is: its sum", id="reading.why")]
    DEFAULT_CSS = """
    ReadingPane #suggestions { height: auto; padding: 0 1 1 1; }
    ReadingPane #suggestions.-hidden { display: none; }
    ReadingPane #reading-list { height: 1fr; border: none; background: transparent; }
    ReadingPane #reading-list:focus { border: none; }
    MainScreen.-wide.-tall ReadingPane { column-span: 5; }
    """

    @dataclass
    class Open(Message):
        base: str
        path: str

    @dataclass
    class Why(Message):
        index: int

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self._ids: list[tuple[str, str]] = []

    def compose(self) -> ComposeResult:
        yield LineView(id="suggestions", classes="-hidden")
        yield LineList(id="reading-list")

    def show_answer(self, answer) -> None:
        from engine.stages.coverage import coverage_line  # the one wording, shared with kb and kb boot

        sug = self.query_one("#suggestions", LineView)
        line = coverage_line(answer.agent)
        head = Text()
        if line:
            head.append(one_line(line) + "\n\n", style="bold")
        if answer.gate.served:
            if line:
                sug.update(head)
                sug.remove_class("-hidden")
            else:
                sug.add_class("-hidden")
        else:
            sug.update(head + suggestions_text(answer))
            sug.remove_class("-hidden")
        purpose = next((r.fusion.get("purpose") for r in answer.results if r.fusion), None)
        self.border_title = f"{self.TITLE} (purpose: {purpose}; share of top)" if purpose else self.TITLE
        # What the number on each row is, where it is read (F1's glossary says more).
        self.border_subtitle = SCORE_SAYS_PURPOSE if purpose else SCORE_SAYS
        self.show_results(answer.results)

    def signature(self, answer) -> object:
        from engine.stages.coverage import coverage_line

        miss = answer.miss
        rows = tuple((r.id, r.score, r.why, r.passages[0].excerpt if r.passages else "", r.rerank_score,
                      r.fusion.get("fusedScore") if r.fusion else None) for r in answer.results)
        return (rows, answer.gate.served, tuple(answer.suggestions), coverage_line(answer.agent),
                None if miss is None else (miss.recorded, miss.error))

    def clear(self) -> None:
        self.border_title = self.TITLE
        self.border_subtitle = ""
        self.query_one("#suggestions", LineView).add_class("-hidden")
        self._ids = []
        self.query_one(LineList).clear()

    def show_results(self, results) -> None:
        rows = self.query_one(LineList)
        self._ids = [(r.base, r.path) for r in results]
        if results:
            top_fused = results[0].fusion.get("fusedScore") if results[0].fusion else None
            rows.set_items([result_prompt(r, top_fused) for r in results], highlighted=rows.highlighted or 0)
        else:
            rows.set_items([Text("no file holds these words", style="dim")], disabled=True)

    def action_why(self) -> None:
        i = self.query_one(LineList).highlighted
        if i is not None and 0 <= i < len(self._ids):
            self.post_message(self.Why(i))

    def on_line_list_selected(self, event: LineList.Selected) -> None:
        event.stop()
        i = event.index
        if 0 <= i < len(self._ids):
            self.post_message(self.Open(*self._ids[i]))
