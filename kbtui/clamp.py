"""A Rich renderable that wraps text to the width it is given and keeps at most N lines.

A reading-list row is worth two lines of excerpt, not a paragraph: the reader is one Enter
away. The last kept line ends in an ellipsis when text was cut, so a cut is never silent.
"""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.segment import Segment
from rich.text import Text


class Clamp:
    """`indent` cells of blank before every line (what a Padding would do, for less work:
    the reading list renders every row on every refill)."""

    def __init__(self, text: Text, max_lines: int, indent: int = 0) -> None:
        self.text = text
        self.max_lines = max_lines
        self.indent = indent

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = max(1, options.max_width - self.indent)
        margin = Segment(" " * self.indent) if self.indent else None
        lines = self.text.wrap(console, width, overflow="ellipsis")
        cut = len(lines) > self.max_lines
        kept = list(lines)[: self.max_lines]
        if cut and kept:
            last = kept[-1]
            last.rstrip()
            if last.cell_len >= width:
                last.truncate(width - 1)
            last.append("…", style="dim")
        for line in kept:
            if margin is not None:
                yield margin
            yield from line.render(console)
            yield Segment.line()  # every line ends in one: Textual counts newlines for height

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(1, options.max_width)
