"""A table drawn line by line: fixed columns, rows of one height, a row cursor.

The keyword and agent panes replace all their rows on every keystroke. Textual's DataTable
measures every cell of every row it is given and asks for a layout when its content width
moves; this table's columns are sized from the widget's width (one flexible column takes
the rest, an "auto" column the widest cell), so replacing the rows is a repaint of the lines
on screen, and a layout only when the number of rows changes. Rows are rendered when first
drawn, so rows scrolled out of sight cost nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal, Sequence

from rich.cells import cell_len
from rich.segment import Segment
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

Justify = Literal["left", "right"]
AUTO = "auto"  # a column as wide as its widest cell


@dataclass(frozen=True)
class Column:
    label: str
    width: int | None | str = None  # cells; None: the width left over; AUTO: the widest cell
    justify: Justify = "left"


class LineTable(ScrollView, can_focus=True):
    """Header line, then rows; Up/Down/PageUp/PageDown/Home/End move the cursor, Enter selects."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"line-table--header", "line-table--cursor"}
    # The look of the DataTable it replaces: a bold header on the panel colour, the cursor row
    # in the block-cursor colours (dimmer when the table is not focused).
    DEFAULT_CSS = """
    LineTable {
        background: transparent;
        color: $foreground;
        height: auto;
        max-height: 100%;
        overflow-x: hidden;
        &:focus {
            background-tint: $foreground 5%;
            & > .line-table--cursor {
                background: $block-cursor-background;
                color: $block-cursor-foreground;
                text-style: $block-cursor-text-style;
            }
            & > .line-table--header { background-tint: $foreground 5%; }
        }
        & > .line-table--header { text-style: bold; background: $panel; color: $foreground; }
        &:ansi > .line-table--header { background: ansi_bright_blue; color: ansi_default; }
        & > .line-table--cursor {
            background: $block-cursor-blurred-background;
            color: $block-cursor-blurred-foreground;
            text-style: $block-cursor-blurred-text-style;
        }
    }
    """
    BINDINGS = [
        Binding("enter", "select_cursor", "Select", show=False),
        Binding("up", "cursor_up", "Cursor up", show=False),
        Binding("down", "cursor_down", "Cursor down", show=False),
        Binding("pageup", "page_up", "Page up", show=False),
        Binding("pagedown", "page_down", "Page down", show=False),
        Binding("home", "first_row", "Top", show=False),
        Binding("end", "last_row", "Bottom", show=False),
    ]

    @dataclass
    class _RowMessage(Message):
        table: "LineTable"
        cursor_row: int
        key: str

        @property
        def control(self) -> "LineTable":
            return self.table

    class RowHighlighted(_RowMessage):
        """The cursor moved to a row."""

    class RowSelected(_RowMessage):
        """A row was chosen (Enter, or a click)."""

    def __init__(self, columns: Sequence[Column], *, row_height: int = 1, **kw) -> None:
        super().__init__(**kw)
        self.columns = tuple(columns)
        self.row_height = row_height
        self._keys: list[str] = []
        self._cells: list[tuple[Text, ...]] = []
        self.cursor_row = 0
        self._widths: tuple[int, ...] | None = None  # per column, at `_for_width`
        self._for_width = -1
        self._strips: dict[tuple[int, bool], Strip] = {}  # (virtual line, cursor) -> strip

    # -- content -----------------------------------------------------------------

    @property
    def row_count(self) -> int:
        return len(self._keys)

    def set_rows(self, rows: Sequence[tuple[str, Sequence[Text]]]) -> None:
        """Replace every row: (key, cells). The cursor goes back to the first row, which is
        announced (as DataTable does after a refill)."""
        self._keys = [key for key, _cells in rows]
        self._cells = [tuple(cells) for _key, cells in rows]
        self._widths = None
        self._strips.clear()
        self.cursor_row = 0
        self.scroll_to(y=0, animate=False, immediate=True)
        height = 1 + len(self._keys) * self.row_height
        if self.virtual_size.height != height:
            self.virtual_size = Size(0, height)  # a layout: the table's height changed
        self.refresh()
        if self._keys:
            self.post_message(self.RowHighlighted(self, 0, self._keys[0]))

    def clear(self) -> None:
        self.set_rows([])

    # -- drawing -----------------------------------------------------------------

    def _column_widths(self, width: int) -> tuple[int, ...]:
        if self._widths is None or self._for_width != width:
            fixed = []
            for i, col in enumerate(self.columns):
                if col.width == AUTO:
                    cells = [c[i] for c in self._cells]
                    fixed.append(max([cell_len(col.label), *(max(map(cell_len, c.plain.split("\n"))) for c in cells)]))
                else:
                    fixed.append(col.width)
            padding = 2 * len(self.columns)  # one cell each side of every column
            rest = max(0, width - padding - sum(w for w in fixed if w is not None))
            self._widths = tuple(rest if w is None else w for w in fixed)
            self._for_width = width
        return self._widths

    def _line_text(self, cells: Sequence[Text], line: int, widths: tuple[int, ...], *, header: bool = False) -> Text:
        out = Text(no_wrap=True)
        for col, cell, width in zip(self.columns, cells, widths):
            parts = cell.split("\n", allow_blank=True) if "\n" in cell.plain else [cell]
            part = parts[line].copy() if line < len(parts) else Text("")
            part.no_wrap = True
            part.truncate(width, overflow="ellipsis")
            part.align("left" if header else col.justify, width)  # labels read left, as DataTable's
            out.append(" ")
            out.append_text(part)
            out.append(" ")
        return out

    def _strip(self, virtual_line: int, width: int) -> Strip:
        """Line `virtual_line` of the table below its header (row * row_height + line in row)."""
        row, line = divmod(virtual_line, self.row_height)
        cursor = row == self.cursor_row
        key = (virtual_line, cursor)
        strip = self._strips.get(key)
        if strip is None:
            text = self._line_text(self._cells[row], line, self._column_widths(width))
            post = self.get_component_rich_style("line-table--cursor") if cursor else None
            segments = Segment.apply_style(text.render(self.app.console), post_style=post)
            strip = Strip(segments).crop_extend(0, width, post)
            self._strips[key] = strip
        return strip

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        base = self.rich_style
        if y == 0:
            cells = tuple(Text(c.label) for c in self.columns)
            style = self.get_component_rich_style("line-table--header")
            header = self._line_text(cells, 0, self._column_widths(width), header=True)
            strip = Strip(Segment.apply_style(header.render(self.app.console), post_style=style))
            return strip.crop_extend(0, width, style).apply_style(base)
        virtual_line = y - 1 + round(self.scroll_y)
        if virtual_line >= len(self._keys) * self.row_height:
            return Strip.blank(width, base)
        return self._strip(virtual_line, width).apply_style(base)

    def on_resize(self, event: events.Resize) -> None:
        self._strips.clear()

    def _on_focus(self, event: events.Focus) -> None:
        self._strips.clear()  # the cursor's colours differ with focus
        self.refresh()

    def _on_blur(self, event: events.Blur) -> None:
        self._strips.clear()
        self.refresh()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._strips.clear()

    # -- the cursor --------------------------------------------------------------

    def move_cursor(self, row: int) -> None:
        if not self._keys:
            return
        row = max(0, min(len(self._keys) - 1, row))
        if row == self.cursor_row:
            return
        self.cursor_row = row
        self.refresh()
        self._scroll_cursor_into_view()
        self.post_message(self.RowHighlighted(self, row, self._keys[row]))

    def _scroll_cursor_into_view(self) -> None:
        top = self.cursor_row * self.row_height
        rows_shown = max(1, self.size.height - 1)  # below the header
        if top < self.scroll_y:
            self.scroll_to(y=top, animate=False, immediate=True)
        elif top + self.row_height > self.scroll_y + rows_shown:
            self.scroll_to(y=top + self.row_height - rows_shown, animate=False, immediate=True)

    def _page(self) -> int:
        return max(1, (self.size.height - 1) // self.row_height)

    def action_cursor_up(self) -> None:
        self.move_cursor(self.cursor_row - 1)

    def action_cursor_down(self) -> None:
        self.move_cursor(self.cursor_row + 1)

    def action_page_up(self) -> None:
        self.move_cursor(self.cursor_row - self._page())

    def action_page_down(self) -> None:
        self.move_cursor(self.cursor_row + self._page())

    def action_first_row(self) -> None:
        self.move_cursor(0)

    def action_last_row(self) -> None:
        self.move_cursor(len(self._keys) - 1)

    def action_select_cursor(self) -> None:
        if self._keys:
            self.post_message(self.RowSelected(self, self.cursor_row, self._keys[self.cursor_row]))

    def on_click(self, event: events.Click) -> None:
        # A click picks the row under it and opens it, as DataTable's does.
        offset = event.get_content_offset(self)
        if offset is None or offset.y < 1:
            return
        row = (offset.y - 1 + round(self.scroll_y)) // self.row_height
        if 0 <= row < len(self._keys):
            self.move_cursor(row)
            self.action_select_cursor()
