"""Note text on its way to the screen: the engine's one cleaner (engine/clean.py), under the
names the panes use. Everything a note contributes to the screen passes through `clean` and
is rendered as a Text/Content object, never parsed as markup."""

from __future__ import annotations

from engine.clean import REPLACEMENT, one_line
from engine.clean import visible as clean

__all__ = ["REPLACEMENT", "clean", "one_line"]
