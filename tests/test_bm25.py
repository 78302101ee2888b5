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


def _vocabulary() -> str:
    """The vocabulary a small base's opening keeps, made as engine/index/opening_data.py makes it."""
    con = sqlite3.connect(":memory:")
    con.execute("CREATE VIRTUAL TABLE t USING fts5(body)")
    con.executemany("INSERT INTO t(rowid, body) VALUES (?, ?)", list(enumerate(ROWS, 1)))
    con.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'row')")
    return f"{len(ROWS)}\n" + "".join(f"{t} {d}\n" for t, d in con.execute("SELECT term, doc FROM v"))


def test_the_vocabulary_ceiling_is_the_ceiling_of_its_row_counts():
    """What text_ceiling reads from an opening's vocabulary: each stem's rows, then the bound."""
    vocabulary = _vocabulary()
    assert bm25.stem_rows(vocabulary, ["beta", "gamma", "zeta"]) == [2, 2]
    assert bm25.vocabulary_ceiling(vocabulary, ["beta", "gamma"]) == bm25.ceiling(len(ROWS), [2, 2])
    fts, _ = _scores(["beta", "gamma"])
    assert max(fts) <= bm25.vocabulary_ceiling(vocabulary, ["beta", "gamma"])
    assert bm25.vocabulary_ceiling(vocabulary, ["zeta"]) == 0.0  # the base holds none: not searched


def test_a_vocabulary_that_cannot_tell_says_so():
    """None (search the base) for a stem the tokenizer might cut, or a vocabulary kb did not write."""
    assert bm25.vocabulary_ceiling(_vocabulary(), ["beta-gamma"]) is None
    assert bm25.vocabulary_ceiling("5\nbeta two\n", ["beta"]) is None
    assert bm25.vocabulary_ceiling("five\nbeta 2\n", ["beta"]) is None
    assert bm25.vocabulary_ceiling("five\nbeta 2\n", ["zeta"]) == 0.0  # as before: no hit, no row count read
