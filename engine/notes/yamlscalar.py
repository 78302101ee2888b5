"""A YAML scalar written on one line, as front matter's `title:` holds it.

kb reads one key of a note's front matter, so it reads it without a YAML library: the
double-quoted form with its backslash escapes (`"a \\"quoted\\" word"`), the single-quoted
form with a quote doubled (`'it''s'`), and a plain value up to a comment (`Issue #42` is
`Issue`, as YAML reads it). A comment may follow a quoted value (`"x"  # draft`). What YAML
would refuse (an unknown escape, an unclosed quote, text after the closing quote) is read as
before this module: its outer quotes dropped when it has a matching pair, otherwise as written.
"""

from __future__ import annotations

# YAML 1.2's one-character escapes in a double-quoted scalar.
_ESCAPES = {
    "0": "\0", "a": "\a", "b": "\b", "t": "\t", "\t": "\t", "n": "\n", "v": "\v", "f": "\f",
    "r": "\r", "e": "\x1b", " ": " ", '"': '"', "/": "/", "\\": "\\",
    "N": "\x85", "_": "\xa0", "L": chr(0x2028), "P": chr(0x2029),
}
_HEX_DIGITS = {"x": 2, "u": 4, "U": 8}
_HEX = frozenset("0123456789abcdefABCDEF")


def one_line_scalar(value: str) -> str:
    """The text YAML reads from `value` (what follows `key:` on its line)."""
    v = value.strip()
    quote = v[:1]
    if quote not in ('"', "'"):
        return _plain(v)
    read = _double(v) if quote == '"' else _single(v)
    if read is not None:
        return read
    if len(v) > 1 and v[-1] == quote:
        return v[1:-1]  # no YAML, but plainly meant as quoted: the quotes are not the title
    return v


def _plain(v: str) -> str:
    """A plain value ends where a comment starts: `#` first, or after a blank. `Issue #42` is
    `Issue` to MkDocs (PyYAML), Jekyll and Obsidian alike, so kb's title agrees with the site's
    (docs/labels.md); `Issue#42` and `C# in a week` hold no comment."""
    if v.startswith("#"):
        return ""
    cut = min((i for i in (v.find(" #"), v.find("\t#")) if i >= 0), default=-1)
    return v if cut < 0 else v[:cut].rstrip()


def _double(v: str) -> str | None:
    out, i, n = [], 1, len(v)
    while i < n:
        ch = v[i]
        if ch == '"':
            return "".join(out) if _only_comment(v[i + 1:]) else None
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        code = v[i + 1:i + 2]
        if code in _ESCAPES:
            out.append(_ESCAPES[code])
            i += 2
            continue
        width = _HEX_DIGITS.get(code)
        digits = v[i + 2:i + 2 + width] if width else ""
        if not width or len(digits) != width or not set(digits) <= _HEX:
            return None  # an escape YAML does not know, or one cut short
        point = int(digits, 16)
        if 0xD800 <= point <= 0xDFFF or point > 0x10FFFF:
            return None  # no character: a lone surrogate could not even be written to the index
        out.append(chr(point))
        i += 2 + width
    return None  # never closed


def _single(v: str) -> str | None:
    out, i, n = [], 1, len(v)
    while i < n:
        end = v.find("'", i)
        if end < 0:
            return None  # never closed
        out.append(v[i:end])
        if v[end + 1:end + 2] == "'":  # a quote written twice is one quote
            out.append("'")
            i = end + 2
            continue
        return "".join(out) if _only_comment(v[end + 1:]) else None
    return None


def _only_comment(rest: str) -> bool:
    """What may follow a closing quote: blanks, then at most a `#` comment (PyYAML, which
    mkdocs reads front matter with, takes a `#` straight after the quote too)."""
    return rest.lstrip(" \t")[:1] in ("", "#")
