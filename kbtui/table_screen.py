"""One skeleton for the screens that are a table and a detail box (check, misses, roster).

A title line that wraps rather than cuts, a DataTable whose last ("flex") column takes the
width that is left and ends in an ellipsis when its text does not fit (so nothing scrolls
sideways at 80 columns), a detail box under it, Escape back. A subclass names its columns,
loads its rows in a worker, and hands them to `fill`.
"""

from __future__ import annotations

from typing import ClassVar

from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

Cell = Text


class TableScreen(Screen):
    NAME: ClassVar[str] = ""  # the screen's name in `app.action_show` and the ids below
    TITLE: ClassVar[str] = ""
    # (label, key, width); width None: as wide as its widest cell. The last column is the flex one.
    COLUMNS: ClassVar[tuple[tuple[str, str, int | None], ...]] = ()

    BINDINGS = [Binding("escape", "app.pop_screen", "Back", id="table.back")]
    DEFAULT_CSS = """
    TableScreen .screen-title { height: auto; padding: 0 1; }
    TableScreen DataTable { height: 1fr; overflow-x: hidden; }
    TableScreen .detail { height: auto; max-height: 10; border-top: dashed $foreground 20%; padding: 0 1; }
    """

    def __init__(self) -> None:
        super().__init__()
        self._rows: list[tuple[str, list[Cell]]] = []

    def compose(self) -> ComposeResult:
        yield Static(Text(f" {self.TITLE} ", style="bold reverse"), id=f"{self.NAME}-title", classes="screen-title")
        table = DataTable(id=f"{self.NAME}-table", cursor_type="row")
        for label, key, width in self.COLUMNS:
            table.add_column(label, key=key, width=width)
        yield table
        yield Static(id=f"{self.NAME}-detail", classes="detail")
        yield Footer(compact=True)

    @property
    def table(self) -> DataTable:
        return self.query_one(f"#{self.NAME}-table", DataTable)

    @property
    def detail(self) -> Static:
        return self.query_one(f"#{self.NAME}-detail", Static)

    def set_title(self, text: Text) -> None:
        self.query_one(f"#{self.NAME}-title", Static).update(text)

    def title_text(self) -> Text:
        return Text(f" {self.TITLE} ", style="bold reverse")

    def on_mount(self) -> None:
        self.table.focus()
        self.load()

    def load(self) -> None:
        """Start the worker that reads the rows; its message handler calls `fill`."""

    def fill(self, rows: list[tuple[str, list[Cell]]]) -> None:
        """Show `rows` ((key, cells) each), the flex column cut to the width that is left."""
        self._rows = rows
        table = self.table
        cursor = table.cursor_row
        table.clear()
        flex = self._flex_width(rows)
        for key, cells in rows:
            last = cells[-1].copy()
            if flex and last.cell_len > flex:
                last.truncate(flex, overflow="ellipsis")
            table.add_row(*cells[:-1], last, key=key)
        if rows:
            table.move_cursor(row=min(cursor, len(rows) - 1))

    def _flex_width(self, rows) -> int:
        widths = []
        for i, (label, _key, width) in enumerate(self.COLUMNS[:-1]):
            widths.append(width or max([cell_len(label), *(r[1][i].cell_len for r in rows)]))
        pad = 2 * self.table.cell_padding
        room = self.table.size.width or self.app.size.width
        # 2 for the vertical scrollbar, which comes when the rows outgrow the table
        return max(8, room - sum(widths) - pad * len(self.COLUMNS) - 2)

    def on_resize(self) -> None:
        if self._rows:
            self.call_after_refresh(self.fill, self._rows)
