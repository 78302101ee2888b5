"""engine/rank/bm25.py's named parts add up to FTS5's own bm25() on a real FTS5 table, to the
double; and the ceiling is above every row's score (the bound a base is skipped by)."""

from __future__ import annotations

import sqlite3

from engine.rank import bm25

ROWS = ["alpha beta beta gamma", "beta", "gamma gamma gamma delta delta", "alpha alpha", "epsilon"]


def _scores(query_terms: list[str]) -> tuple[list[float], list[float]]:
    con = sqlite3.connect(":memory:")
    con.execute("CREATE VIRTUAL TABLE t USING fts5(body)")
    con.executemany("INSERT INTO t(rowid, body) VALUES (?, ?)", list(enumerate(ROWS, 1)))
    expr = " OR ".join(f'"{t}"' for t in query_terms)
    fts = dict(con.execute("SELECT rowid, -bm25(t) FROM t WHERE t MATCH ?", (expr,)))
    docs = [r.split() for r in ROWS]
    avgdl = bm25.average_length(sum(len(d) for d in docs), len(docs))
    ours = {}
    for rowid, words in enumerate(docs, 1):
        if rowid not in fts:
            continue
        norm = bm25.length_norm(len(words), avgdl)
        total = 0.0
        for term in query_terms:
            n_hit = sum(term in d for d in docs)
            tf = words.count(term)
            total += bm25.term_part(bm25.idf(len(docs), n_hit), float(tf), norm) if n_hit else 0.0
        ours[rowid] = total
    keys = sorted(fts)
    return [fts[k] for k in keys], [ours[k] for k in keys]


def test_the_parts_are_fts5s_bm25():
    for terms in (["alpha"], ["beta", "gamma"], ["gamma", "delta", "alpha"]):
        theirs, ours = _scores(terms)
        assert theirs and [round(x, 12) for x in ours] == [round(x, 12) for x in theirs], terms


def test_a_term_in_most_rows_takes_the_floored_idf():
    assert bm25.idf(5, 4) == bm25.IDF_FLOOR and bm25.idf(5, 1) > 0


def test_the_ceiling_is_above_every_row():
    terms = ["beta", "gamma"]
    theirs, _ = _scores(terms)
    hits = [sum(t in r.split() for r in ROWS) for t in terms]
    assert max(theirs) < bm25.ceiling(len(ROWS), hits)
