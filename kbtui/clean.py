"""Note text on its way to the screen: no control character reaches the terminal raw.

A note is written by anyone with an editor; an ESC or a bell inside it would otherwise be
sent to the terminal as a command. Everything a note contributes to the screen passes
through `clean` and is rendered as a Text/Content object, never parsed as markup.
"""

from __future__ import annotations

import re

# C0 controls except newline, C1 controls, DEL. Tabs become spaces first (they are layout).
# And the bidi overrides and isolates (U+202A-E, U+2066-9): a terminal that honours them shows
# text in an order other than the note's (the CLI's `printable` refuses them too).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
REPLACEMENT = "\ufffd"


def clean(text: str) -> str:
    """`text` with tabs as spaces and every other control character made visible as U+FFFD."""
    return _CONTROL.sub(REPLACEMENT, text.replace("\t", "    ").replace("\r\n", "\n"))


def name_line(name: str) -> str:
    """A note's path, an id, a base: escaped as the CLI shows it (engine/names.py), so a newline
    or a tab in a file name reads as `\\n` or `\\t` rather than as a space that hides it."""
    from engine.names import shown

    return shown(name)


def one_line(text: str) -> str:
    """`clean`, then folded to one line: for cells and list rows."""
    return " ".join(clean(text).split())
