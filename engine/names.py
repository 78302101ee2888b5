"""How a name (a note's path, a base, a key) is shown on a text surface: on one line, as itself.

A file name may hold any byte but `/` and NUL. A newline in one would print a second line
that looks like kb's own output (`verdict:  hit, ...`); a byte that is not UTF-8 arrives from
the file system as a lone surrogate (U+DCxx, Python's surrogateescape) and makes every write
of it to a terminal, a JSON line or SQLite raise. Every name therefore passes through `shown`
before it is printed or quoted in a problem line: each such character becomes a visible escape.
`repaired` is the same care for text that is kept (a question), `os_error_line` for a failure.
"""

from __future__ import annotations

import os
import re

# C0 controls (tab and newline included), DEL, C1 controls, the line and paragraph separators,
# the bidi overrides and isolates, and lone surrogates.
_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


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
    """`name` with every character that could break or forge a line escaped (\\n, \\t, \\xe9)."""
    return _UNSAFE.sub(lambda m: _escape(m.group()), name)


def is_valid_text(name: str) -> bool:
    """False for a name holding a lone surrogate: bytes that were not UTF-8 on disk."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


# Surrogates that are not surrogateescape's stand-ins for bytes (U+DC80-U+DCFF): a lone one
# from JSON ("\ud800") has no byte behind it to recover.
_NOT_A_BYTE = re.compile(r"[\ud800-\udc7f\udd00-\udfff]")


def repaired(text: str) -> str:
    """`text` as UTF-8 can hold it: bytes that arrived undecoded (a question typed under
    LC_ALL=C, an argument holding \\xff) decoded again as UTF-8, and what still is not text
    replaced by U+FFFD. Text that already encodes comes back unchanged."""
    if is_valid_text(text):
        return text
    raw = _NOT_A_BYTE.sub("\ufffd", text).encode("utf-8", "surrogateescape")
    return raw.decode("utf-8", "replace")


def os_error_line(e: OSError) -> str:
    """A file system failure as one line: the file, shown, then the reason."""
    name = e.filename
    where = f"{shown(os.fsdecode(name))}: " if isinstance(name, (str, bytes, os.PathLike)) and name else ""
    return f"{where}{e.strerror or e}"
