"""Text from a note or a person on its way to a terminal: one definition of what is unsafe.

A note is written by anyone with an editor, a question by anyone with a keyboard, a file name
by anyone who can create a file; an ESC or a bell inside any of them would reach the terminal
as a command, a bidi override would show text in an order other than its own, and a newline in
a name would print a line that looks like kb's own output. Every surface (the `kb` text and
JSON, the reading room, the classifier's dossier, the misses log) cleans with the functions
here, and every pattern below is built from the same named pieces, so what counts as unsafe is
decided once.
"""

from __future__ import annotations

import re
from functools import cache

# The pieces of "unsafe". C0 controls but tab and newline (those two are layout in prose), DEL
# and the C1 controls (U+009B is a CSI to many terminals), the bidi overrides and isolates,
# the Unicode line and paragraph separators (str.splitlines breaks at them, and at U+0085),
# and lone surrogates: bytes a file name held that were not UTF-8 (Python's surrogateescape).
_C0_BUT_LAYOUT = r"\x00-\x08\x0b-\x1f"
_TAB_NEWLINE = r"\t\n"
_DEL_C1 = r"\x7f-\x9f"
_BIDI = r"\u202a-\u202e\u2066-\u2069"
_SEPARATORS = r"\u2028\u2029"
_SURROGATES = r"\ud800-\udfff"

# Prose on a screen or in `kb` text: layout kept, controls and bidi not.
_CONTROL = f"[{_C0_BUT_LAYOUT}{_DEL_C1}{_BIDI}]"
# A name (a path, a base, a key) on one line, as itself: nothing may break or forge the line.
_NAME_UNSAFE = f"[{_C0_BUT_LAYOUT}{_TAB_NEWLINE}{_DEL_C1}{_SEPARATORS}{_BIDI}{_SURROGATES}]"
# What json.dumps(ensure_ascii=False) leaves raw (it escapes C0 itself) and a terminal may act
# on; and a lone surrogate, which written raw makes the output invalid UTF-8 but as \udcXX is
# valid JSON that reads back to the same string (os.fsencode then gives the name's own bytes).
_JSON_UNSAFE = f"[{_DEL_C1}{_BIDI}{_SURROGATES}]"
# What would end a log line early or add one, and the controls a log read in a terminal must
# not carry. U+2028/U+2029 are text: the logs end a line at "\n" alone (engine/notes/textfile).
_LINE_BREAKING = f"[{_C0_BUT_LAYOUT}{_TAB_NEWLINE}{_DEL_C1}]+"
REPLACEMENT = "\ufffd"
# Every character str.splitlines() ends a line at: what a value kept on one line of a note may
# not hold, and where a reader that streams a note must cut as splitlines would.
LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}
# Surrogates that are not surrogateescape's stand-ins for bytes (U+DC80-U+DCFF): a lone one
# from JSON ("\ud800") has no byte behind it to recover.
_NOT_A_BYTE = r"[\ud800-\udc7f\udd00-\udfff]"


@cache
def _pattern(source: str) -> re.Pattern[str]:
    """One of the patterns above, compiled the first time it is used: each takes ~0.3 ms to
    compile, and a one-shot `kb route --json` uses one of the five."""
    return re.compile(source)


def visible(text: str) -> str:
    """`text` with tabs as spaces and every other unsafe character shown as U+FFFD (for a screen)."""
    return _pattern(_CONTROL).sub(REPLACEMENT, text.replace("\t", "    ").replace("\r\n", "\n"))


def one_line(text: str) -> str:
    """`visible`, folded to one line: for cells and list rows."""
    return " ".join(visible(text).split())


def escaped(text: str) -> str:
    """Every unsafe character written out as \\xNN (or `?` above U+00FF): for plain-text output,
    where the reader should see that something was there and what."""
    return _pattern(_CONTROL).sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else "?", text)


def flat(text: str) -> str:
    """One line with every unsafe character a space: text that must not add a line to a prompt."""
    return " ".join(_pattern(_CONTROL).sub(" ", text).split())


def _escape(ch: str) -> str:
    code = ord(ch)
    if ch in _NAMED:
        return _NAMED[ch]
    if 0xDC80 <= code <= 0xDCFF:  # a byte the file system gave that is not UTF-8
        return f"\\x{code - 0xDC00:02x}"
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}"


def shown(name: str) -> str:
    """`name` with every character that could break or forge a line escaped (\\n, \\t, \\xe9):
    a note's path, a base, a key, a question, every value `kb` prints on a line of its own."""
    return _pattern(_NAME_UNSAFE).sub(lambda m: _escape(m.group()), name)


def json_safe(text: str) -> str:
    """JSON text with what a terminal may act on written as \\uXXXX: it parses to the same strings."""
    # Of what the pattern matches, ASCII holds only DEL: an ASCII text without one (most JSON,
    # `kb misses --json`'s megabytes) is returned without a scan in Python's regex engine.
    if text.isascii() and "\x7f" not in text:
        return text
    return _pattern(_JSON_UNSAFE).sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def log_line(text: str) -> str:
    """One line of a log that is read back a line per "\n": every run of line-breaking or
    control characters a single space (bidi marks and U+2028/U+2029 are kept: the log is
    data, not a screen)."""
    return _pattern(_LINE_BREAKING).sub(" ", repaired(text)).strip()


def as_text(name: str) -> str:
    """`name` itself when it is valid UTF-8, else escaped (shown): a folder or path named by
    bytes from another encoding, which no JSON, MCP reply or SQLite text can hold as it is."""
    return name if is_valid_text(name) else shown(name)


def is_valid_text(name: str) -> bool:
    """False for a name holding a lone surrogate: bytes that were not UTF-8 on disk."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def repaired(text: str) -> str:
    """`text` as UTF-8 can hold it: bytes that arrived undecoded (a question typed under
    LC_ALL=C, an argument holding \\xff) decoded again as UTF-8, and what still is not text
    replaced by U+FFFD. Text that already encodes comes back unchanged."""
    if is_valid_text(text):
        return text
    raw = _pattern(_NOT_A_BYTE).sub("\ufffd", text).encode("utf-8", "surrogateescape")
    return raw.decode("utf-8", "replace")
