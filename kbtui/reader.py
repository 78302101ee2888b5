"""The reader: a note rendered as markdown, scrolled to the best passage, the question's
words highlighted. Escape returns to the answer.

The note is read, its best passage located and its markdown rendered to lines in thread
workers, so neither a slow disk nor a long note can freeze the room. The lines are shown
by one widget that draws only the rows on screen (`NoteView`), so a 20 KB note costs the
event loop no more than a short one: Textual's Markdown widget, a widget per block, held
the loop for seconds on such a note (mounting, then laying out thousands of widgets).

A long note paints the visible part first: the section the passage is in and a screen
after it are rendered and shown, then the whole note, swapped in at the same place.
Rendering is Rich's markdown, one section (heading) at a time, so a source line maps to the
row its section starts at: that is how the reader scrolls to a passage.
"""

from __future__ import annotations

import io
import threading
import time

from rich.console import Console
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.geometry import Size
from textual.screen import Screen
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Footer, Static

from engine.notes.notefiles import open_note

from .clean import clean, name_line, one_line
from .highlight import pattern_for, spans
from .messages import NoteLoaded, NoteRendered

HIGHLIGHT_STYLE = "bold reverse"  # reads in monochrome as well as in colour
WINDOW_FROM_LINES = 150  # a note longer than this paints a window first
WINDOW_SCREENS = 1  # the window: one screen height of source lines from the passage (a line is at least a row)


def _is_fence(line: str) -> bool:
    return line.lstrip().startswith(("```", "~~~"))


def heading_starts(lines: list[str]) -> list[int]:
    """0-based first lines of the headings in `lines`, as the note parser finds them
    (engine/notes/note.layout): `#` lines and underlined (setext) ones, outside code fences and
    below the front matter. An underlined heading starts at its text, above the underline."""
    from engine.notes.note import layout

    return sorted(layout([ln.rstrip("\r\n") for ln in lines])[1])


def window_of(source: str, line: int, height: int) -> tuple[int, str]:
    """(first line, text) of the part of `source` shown first: from the heading at or before
    1-based `line` (or the start; from `line`'s block when the heading is a screen or more
    above it) for `WINDOW_SCREENS` screens, ending at a blank line outside a code fence, so
    no block is cut in two."""
    lines = source.splitlines(keepends=True)
    at = max(0, min(line - 1, len(lines) - 1)) if line > 1 else 0
    heads = heading_starts(lines)
    start = max((h for h in heads if h <= at), default=0)
    screen = WINDOW_SCREENS * max(height, 10)
    if at - start >= screen:
        # A line a screen or more below its heading (a long section's last window) would
        # not be in a window from the heading, and the whole note, swapped in, keeps the
        # window's top: start at the line's block, where the whole note is cut too.
        block = paragraph_start(lines, at, start, heading=start in heads)
        start = block if block is not None else start
    end = min(len(lines), start + screen)
    fenced = sum(1 for ln in lines[start:end] if _is_fence(ln)) % 2 == 1
    while end < len(lines) and (fenced or lines[end - 1].strip()):
        if _is_fence(lines[end]):
            fenced = not fenced
        end += 1
    return start + 1, "".join(lines[start:end])


PASSAGE_LINES_MATCHED = 3  # a passage is placed by its first lines, matched in the source


def passage_line(source: str, section_line: int, text: str) -> int:
    """The 1-based line of `source` where a passage begins: a chunk is its section (which
    begins at `section_line`) or a window of a long one, cut anywhere in a line, so its first
    line is the end of a source line and the next ones are whole. `section_line` when the
    passage is not found there (the source changed since it was indexed)."""
    want = [ln.strip() for ln in text.strip().splitlines()[:PASSAGE_LINES_MATCHED]]
    if not want or not want[0]:
        return section_line
    lines = source.splitlines()
    for i in range(max(section_line - 1, 0), len(lines) - len(want) + 1):
        if lines[i].rstrip().endswith(want[0]) and all(
                lines[i + k].strip() == w for k, w in enumerate(want[1:], start=1)):
            return i + 1
    return section_line


def opening_line(source: str, section_line: int, text: str, terms) -> int:
    """Where the reader opens on a passage: the first of its lines that holds a word of the
    question (one the reader highlights), else the line it begins at."""
    start = passage_line(source, section_line, text)
    pattern = pattern_for(terms)
    lines = source.splitlines()
    for i in range(start - 1, min(len(lines), start + text.strip().count("\n"))):
        if spans(lines[i], pattern):
            return i + 1
    return start


def section_line_of(source: str, line: int) -> int:
    """The 1-based first line of the section holding 1-based `line` (1 above the first heading)."""
    return 1 + max((h for h in heading_starts(source.splitlines()) if h <= line - 1), default=0)


def paragraph_start(lines: list[str], at: int, section: int, heading: bool = True) -> int | None:
    """The 0-based first line of the block holding line `at` (a paragraph, a list, a fence),
    when it is not the first block of the section starting at line `section` (a heading's,
    or the note's first line): a line after a blank one, outside a code fence and not
    indented (code, or a list item's text), where a cut renders as the whole does. None when
    there is no such later block."""
    first = None if heading else section
    start = None
    fenced = False
    for i in range(section + 1, min(at, len(lines) - 1) + 1):
        line = lines[i]
        if _is_fence(line):
            fenced = not fenced
            if not fenced or lines[i - 1].strip():
                continue  # a closing fence, or one glued to the text above
        elif fenced or not line.strip() or line[:1] in " \t" or lines[i - 1].strip():
            continue
        start = i
        first = i if first is None else first
    return start if start is not None and start != first else None


def _sections(source: str, hit_line: int) -> list[tuple[int, str, bool]]:
    """sections_of's sections, each marked True when it starts at a heading."""
    lines = source.splitlines(keepends=True)
    heads = set(heading_starts(lines))
    cuts = set(heads)
    if 1 < hit_line <= len(lines):
        section = max((h for h in heads if h <= hit_line - 1), default=0)
        cut = paragraph_start(lines, hit_line - 1, section, heading=section in heads)
        if cut is not None:
            cuts.add(cut)
    out: list[tuple[int, str, bool]] = []
    start = 0
    for i in sorted(c for c in cuts if c > 0):
        out.append((start + 1, "".join(lines[start:i]), start in heads))
        start = i
    if start < len(lines) or not out:
        out.append((start + 1, "".join(lines[start:]), start in heads))
    return out


def sections_of(source: str, hit_line: int = 0) -> list[tuple[int, str]]:
    """(1-based first line, text) of each section of `source`: a cut before every heading
    (`#` or underlined) outside a code fence, and one before the block holding 1-based
    `hit_line`, so the reader scrolls to that block and not only to its section's start.
    The texts joined are `source` again."""
    return [(first, text) for first, text, _ in _sections(source, hit_line)]


def fields_apart(text: str) -> str:
    """`text` with a markdown hard break after a field line (Search for, Exists to, a date)
    and before one, outside code fences: written one a line, as `kb label` writes them, they
    are shown one a line, not run into a paragraph. Only line ends change (two spaces), so
    every source line is still the row it was."""
    from engine.notes.note import is_field_line

    lines = text.split("\n")
    fenced = False
    for i, line in enumerate(lines[:-1]):
        if _is_fence(line):
            fenced = not fenced
            continue
        nxt = lines[i + 1]
        if fenced or not line.strip() or not nxt.strip() or _is_fence(nxt):
            continue
        if is_field_line(line) or is_field_line(nxt):
            body = line.rstrip("\r")
            lines[i] = body.rstrip(" \t") + "  " + line[len(body):]
    return "\n".join(lines)


def render_note(text: str, first_line: int, width: int, terms,
                hit_line: int = 0) -> tuple[list[Strip], list[tuple[int, int]], list[int]]:
    """`text` (starting at source line `first_line`) rendered at `width`, section by section,
    cut at the paragraph of 1-based source `hit_line` too: (rows, (source line, row) of each
    section, rows with a highlighted word). Pure: runs in a thread."""
    from rich.markdown import Markdown as RichMarkdown  # imported here, off the event loop

    console = Console(width=max(width, 10), file=io.StringIO(), color_system="truecolor",
                      force_terminal=True, legacy_windows=False)
    options = console.options.update_width(max(width, 10))
    pattern = pattern_for(terms)
    rows: list[Strip] = []
    anchors: list[tuple[int, int]] = []
    matches: list[int] = []
    for offset, section, at_heading in _sections(text, hit_line - first_line + 1 if hit_line >= first_line else 0):
        if rows and (at_heading or rows[-1].text.strip()):
            # Rich draws no space above a heading it starts with; the block cut at the hit
            # gets the one blank row it had in the whole (a list brings its own).
            rows.append(Strip.blank(width))
        anchors.append((first_line + offset - 1, len(rows)))
        for line in console.render_lines(RichMarkdown(fields_apart(section)), options, pad=False):
            plain = "".join(seg.text for seg in line)
            found = spans(plain, pattern)
            if found:
                t = Text.assemble(*((seg.text, seg.style) for seg in line if not seg.control))
                for start, end in found:
                    t.stylize(HIGHLIGHT_STYLE, start, end)
                line = list(t.render(console))
                matches.append(len(rows))
            rows.append(Strip(line))
    return rows, anchors, matches


class NoteView(ScrollView, can_focus=True):
    """Rows rendered elsewhere, drawn a screen at a time (the Line API): its cost does not
    grow with the note."""

    # The rows are rendered to the width left beside the scrollbar: reserve it from the start
    # so the width does not change when the scrollbar appears; lines wrap, never scroll sideways.
    DEFAULT_CSS = "NoteView { scrollbar-gutter: stable; overflow-x: hidden; }"

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.rows: list[Strip] = []
        self.anchors: list[tuple[int, int]] = []
        self.source = ""  # what the rows show, for tests and copying

    def show(self, rows: list[Strip], anchors: list[tuple[int, int]], width: int) -> None:
        self.rows, self.anchors = rows, anchors
        self.virtual_size = Size(width, len(rows))
        self.refresh()

    def row_of(self, line: int) -> int:
        """The first row of the section that holds 1-based source `line`."""
        row = 0
        for first, r in self.anchors:
            if first > line:
                break
            row = r
        return row

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        i = scroll_y + y
        width = self.scrollable_content_region.width
        base = self.rich_style
        if i >= len(self.rows):
            return Strip.blank(width, base)
        return self.rows[i].crop_extend(scroll_x, scroll_x + width, None).apply_style(base)


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
        self.section_line = 0  # the first line of best_line's section: shown too when it fits
        self._matches: list[int] = []  # rows holding a highlighted word, for n and p
        self._source = ""
        self._window_out = threading.Event()  # the window's frame is out: render the rest
        self.window_start: int | None = None  # None: nothing painted yet; 0: the whole note
        self.shown_at = 0.0  # perf_counter when the note (or its window) was put on screen

    def compose(self) -> ComposeResult:
        yield Static(self._header(), id="reader-header")
        yield NoteView(id="reader-body")
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
            with open_note(base.root / self.path) as f:  # a FIFO put there since is said, not waited on
                raw = f.read()
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
                        # The chunk's line is its section's: a window of a long section
                        # starts further down, and the question's words further still.
                        line = opening_line(source, ln, body, self.terms)
                        break
        section = section_line_of(source, line) if line > 1 else 0
        self.post_message(NoteLoaded(self.base, self.path, source, line, section_line=section))

    def on_note_loaded(self, message: NoteLoaded) -> None:
        if message.error:
            self.query_one("#reader-header", Static).update(Text(f" {message.error}", style="bold red"))
            return
        self.best_line = message.line
        self.section_line = message.section_line
        self._source = message.source
        view = self.query_one(NoteView)
        width = view.scrollable_content_region.width or max(10, self.size.width - 4)
        self._typeset(message.source, message.line, width, self.size.height)

    @work(thread=True, exclusive=True, exit_on_error=False, group="render", description="render the note")
    def _typeset(self, source: str, line: int, width: int, height: int) -> None:
        hit = self.best_line  # cut at its block too, so the reader can scroll to it
        if source.count("\n") > WINDOW_FROM_LINES:
            first, text = window_of(source, line, height)
            rows, anchors, matches = render_note(text, first, width, self.terms, hit)
            self.post_message(NoteRendered(rows, anchors, matches, first, False, width))
            # The whole note's rendering competes for the interpreter with the window's
            # layout and frame: it waits for the frame (a bounded wait, never a hang).
            self._window_out.wait(0.5)
        rows, anchors, matches = render_note(source, 1, width, self.terms, hit)
        self.post_message(NoteRendered(rows, anchors, matches, 1, True, width))

    def on_note_rendered(self, message: NoteRendered) -> None:
        view = self.query_one(NoteView)
        if self.window_start == 0 and not message.whole:
            return  # the whole note came first (a re-render): keep it
        # Keep the reader where it is: on the passage at first, on the section at the top of
        # the screen after a window swap or a resize.
        line = self.best_line if self.window_start is None else self._line_at_top(view)
        view.show(message.lines, message.anchors, message.width)
        view.source = self._source if message.whole else ""
        self._matches = message.matches
        self.window_start = 0 if message.whole else message.first_line
        if not self.shown_at:
            self.shown_at = time.perf_counter()
        if not message.whole:
            self.call_after_refresh(self._window_out.set)
        target = view.row_of(line) if line > 1 else 0
        if line == self.best_line and self.section_line:
            # The section's heading stays in sight when the passage's block is on its screen.
            heading = view.row_of(self.section_line)
            if target - heading < max(view.size.height - 2, 1):
                target = heading
        # Forced: the scrollbar that allows it is worked out at the next layout, in this frame.
        view.scroll_to(y=target, animate=False, immediate=True, force=True)

    def _line_at_top(self, view: NoteView) -> int:
        """The source line of the section at the top of the screen."""
        top = view.scroll_offset.y
        line = 1
        for first, row in view.anchors:
            if row > top:
                break
            line = first
        return line

    def on_resize(self) -> None:
        view = self.query_one(NoteView)
        width = view.scrollable_content_region.width
        if self._source and view.rows and width != view.virtual_size.width:
            self._typeset(self._source, self._line_at_top(view), width, self.size.height)

    def _go_match(self, step: int) -> None:
        if not self._matches:
            self.notify("no highlighted words in this note", timeout=2)
            return
        # From where the reader is, as `less` does: the next match below the top row, or the
        # previous one above it, wrapping round.
        view = self.query_one(NoteView)
        top = view.scroll_offset.y
        if step > 0:
            row = next((r for r in self._matches if r > top), self._matches[0])
        else:
            row = next((r for r in reversed(self._matches) if r < top), self._matches[-1])
        view.scroll_to(y=row, animate=False, immediate=True, force=True)

    def action_next_match(self) -> None:
        self._go_match(1)

    def action_previous_match(self) -> None:
        self._go_match(-1)

    def action_top(self) -> None:
        self.query_one(NoteView).scroll_home(animate=False)
