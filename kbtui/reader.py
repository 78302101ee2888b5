"""The reader: a note rendered as markdown, scrolled to the best passage, the question's
words highlighted. Escape returns to the answer.

The note is read and its best passage located in a thread worker (a file read and an index
lookup), so a note on a slow disk cannot freeze the room.

A long note paints the visible part first: Textual's Markdown is a widget per block, and a
20 KB note is thousands of widgets to mount and lay out (about 2 s here). So the passage the
reader opens at, and a few screens after it, are rendered alone into a small window; the
whole note is built hidden behind it and swapped in when ready, scrolled to the same place.
"""

from __future__ import annotations

import time
from functools import partial

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Markdown, Static
from textual.widgets.markdown import MarkdownBlock

from .clean import clean, name_line, one_line
from .highlight import pattern_for, spans
from .messages import NoteLoaded

HIGHLIGHT_STYLE = "bold reverse"  # reads in monochrome as well as in colour
WINDOW_FRAMES_S = 0.05  # after the window is laid out: three frames at 60 Hz for it to be displayed
WINDOW_FROM_LINES = 150  # a note longer than this paints a window first
WINDOW_SCREENS = 1  # the window: one screen height of source lines from the passage (a line is at least a row)


def window_of(source: str, line: int, height: int) -> tuple[int, str]:
    """(first line, text) of the part of `source` shown first: from the heading at or before
    1-based `line` (or the start) for `WINDOW_SCREENS` screens, ending at a blank line outside
    a code fence, so no block is cut in two."""
    lines = source.splitlines(keepends=True)
    start = max(0, min(line - 1, len(lines) - 1)) if line > 1 else 0
    while start > 0 and not lines[start].lstrip().startswith("#"):
        start -= 1
    end = min(len(lines), start + WINDOW_SCREENS * max(height, 10))
    fenced = sum(1 for ln in lines[start:end] if ln.lstrip().startswith(("```", "~~~"))) % 2 == 1
    while end < len(lines) and (fenced or lines[end - 1].strip()):
        if lines[end].lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        end += 1
    return start + 1, "".join(lines[start:end])


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
        self.window_start: int | None = None  # None: nothing painted yet; 0: the whole note
        self.shown_at = 0.0  # perf_counter when the note (or its window) was put on screen

    def compose(self) -> ComposeResult:
        yield Static(self._header(), id="reader-header")
        with VerticalScroll(id="reader-body"):
            yield Markdown(id="reader-window")  # a long note's first paint
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
        md = self.query_one("#reader-markdown", Markdown)
        window = self.query_one("#reader-window", Markdown)
        if message.error:
            window.display = False
            await md.update("")
            self.query_one("#reader-header", Static).update(Text(f" {message.error}", style="bold red"))
            return
        self.best_line = message.line
        if message.source.count("\n") > WINDOW_FROM_LINES:
            first, text = window_of(message.source, message.line, self.size.height)
            md.display = False
            await window.update(text)
            self._highlight(window)
            self.window_start = first  # the source line the window begins at
            self.shown_at = time.perf_counter()
            # The whole note is built once the window has been drawn, never before it: its
            # mounting holds the event loop for a while, and the window must be out by then.
            self.call_after_refresh(self.set_timer, WINDOW_FRAMES_S, partial(self._build_whole, message.source))
            return
        window.display = False
        await md.update(message.source)
        self.window_start = 0
        self.shown_at = time.perf_counter()
        self._highlight(md)
        self.call_after_refresh(self._scroll_to_best)

    async def _build_whole(self, source: str) -> None:
        md = self.query_one("#reader-markdown", Markdown)
        await md.update(source)  # built hidden behind the window
        with self.app.batch_update():
            self.query_one("#reader-window", Markdown).display = False
            md.display = True
        self.window_start = 0
        self._highlight(md)
        self.call_after_refresh(self._scroll_to_best)

    def _highlight(self, md: Markdown) -> None:
        pattern = pattern_for(self.terms)
        self._matches = []
        if pattern is None:
            return
        for block in md.query(MarkdownBlock):
            content = block.content
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
        for block in self.query_one("#reader-markdown", Markdown).query(MarkdownBlock):
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
