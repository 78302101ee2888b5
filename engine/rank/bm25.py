"""BM25 as FTS5 computes it, once: k1, b, idf, a term's part of a row's score, and the ceiling.

FTS5's bm25() (fts5_aux.c, fts5Bm25Function) scores a row, per term of the query, as

    idf(term) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * D / avgdl))

with D the row's length in tokens and avgdl the average, and idf floored at IDF_FLOOR. FTS5's
own C function orders a base's search (engine/index/fts5search.py); the resident leg
(engine/index/resident.py) replays it over postings in memory and must give the same doubles, so
each function below is written in the order of FTS5's operations (tests/test_resident_identity.py);
the bound that lets a base go unsearched (`ceiling`, read from a small base's vocabulary by
`vocabulary_ceiling`; engine/index/catalogue_cache.text_ceiling asks it) reads the same idf. Each function is pure and takes floats or numpy arrays alike.
(Style after bm25s' scoring.py: one small named function for each part of the formula.)
"""

from __future__ import annotations

import math
import re

K1 = 1.2  # bm25()'s k1: how fast a term's weight saturates with its count in a row
B = 0.75  # bm25()'s b: how much a long row is discounted
IDF_FLOOR = 1e-6  # what fts5Bm25Function puts in place of an idf at or below zero


def idf(n_rows: int, n_hit: int) -> float:
    """FTS5's idf for a term in `n_hit` of `n_rows` rows, floored as fts5Bm25Function floors it."""
    value = math.log((n_rows - n_hit + 0.5) / (n_hit + 0.5))
    return IDF_FLOOR if value <= 0.0 else value


def average_length(n_tokens: int, n_rows: int) -> float:
    """avgdl: the rows' mean length in tokens (1.0 for an empty table, which scores nothing)."""
    return float(n_tokens) / float(n_rows) if n_rows else 1.0


def length_norm(length, avgdl: float):
    """The length part of the denominator, k1 * (1 - b + b * D / avgdl), per row."""
    return K1 * (1 - B + B * length / avgdl)


def term_part(term_idf: float, tf, norm):
    """A term's part of a row's score: idf * ((tf * (k1 + 1)) / (tf + norm))."""
    return term_idf * ((tf * (K1 + 1.0)) / (tf + norm))


def ceiling(n_rows: int, hits: list[int]) -> float:
    """The best (negated) bm25() any row can score for terms found in `hits` rows each, of
    `n_rows`: a term's fraction tf * (k1 + 1) / (tf + norm) is below k1 + 1 for every tf and D.
    Widened by a relative 1e-9 so rounding in FTS5's own arithmetic can never put a row above it."""
    total = 0.0
    for n_hit in hits:
        total += idf(n_rows, n_hit) * (K1 + 1)
    return total * (1 + 1e-9) + 1e-12


# A word the tokenizer keeps as exactly one token of itself (unicode61: letters and digits): the
# only stems whose row count a vocabulary's line tells.
_PLAIN_TOKEN = re.compile(r"[a-z0-9]+\Z")


def stem_rows(vocabulary: str, stems) -> list[int] | None:
    """The rows each of `stems` the vocabulary holds is in ("rows\n" then "token rows" a line,
    engine/index/opening_data.py); None when a stem is not a plain token (the tokenizer might
    cut or fold it) or a line is not of that shape."""
    hits = []
    try:
        for s in stems:
            if _PLAIN_TOKEN.match(s) is None:
                return None
            at = vocabulary.find(f"\n{s} ")
            if at >= 0:
                start = at + len(s) + 2
                hits.append(int(vocabulary[start:vocabulary.index("\n", start)]))
    except ValueError:  # a vocabulary kb did not write (a cache sealed right by hand)
        return None
    return hits


def vocabulary_ceiling(vocabulary: str, stems) -> float | None:
    """The best (negated) bm25() any row of the base whose vocabulary this is can score for
    `stems`: 0.0 when it holds none of them, None when that cannot be told from the vocabulary."""
    hits = stem_rows(vocabulary, stems)
    if not hits:
        return hits if hits is None else 0.0
    try:
        n_rows = int(vocabulary[: vocabulary.index("\n")])
    except ValueError:
        return None
    return ceiling(n_rows, hits)
