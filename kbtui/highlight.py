"""Finding the question's words in note text, accents folded the way the engine folds them.

The engine's terms are normalised (`produção` is `producao`); the note on screen is not. The
text is folded one character at a time so that every match maps back to the same offsets
in the original.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache


@lru_cache(maxsize=4096)
def _fold_char(ch: str) -> str:
    base = unicodedata.normalize("NFD", ch)[:1] or ch
    low = base.lower()
    return low if len(low) == 1 else ch


def fold(text: str) -> str:
    """`text` lower-cased with accents dropped, the same length as `text`."""
    return "".join(_fold_char(c) for c in text)


def pattern_for(terms) -> re.Pattern[str] | None:
    words = sorted({t for t in terms if t and len(t) > 1}, key=lambda w: (-len(w), w))
    if not words:
        return None
    return re.compile(r"(?<![0-9a-z])(" + "|".join(re.escape(w) for w in words) + r")(?![0-9a-z])")


def spans(text: str, pattern: re.Pattern[str] | None) -> list[tuple[int, int]]:
    """(start, end) of every whole-word match of `pattern` in `text`, accents folded."""
    if pattern is None or not text:
        return []
    return [m.span() for m in pattern.finditer(fold(text))]
