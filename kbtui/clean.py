"""Note text on its way to the screen: no control character reaches the terminal raw.

A note is written by anyone with an editor; an ESC or a bell inside it would otherwise be
sent to the terminal as a command. Everything a note contributes to the screen passes
through `clean` and is rendered as a Text/Content object, never parsed as markup. The
pattern is the engine's (`engine.render.CONTROL`), so the CLI and the room refuse the same
characters; the room shows them as U+FFFD where the CLI prints \\xNN.
"""

from __future__ import annotations

from engine.render import CONTROL

REPLACEMENT = "\ufffd"


def clean(text: str) -> str:
    """`text` with tabs as spaces and every other control character made visible as U+FFFD."""
    return CONTROL.sub(REPLACEMENT, text.replace("\t", "    ").replace("\r\n", "\n"))


def one_line(text: str) -> str:
    """`clean`, then folded to one line: for cells and list rows."""
    return " ".join(clean(text).split())
