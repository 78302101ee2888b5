"""A Rich renderable drawn line by line, whose update is a repaint unless its height changes.

Textual's `Static.update` asks for a layout of the screen on every call (its height may
have changed), and a layout measures every auto-sized widget by rendering it. The panes
replace their sentences on each keystroke, usually with as many lines as before: this
widget renders the new content once, at its width, and only asks for a layout when the
number of lines is not the one on screen.
"""

from __future__ import annotations

from rich.console import RenderableType
from rich.segment import Segment
from rich.text import Text
from textual.geometry import Size
from textual.strip import Strip
from textual.widget import Widget


class LineView(Widget):
    DEFAULT_CSS = """
    LineView { height: auto; }
    """

    def __init__(self, content: RenderableType = "", **kw) -> None:
        super().__init__(**kw)
        self._content: RenderableType = content
        self._lines: list[Strip] | None = None  # `_content` rendered at `_width`
        self._width = -1

    @property
    def content(self) -> RenderableType:
        """What was last given to `update` (or to the constructor)."""
        return self._content

    def update(self, content: RenderableType) -> None:
        before = len(self._lines) if self._lines is not None else None
        self._content = content
        self._lines = None
        width = self.size.width
        same_height = before is not None and width > 0 and len(self._rendered(width)) == before
        self.refresh(layout=not same_height)

    def _rendered(self, width: int) -> list[Strip]:
        if self._lines is None or width != self._width:
            app = self.app
            content = Text(self._content) if isinstance(self._content, str) else self._content
            options = app.console_options.update_width(max(1, width)).update(highlight=False, height=None)
            segments = app.console.render(content, options)
            self._lines = [Strip(line, width) for line in Segment.split_and_crop_lines(segments, width, pad=True, include_new_lines=False)]
            self._width = width
        return self._lines

    def get_content_width(self, container: Size, viewport: Size) -> int:
        return container.width

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._rendered(width))

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        lines = self._rendered(width)
        base = self.rich_style
        if y >= len(lines):
            return Strip.blank(width, base)
        return lines[y].apply_style(base)
