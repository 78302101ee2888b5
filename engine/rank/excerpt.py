"""Short excerpts of a passage around the words that matched, for a list a person scans."""

from __future__ import annotations

import re

from .normalize import fold

EXCERPT_CHARS = 160
_WS = re.compile(r"\s+")
_LINK = re.compile(r"!?\[([^\[\]]*)\]\([^()]*\)")  # no `[`/`(` inside: linear on hostile text
_WIKI = re.compile(r"\[\[([^\[\]|]*\|)?([^\[\]]*)\]\]")
_EMPHASIS = re.compile(r"(\*\*|__|`)")


def plain(text: str) -> str:
    """Markdown as a person reads it: link text without its target, no emphasis marks."""
    # Each pattern only where its marks are: most chunks have none, and a substring test is
    # a fraction of a regex scan (an index build runs this on every chunk).
    if "](" in text:
        text = _LINK.sub(r"\1", text)
    if "[[" in text:
        text = _WIKI.sub(r"\2", text)
    if "**" in text or "__" in text or "`" in text:
        text = _EMPHASIS.sub("", text)
    return text


def excerpt(heading_path: str, text: str, terms: list[str], width: int = EXCERPT_CHARS) -> str:
    """`Heading: ... the sentence with a matched word ...`, about `width` characters of text."""
    flat = _WS.sub(" ", plain(text)).strip()
    folded = fold(flat)
    pos = -1
    for t in terms:
        at = next(_bounded(folded, t), -1)
        if at >= 0 and (pos < 0 or at < pos):
            pos = at
    if pos < 0 or len(flat) <= width:
        body = flat[:width]
        tail = " ..." if len(flat) > width else ""
        return f"{heading_path}: {body}{tail}" if heading_path else body + tail
    # Start at the sentence holding the first match, so the excerpt reads as prose; when
    # that sentence began long before the match, start at a word boundary near it.
    sentence = flat.rfind(". ", 0, pos)
    sentence = 0 if sentence < 0 else sentence + 2
    if pos - sentence > width // 2:
        start = flat.find(" ", pos - width // 2, pos) + 1
    else:
        start = sentence
    end = min(len(flat), start + width)
    if end < len(flat):
        cut = flat.rfind(" ", start, end)
        end = cut if cut > start else end
    body = flat[start:end]
    lead = "... " if start > 0 else ""
    tail = " ..." if end < len(flat) else ""
    return f"{heading_path}: {lead}{body}{tail}" if heading_path else f"{lead}{body}{tail}"


def count_hits(text: str, terms: list[str]) -> int:
    folded = fold(text)
    return sum(1 for t in terms for _ in _bounded(folded, t))


_ALNUM = frozenset("0123456789abcdefghijklmnopqrstuvwxyz")


def _bounded(folded: str, t: str):
    """Where `t` stands as a word (no ASCII letter or digit either side), left to right and
    not overlapping: re's `(?<![0-9a-z])t(?![0-9a-z])`, without compiling a pattern per word
    (a pasted question of 25,000 distinct words compiled 125,000 of them: 4 s an answer)."""
    n, k = len(folded), len(t)
    i = folded.find(t)
    while i >= 0:
        if (i == 0 or folded[i - 1] not in _ALNUM) and (i + k >= n or folded[i + k] not in _ALNUM):
            yield i
            i = folded.find(t, i + k)
        else:
            i = folded.find(t, i + 1)
