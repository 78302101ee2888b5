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
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import DataTable, Static

from .clean import name_line, one_line


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


class KeywordPane(Vertical):
    """DataTable of the keyword ranking plus the per-term arithmetic of the highlighted row."""

    BINDINGS = [
        Binding("a", "toggle_arithmetic", "Arithmetic", id="keywords.arithmetic"),
    ]

    @dataclass
    class Open(Message):
        """Enter on a row: open this file in the reader."""

        base: str
        path: str

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self._hits: dict[str, object] = {}

    def compose(self) -> ComposeResult:
        table = DataTable(id="keyword-table", cursor_type="row", zebra_stripes=False)
        table.add_column("#", key="rank", width=2)
        table.add_column("score", key="score", width=6)
        table.add_column("file and matched words", key="file")
        yield table
        yield Static(Text("the arithmetic of the highlighted file shows here", style="dim"), id="keyword-terms")

    def show_answer(self, answer) -> None:
        table = self.query_one(DataTable)
        table.clear()
        self._hits = {}
        for i, hit in enumerate(answer.keyword[:50], start=1):
            self._hits[hit.id] = hit
            table.add_row(
                Text(str(i), style="dim"),
                Text(f"{hit.score:6.2f}", style="bold"),
                _file_cell(hit),
                key=hit.id,
                height=2,
            )
        terms = self.query_one("#keyword-terms", Static)
        if answer.keyword:
            terms.update(terms_view(answer.keyword[0]))
        elif answer.terms:
            terms.update(Text("no label, title, file name or purpose holds these words: "
                              + ", ".join(one_line(x) for x in answer.terms), style="dim"))
        else:
            terms.update(Text("the question has no words left after stopwords", style="dim"))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        hit = self._hits.get(event.row_key.value) if event.row_key else None
        if hit is not None:
            self.query_one("#keyword-terms", Static).update(terms_view(hit))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        hit = self._hits.get(event.row_key.value) if event.row_key else None
        if hit is not None:
            self.post_message(self.Open(hit.base, hit.path))

    def action_toggle_arithmetic(self) -> None:
        self.query_one("#keyword-terms").toggle_class("-hidden")
