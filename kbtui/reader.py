"""The reader: a note rendered as markdown, scrolled to the best passage, the question's
words highlighted. Escape returns to the answer.

The note is read and its best passage located in a thread worker (a file read and an index
lookup), so a note on a slow disk cannot freeze the room.
"""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Markdown, Static
from textual.widgets._markdown import MarkdownBlock

from .clean import clean, name_line, one_line
from .highlight import pattern_for, spans
from .messages import NoteLoaded

HIGHLIGHT_STYLE = "bold reverse"  # reads in monochrome as well as in colour


class ReaderScreen(Screen):
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="reader.back"),
        Binding("n", "next_match", "Next match", id="reader.next"),
        Binding("p", "previous_match", "Prev match", id="reader.previous"),
        Binding("home", "top", "Top", show=False, id="reader.top"),
    ]

    def __init__(self, base: str, path: str, answer=None, *, line: int | None = None) -> None:
        super().__init__()
        self.base, self.path, self.answer = base, path, answer
        self.forced_line = line
        self.terms = tuple(answer.terms) if answer is not None else ()
        self.best_line = 0
        self._matches: list[MarkdownBlock] = []
        self._match_i = -1

    def compose(self) -> ComposeResult:
        yield Static(self._header(), id="reader-header")
        with VerticalScroll(id="reader-body"):
            yield Markdown(id="reader-markdown")
        yield Footer(compact=True)

    def _header(self) -> Text:
        t = Text(no_wrap=True, overflow="ellipsis")
        t.append(f" {name_line(self.base)} ", style="bold reverse")
        t.append(f" {name_line(self.path)}", style="bold")
        row = self._row()
        if row is not None:
            t.append(f"   {one_line(row.why)}", style="italic dim")
        if self.terms:
            t.append("   words: ", style="dim")
            t.append(", ".join(one_line(x) for x in self.terms), style="bold")
        return t

    def _row(self):
        if self.answer is None:
            return None
        for r in self.answer.results:
            if r.base == self.base and r.path == self.path:
                return r
        return None

    def on_mount(self) -> None:
        self.query_one("#reader-body").focus()
        row = self._row()
        passage = row.passages[0] if row is not None and row.passages else None
        self._load(passage)

    @work(thread=True, exclusive=True, exit_on_error=False, group="reader", description="open the note")
    def _load(self, passage) -> None:
        memory = self.app.memory
        base = next((b for b in memory.fleet.bases if b.name == self.base), None)
        if base is None:
            self.post_message(NoteLoaded(self.base, self.path, "", 0, f"{self.base}: no such agent"))
            return
        try:
            raw = (base.root / self.path).read_bytes()
        except OSError as e:
            self.post_message(NoteLoaded(self.base, self.path, "", 0, f"cannot read {self.path}: {e.strerror or e}"))
            return
        source = clean(raw.decode("utf-8", errors="replace"))
        line = self.forced_line or 0
        if not line:
            chunks = memory.chunks_of(self.base, self.path)
            if passage is None and self.terms:
                best = memory.passages_for(self.base, self.path, list(self.terms), limit=1)
                passage = best[0] if best else None
            if passage is not None:
                for hp, body, ln in chunks:
                    if hp == passage.heading_path and body == passage.text:
                        line = ln
                        break
        self.post_message(NoteLoaded(self.base, self.path, source, line))

    async def on_note_loaded(self, message: NoteLoaded) -> None:
        md = self.query_one(Markdown)
        if message.error:
            await md.update("")
            self.query_one("#reader-header", Static).update(Text(f" {message.error}", style="bold red"))
            return
        await md.update(message.source)
        self.best_line = message.line
        self._highlight(md)
        self.call_after_refresh(self._scroll_to_best)

    def _highlight(self, md: Markdown) -> None:
        pattern = pattern_for(self.terms)
        self._matches = []
        if pattern is None:
            return
        for block in md.query(MarkdownBlock):
            content = getattr(block, "_content", None)
            if not isinstance(content, Content) or not content.plain:
                continue
            found = spans(content.plain, pattern)
            if not found:
                continue
            for start, end in found:
                content = content.stylize(HIGHLIGHT_STYLE, start, end)
            block.set_content(content)
            self._matches.append(block)

    def _block_at(self, line: int):
        """The block whose source starts at or just before 1-based `line`."""
        best = None
        for block in self.query_one(Markdown).query(MarkdownBlock):
            start, end = block.source_range
            if start <= line - 1 < max(end, start + 1):
                best = block  # later (deeper) blocks refine the match
            elif start > line - 1 and best is None:
                return block
        return best

    def _scroll_to_best(self) -> None:
        if self.best_line <= 1:
            return
        block = self._block_at(self.best_line)
        if block is not None:
            self.query_one("#reader-body").scroll_to_widget(block, top=True, animate=False)

    def _go_match(self, step: int) -> None:
        if not self._matches:
            self.notify("no highlighted words in this note", timeout=2)
            return
        self._match_i = (self._match_i + step) % len(self._matches)
        self.query_one("#reader-body").scroll_to_widget(self._matches[self._match_i], top=True, animate=False)

    def action_next_match(self) -> None:
        self._go_match(1)

    def action_previous_match(self) -> None:
        self._go_match(-1)

    def action_top(self) -> None:
        self.query_one("#reader-body").scroll_home(animate=False)
