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
from rich.console import Group
from rich.padding import Padding
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from .clamp import Clamp
from .clean import name_line, one_line


EXCERPT_LINES = 2


def result_prompt(r) -> Group:
    """A row: score, agent and path on one line; then provenance and excerpt, two lines."""
    head = Text(no_wrap=True, overflow="ellipsis")
    head.append(f"{r.score:.3f}", style="bold")
    head.append(f"  {name_line(r.base)}", style="bold")
    head.append(f"  {name_line(r.path)}")
    if r.rerank_score is not None:
        head.append(f"  rerank {r.rerank_score:.3f}", style="dim")
    excerpt = r.passages[0].excerpt if r.passages else (r.purpose or r.title)
    body = Text()
    body.append(one_line(r.why), style="italic")
    if excerpt:
        body.append("  " + one_line(excerpt), style="dim")
    return Group(head, Padding(Clamp(body, EXCERPT_LINES), (0, 0, 0, 3)))


def suggestions_text(answer, *, fleet_root_name: str = "") -> Text:
    """The miss reply: the refusal, the look-alike keys, the limit, and whether it was logged."""
    t = Text()
    t.append(NOTHING_HEAD + " ", style="bold")
    t.append(NOTHING_WHY + "\n")
    if answer.suggestions:
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


class ReadingPane(Vertical):
    BINDINGS = [Binding("w", "why", "Why this row", id="reading.why")]

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
        yield Static(id="suggestions", classes="-hidden")
        yield OptionList(id="reading-list")

    def show_answer(self, answer) -> None:
        from engine.coverage import coverage_line  # the one wording, shared with kb and kb boot

        sug = self.query_one("#suggestions", Static)
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
        self.show_results(answer.results)

    def clear(self) -> None:
        """No question: nothing from the last answer may linger as if it were this one's."""
        self.query_one("#suggestions", Static).add_class("-hidden")
        self._ids = []
        self.query_one(OptionList).clear_options()

    def show_results(self, results) -> None:
        ol = self.query_one(OptionList)
        highlighted = ol.highlighted
        ol.clear_options()
        self._ids = [(r.base, r.path) for r in results]
        if results:
            ol.add_options([Option(result_prompt(r), id=r.id) for r in results])
            ol.highlighted = 0 if highlighted is None else min(highlighted, len(results) - 1)
        else:
            ol.add_option(Option(Text("no file holds these words", style="dim"), disabled=True))

    def action_why(self) -> None:
        i = self.query_one(OptionList).highlighted
        if i is not None and 0 <= i < len(self._ids):
            self.post_message(self.Why(i))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        i = event.option_index
        if 0 <= i < len(self._ids):
            self.post_message(self.Open(*self._ids[i]))
