"""A list of Rich renderables of any height, drawn line by line, with a highlighted item.

The reading list is refilled on every keystroke that changes the answer. Textual's
OptionList measures each new option (a render) to lay itself out, then renders it again
to draw it; this list renders each item once, at its width, and asks for a layout only
when the total number of lines changes. Enter (or a click) selects the highlighted item.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from typing import ClassVar, Sequence

from rich.console import RenderableType
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip


class LineList(ScrollView, can_focus=True):
    COMPONENT_CLASSES: ClassVar[set[str]] = {"line-list--highlighted", "line-list--disabled"}
    # The look of the OptionList it replaces: the highlighted item in the block-cursor
    # colours, dimmer when the list is not focused.
    DEFAULT_CSS = """
    LineList {
        height: auto;
        max-height: 100%;
        color: $foreground;
        overflow-x: hidden;
        padding: 0 1;
        background: $surface;
        & > .line-list--highlighted {
            color: $foreground;
            background: $block-cursor-blurred-background;
        }
        &:focus {
            background-tint: $foreground 5%;
            & > .line-list--highlighted {
                color: $block-cursor-foreground;
                background: $block-cursor-background;
                text-style: $block-cursor-text-style;
            }
        }
        & > .line-list--disabled { color: $text-disabled; }
    }
    """
    BINDINGS = [
        Binding("enter", "select", "Select", show=False),
        Binding("up", "cursor_up", "Up", show=False),
        Binding("down", "cursor_down", "Down", show=False),
        Binding("home", "first", "First", show=False),
        Binding("end", "last", "Last", show=False),
        Binding("pageup", "page_up", "Page up", show=False),
        Binding("pagedown", "page_down", "Page down", show=False),
    ]

    @dataclass
    class Selected(Message):
        line_list: "LineList"
        index: int

        @property
        def control(self) -> "LineList":
            return self.line_list

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self._items: list[RenderableType] = []
        self._disabled = False  # the items are a message, not choices
        self.highlighted: int | None = None
        self._lines: list[list[Strip]] | None = None  # each item's lines at `_width`
        self._starts: list[int] = []  # first line of each item
        self._width = -1

    @property
    def option_count(self) -> int:
        return len(self._items)

    def set_items(self, items: Sequence[RenderableType], *, highlighted: int | None = 0,
                  disabled: bool = False) -> None:
        self._items = list(items)
        self._disabled = disabled
        self.highlighted = None if disabled or not self._items or highlighted is None \
            else max(0, min(highlighted, len(self._items) - 1))
        self._lines = None
        self._fit()
        self.refresh()
        self._scroll_highlighted_into_view()

    def clear(self) -> None:
        self.set_items([])

    # -- drawing -----------------------------------------------------------------

    def _rendered(self) -> list[list[Strip]]:
        width = self.scrollable_content_region.width
        if self._lines is None or width != self._width:
            app = self.app
            options = app.console_options.update_width(max(1, width)).update(highlight=False, height=None)
            self._lines = [[Strip(line, width) for line in app.console.render_lines(item, options, pad=True)]
                           for item in self._items]
            self._starts, at = [], 0
            for lines in self._lines:
                self._starts.append(at)
                at += len(lines)
            self._width = width
        return self._lines

    def _fit(self) -> None:
        """The virtual height is the lines the items take: a change is a layout, none a repaint."""
        if self.scrollable_content_region.width <= 0:
            return  # not laid out yet: the resize that follows fits it
        height = sum(len(lines) for lines in self._rendered())
        if self.virtual_size.height != height:
            self.virtual_size = Size(0, height)

    def on_resize(self, event: events.Resize) -> None:
        self._fit()
        self.refresh()

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return sum(len(lines) for lines in self._rendered())

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        base = self.rich_style
        lines = self._rendered()
        line = y + round(self.scroll_y)
        index = bisect_right(self._starts, line) - 1
        if index < 0 or index >= len(lines) or line - self._starts[index] >= len(lines[index]):
            return Strip.blank(width, base)
        strip = lines[index][line - self._starts[index]]
        if self._disabled:
            strip = strip.apply_style(self.get_component_rich_style("line-list--disabled"))
        elif index == self.highlighted:
            strip = strip.apply_style(self.get_component_rich_style("line-list--highlighted"))
        return strip.apply_style(base)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self.refresh()

    def _on_focus(self, event: events.Focus) -> None:
        self.refresh()  # the highlight's colours differ with focus

    def _on_blur(self, event: events.Blur) -> None:
        self.refresh()

    # -- the highlight -----------------------------------------------------------

    def move_highlight(self, index: int) -> None:
        if self._disabled or not self._items:
            return
        index = max(0, min(len(self._items) - 1, index))
        if index != self.highlighted:
            self.highlighted = index
            self.refresh()
        self._scroll_highlighted_into_view()

    def _scroll_highlighted_into_view(self) -> None:
        if self.highlighted is None or self._lines is None or self.highlighted >= len(self._starts):
            return
        top = self._starts[self.highlighted]
        bottom = top + len(self._lines[self.highlighted])
        shown = self.scrollable_content_region.height
        if top < self.scroll_y:
            self.scroll_to(y=top, animate=False, immediate=True)
        elif bottom > self.scroll_y + shown:
            self.scroll_to(y=max(top, bottom - shown), animate=False, immediate=True)

    def _page(self) -> int:
        # Items visible at once, by the highlighted one's height (the rows are all alike).
        if self.highlighted is None or self._lines is None:
            return 1
        return max(1, self.scrollable_content_region.height // max(1, len(self._lines[self.highlighted])))

    def action_cursor_up(self) -> None:
        self.move_highlight((self.highlighted or 0) - 1)

    def action_cursor_down(self) -> None:
        self.move_highlight(0 if self.highlighted is None else self.highlighted + 1)

    def action_first(self) -> None:
        self.move_highlight(0)

    def action_last(self) -> None:
        self.move_highlight(len(self._items) - 1)

    def action_page_up(self) -> None:
        self.move_highlight((self.highlighted or 0) - self._page())

    def action_page_down(self) -> None:
        self.move_highlight((self.highlighted or 0) + self._page())

    def action_select(self) -> None:
        if self.highlighted is not None and not self._disabled:
            self.post_message(self.Selected(self, self.highlighted))

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None or self._lines is None:
            return
        index = bisect_right(self._starts, offset.y + round(self.scroll_y)) - 1
        if 0 <= index < len(self._items):
            self.move_highlight(index)
            self.action_select()
