"""Normalisation, shared by both scorers, the gate and the suggester.

Fold accents (produção = producao), lower-case, split on anything that is not a letter or
a digit, drop one-character words and stopwords. Both scorers must see exactly the same
terms, so this is the only place words are made.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from .stopwords import STOPWORDS

# \W keeps letters of every script; "_" is a word character to re, not to a reader.
_SPLIT = re.compile(r"[\W_]+")


# Labels and questions repeat and are short; passages are long and would fill a cache with
# megabytes a long-running reading room never asks for again. Only short strings are cached.
_CACHE_MAX_CHARS = 256


def fold(text: str) -> str:
    """Lower-case and strip diacritics; what is left outside ASCII stays as it is."""
    if len(text) <= _CACHE_MAX_CHARS:
        return _fold_cached(text)
    return _fold(text)


# The characters above ASCII, found in C: a third faster than set() of the whole text, which
# hashes every character of a chunk to find its few accents (a build folds every chunk). A
# negated range compiles in 0.1 ms; what cost 8 ms was a class listing the characters.
_NON_ASCII = re.compile(r"[^\0-\177]")  # octal escapes, ASCII as a negated range; a positive range up to U+10FFFF compiles in 5 ms


def _fold(text: str) -> str:
    if text.isascii():
        return text.lower()  # NFKD leaves ASCII as it is, and it has no combining marks
    decomposed = unicodedata.normalize("NFKD", text.lower())
    # Drop the combining marks. Char by char in Python this was most of the time an index
    # build spends on accented notes (it folds every chunk to stem it); the distinct non-ASCII
    # characters are few, so they are sorted once: when all are marks (Latin text) the ASCII
    # codec drops them in C, otherwise str.translate drops just the marks.
    others = set(_NON_ASCII.findall(decomposed))
    marks = [c for c in others if unicodedata.combining(c)]
    if len(marks) == len(others):
        return decomposed.encode("ascii", "ignore").decode("ascii")
    return decomposed.translate(dict.fromkeys(map(ord, marks)))


_fold_cached = lru_cache(maxsize=65536)(_fold)


# Folded text is mostly ASCII (Latin accents fold away): there, every ASCII character that is
# not a letter or a digit becomes a space and str.split() does the rest, in C, at twice the
# speed of the pattern (an index build splits every chunk). The same words as _SPLIT: for
# ASCII, [\W_] is exactly "not a letter or a digit".
_ASCII_BREAKS = str.maketrans({chr(i): " " for i in range(128) if not chr(i).isalnum()})


def words(text: str) -> list[str]:
    """Every folded word, stopwords included (for phrase display and the suggester)."""
    folded = fold(text)
    if folded.isascii():
        return folded.translate(_ASCII_BREAKS).split()
    return [w for w in _SPLIT.split(folded) if w]


def terms(text: str) -> list[str]:
    """The words that carry meaning, in order, repeats kept."""
    folded = fold(text)
    # ASCII split as words() splits it (the same words; the pattern's empty ends are dropped
    # below anyway): every question of a miss log and most chunks, without the regex engine.
    split = folded.translate(_ASCII_BREAKS).split() if folded.isascii() else _SPLIT.split(folded)
    return [w for w in split if len(w) > 1 and w not in STOPWORDS]


def unique_terms(text: str) -> list[str]:
    """Terms in first-seen order, each once: a question that says a word twice asks once."""
    seen: dict[str, None] = {}
    for t in terms(text):
        seen.setdefault(t, None)
    return list(seen)


# A letter an apostrophe joins to a word is grammar, not a name: the `s` of `parkinson's`
# (or `parkinson 's`), the `t` of `didn’t`, the `d` of `d'água`.
_APOSTROPHES = "'’`´"
_CLITIC = re.compile(f"\\b\\w[{_APOSTROPHES}]|[{_APOSTROPHES}]\\w\\b")


def one_character_words(text: str, text_words: list[str] | None = None) -> list[str]:
    """The one-character words terms() drops that name something beside a content word:
    `vitamin d`, `plano b`, `mach 5`, `x-15`. Stopwords (`a`, `e`, `o`, `i`) and the
    letters of contractions and possessives are not among them. First-seen order, each once.

    Only the text leg asks for these (engine/rank/stemming.stem_question): its index holds every
    word, and BM25 weighs a letter by how many chunks hold it. The keyword leg, the gate and
    the suggester keep the seed's terms, which drop them."""
    if text_words is None or any(a in text for a in _APOSTROPHES):
        text_words = words(_CLITIC.sub(" ", text))  # else the text has no clitic: words(text) as given
    seen: dict[str, None] = {}
    for w in text_words:
        if len(w) == 1 and w not in STOPWORDS:
            seen.setdefault(w, None)
    return list(seen)
