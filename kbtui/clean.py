"""Note text on its way to the screen: the engine's one cleaner (engine/clean.py), under the
names the panes use. Everything a note contributes to the screen passes through `clean` and
is rendered as a Text/Content object, never parsed as markup."""

from __future__ import annotations

from engine.clean import REPLACEMENT, one_line
from engine.clean import visible as clean
from engine.clean import shown


def name_line(name: str) -> str:
    """A note's path, an id, a base: escaped as the CLI shows it (engine/clean.py), so a newline
    or a tab in a file name reads as `\\n` or `\\t` rather than as a space that hides it."""
    return shown(name)


__all__ = ["REPLACEMENT", "clean", "name_line", "one_line"]
