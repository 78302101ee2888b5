"""Text from a note or a person on its way to a terminal: one pattern of what is unsafe.

A note is written by anyone with an editor, a question by anyone with a keyboard; an ESC or
a bell inside either would reach the terminal as a command, and a bidi override would show
text in an order other than its own. Every surface (the `kb` text, the reading room, the
classifier's dossier) cleans with the functions here, so what counts as unsafe is decided
once.
"""

from __future__ import annotations

import re

# C0 controls except tab and newline (they are layout), DEL, the C1 controls (U+009B is a CSI
# to many terminals), and the bidi overrides and isolates (U+202A-E, U+2066-9).
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
REPLACEMENT = "\ufffd"


def visible(text: str) -> str:
    """`text` with tabs as spaces and every other unsafe character shown as U+FFFD (for a screen)."""
    return CONTROL.sub(REPLACEMENT, text.replace("\t", "    ").replace("\r\n", "\n"))


def one_line(text: str) -> str:
    """`visible`, folded to one line: for cells and list rows."""
    return " ".join(visible(text).split())


def escaped(text: str) -> str:
    """Every unsafe character written out as \\xNN (or `?` above U+00FF): for plain-text output,
    where the reader should see that something was there and what."""
    return CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else "?", text)


def flat(text: str) -> str:
    """One line with every unsafe character a space: text that must not add a line to a prompt."""
    return " ".join(CONTROL.sub(" ", text).split())
