"""The keyword ranking: each file's score and matched words, and the arithmetic behind one.

The arithmetic line under the table follows the highlighted row, so moving the cursor is
how a person sees why a file scored what it did: each term's weights, times its idf.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message

from .clean import name_line, one_line
from .line_table import Column, LineTable
from .line_view import LineView
from .pane import Pane

# Rows of the keyword table: the files a person compares by eye (the CLI lists them all).
KEYWORD_ROWS = 20


def terms_rows(hit) -> list[tuple[str, str, str]]:
    """(term, weights, arithmetic) per term of `hit`'s score, then the total."""
    rows = []
    total = 0.0
    for term, how, weight, idf in hit.terms:
        pts = weight * idf
        total += pts
        rows.append((one_line(term), one_line(how), f"{weight:g} × {idf:.4f} = {pts:.2f}"))
    rows.append(("total", "", f"{total:.2f}"))
    return rows


def terms_table(hit) -> Table:
    """`hit`'s score as a sum, one term a row: which weights applied, times its idf."""
    table = Table.grid(padding=(0, 1), expand=True)
    table.add_column(style="bold", no_wrap=True, max_width=24, overflow="ellipsis")
    table.add_column(ratio=1)
    table.add_column(no_wrap=True, justify="right")
    table.title = None
    rows = terms_rows(hit)
    table.add_row(Text("word", style="dim"), Text("weights that applied", style="dim"),
                  Text("sum × idf = points", style="dim"))
    for term, how, arith in rows[:-1]:
        table.add_row(term, how, arith)
    total = float(rows[-1][2])
    table.add_row(Text("total", style="dim"), "", Text(f"{total:.2f}", style="bold"))
    if abs(total - hit.score) > 0.005:
        # Should not happen; if it does, say so rather than print a sum that does not add up.
        table.add_row("", Text(f"the engine says {hit.score:.2f}", style="bold red"), "")
    return table


def terms_view(hit) -> Group:
    head = Text(no_wrap=True, overflow="ellipsis")
    head.append(name_line(hit.id), style="bold")
    if hit.title:
        head.append(f"  {one_line(hit.title)}", style="italic dim")
    return Group(head, terms_table(hit))


def _file_cell(hit) -> Text:
    # Two lines, so the matched words are never the part a narrow pane cuts off.
    t = Text(no_wrap=True, overflow="ellipsis")
    t.append(name_line(hit.id))
    t.append("\n")
    t.append(", ".join(one_line(m) for m in hit.matched), style="italic dim")
    return t


class KeywordPane(Pane):
    """Table of the keyword ranking plus the per-term arithmetic of the highlighted row."""

    NAME, TITLE, FOCUS, GRID_SLOT = "keywords", "Keywords", "#keyword-table", 0
    HELP = "which labels matched the question, and the sum behind each score"
    # Space says what it will do: two bindings on one key, the one that applies is shown.
    # Not a letter: a letter typed on a pane starts a question (main_screen.on_key).
    BINDINGS = [
        Binding("space", "hide_arithmetic", "Hide sums", id="keywords.hide_arithmetic"),
        Binding("space", "show_arithmetic", "Show sums", id="keywords.show_arithmetic"),
    ]
    DEFAULT_CSS = """
    KeywordPane #keyword-table { height: 1fr; }
    KeywordPane #keyword-terms {
        height: auto; max-height: 9; border-top: dashed $foreground 20%; padding: 0 1;
    }
    KeywordPane #keyword-terms.-hidden { display: none; }
    MainScreen.-wide.-tall KeywordPane { column-span: 5; }
    """

    @dataclass
    class Open(Message):
        """Enter on a row: open this file in the reader."""

        base: str
        path: str

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self._hits: dict[str, object] = {}
        self._terms_of: object = None  # the hit whose arithmetic is shown

    def _show_terms(self, hit) -> None:
        # The table re-announces its highlighted row after every refill: the same row's
        # arithmetic again (or an equal one) would be a layout and a repaint for nothing.
        if hit == self._terms_of:
            return
        self._terms_of = hit
        self.query_one("#keyword-terms", LineView).update(terms_view(hit))

    def compose(self) -> ComposeResult:
        yield LineTable([Column("#", 2), Column("score", 6), Column("file and matched words")], row_height=2,
                        id="keyword-table")
        yield LineView(Text("the arithmetic of the highlighted file shows here", style="dim"), id="keyword-terms")

    def show_answer(self, answer) -> None:
        hits = answer.keyword[:KEYWORD_ROWS]
        self._hits = {hit.id: hit for hit in hits}
        self.query_one(LineTable).set_rows([
            (hit.id, (Text(str(i), style="dim"), Text(f"{hit.score:6.2f}", style="bold"), _file_cell(hit)))
            for i, hit in enumerate(hits, start=1)
        ])
        terms = self.query_one("#keyword-terms", LineView)
        if answer.keyword:
            self._show_terms(answer.keyword[0])
            return
        self._terms_of = None
        if answer.indexed.entries == 0:
            # Titles and file names count only on labelled notes: none are, so nothing was read.
            terms.update(Text("no note has a Search for: line yet, so the keyword scorer read nothing; "
                              "the reading list is full text only (kb label proposes labels)", style="dim"))
        elif answer.terms:
            terms.update(Text("no label, title, file name or purpose holds these words: "
                              + ", ".join(one_line(x) for x in answer.terms), style="dim"))
        else:
            terms.update(Text("the question has no words left after stopwords", style="dim"))

    def signature(self, answer) -> object:
        return tuple(answer.keyword[:KEYWORD_ROWS]), tuple(answer.terms)

    def on_line_table_row_highlighted(self, event: LineTable.RowHighlighted) -> None:
        hit = self._hits.get(event.key)
        if hit is not None:
            self._show_terms(hit)

    def on_line_table_row_selected(self, event: LineTable.RowSelected) -> None:
        event.stop()
        hit = self._hits.get(event.key)
        if hit is not None:
            self.post_message(self.Open(hit.base, hit.path))

    def _arithmetic_shown(self) -> bool:
        return not self.query_one("#keyword-terms").has_class("-hidden")

    def check_action(self, action: str, parameters) -> bool | None:
        if action == "hide_arithmetic":
            return self._arithmetic_shown()
        if action == "show_arithmetic":
            return not self._arithmetic_shown()
        return True

    def action_hide_arithmetic(self) -> None:
        self.query_one("#keyword-terms").add_class("-hidden")
        self.refresh_bindings()

    def action_show_arithmetic(self) -> None:
        self.query_one("#keyword-terms").remove_class("-hidden")
        self.refresh_bindings()
