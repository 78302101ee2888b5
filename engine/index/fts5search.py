"""The FTS5 text search: files ranked by BM25 at their best chunk, read from the index file.

A question's stems become one FTS5 expression (every term quoted: words, never query syntax).
Above PRUNE_ABOVE_CHUNKS chunks the commonest terms leave it first ("How the Catalogue Ranks"),
judged from FTS5's own averages record, whose varint format is decoded here. Scores are
SQLite's bm25(), lower is better; engine/index/textsearch.py turns them round at the border.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from .indexschema import FILE_SHIFT, meta_get
from ..rank.stemming import stem_question, word_stems


PRUNE_ABOVE_CHUNKS = 10_000  # "How the Catalogue Ranks": above this, the commonest terms leave the expression
PRUNE_DF_FRACTION = 0.25  # a term in more than a quarter of the chunks moves nothing in BM25
# FTS5's own record of its row count and each column's token total (fts5_index.c,
# FTS5_AVERAGES_ROWID): the chunk count without `count(*)`, which reads every row.
FTS5_AVERAGES_ID = 1
# Above SHORTCUT_ABOVE_CHUNKS a base's search first reads its SHORTCUT_CHUNKS best chunks (at
# least 4 per file asked for) and groups them by file, and keeps that only when it provably
# is the exact query's answer (best_files). Below, grouping every match is as fast (measured
# at 7,000 chunks) and the shortcut would mostly fall back.
SHORTCUT_ABOVE_CHUNKS = 10_000
SHORTCUT_CHUNKS = 200
# bm25()'s k1, b, idf and ceiling: engine/rank/bm25.py, the one place they are written.


def fts_expression(terms: list[str]) -> str:
    """Every term quoted: a question's words are words, never FTS5 query syntax.

    A NUL would end the expression inside its quotes (FTS5 reads a C string): it is dropped.
    """
    return " OR ".join('"' + t.replace("\x00", "").replace('"', '""') + '"' for t in terms)


def varint(blob: bytes, i: int = 0) -> tuple[int, int]:
    """SQLite's varint (what FTS5 writes): big-endian 7-bit groups, a 9th byte of 8 bits."""
    v = 0
    for k in range(9):
        c = blob[i]
        i += 1
        if k == 8:
            return (v << 8) | c, i
        v = (v << 7) | (c & 0x7F)
        if not c & 0x80:
            return v, i
    return v, i  # pragma: no cover - the loop always returns


def averages(con: sqlite3.Connection) -> bytes:
    row = con.execute("SELECT block FROM chunks_data WHERE id = ?", (FTS5_AVERAGES_ID,)).fetchone()
    return bytes(row[0]) if row and row[0] else b""


def chunk_total(con: sqlite3.Connection, blob: bytes | None = None) -> int:
    """Chunks in the index, as FTS5 itself counts them for BM25; `count(*)` if that cannot be read."""
    if blob is None:
        blob = averages(con)
    if blob:
        try:
            return varint(blob)[0]
        except IndexError:
            pass
    return con.execute("SELECT count(*) FROM chunks").fetchone()[0]


def common_terms(con: sqlite3.Connection, blob: bytes) -> frozenset[str] | None:
    """The terms in more than PRUNE_DF_FRACTION of the chunks, stored by the last update.

    Valid only for the exact index state it was computed at (FTS5's averages record, which
    changes with every row added or removed); otherwise None, and the caller asks FTS5.
    """
    raw = meta_get(con, "common_terms")
    if not raw or not blob:
        return None
    try:
        stored = json.loads(raw)
    except ValueError:
        return None
    if stored.get("averages") != blob.hex() or stored.get("fraction") != PRUNE_DF_FRACTION:
        return None
    return frozenset(stored.get("terms", ()))


def refresh_common_terms(con: sqlite3.Connection, min_chunks: int | None = None) -> None:
    """Store the frequency table pruning reads, so a question needs no fts5vocab probe.

    Its own transaction, after the update committed: FTS5 writes its averages record when
    pending rows are flushed, so only a committed index has one that matches its terms.
    Made only for a base the seed's rule prunes (over `min_chunks`): it is a scan of the
    whole vocabulary (~95 ms at 42,000 chunks) after every update that changed something,
    and a smaller base never reads it (a threshold moved below that probes instead).
    """
    try:
        blob = averages(con)
        floor = PRUNE_ABOVE_CHUNKS if min_chunks is None else min_chunks
        if chunk_total(con, blob) <= floor or common_terms(con, blob) is not None:
            return  # not needed, or already describes this exact index
        con.execute("BEGIN IMMEDIATE")
        try:
            blob = averages(con)
            cutoff = chunk_total(con, blob) * PRUNE_DF_FRACTION
            common = {t: d for t, d in con.execute("SELECT term, doc FROM chunks_vocab WHERE doc > ?", (cutoff,))}
            con.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES ('common_terms', ?)",
                (json.dumps({"averages": blob.hex(), "fraction": PRUNE_DF_FRACTION, "terms": common},
                            ensure_ascii=False, sort_keys=True),),
            )
            con.execute("COMMIT")
        except BaseException:
            if con.in_transaction:
                con.execute("ROLLBACK")
            raise
    except sqlite3.OperationalError:
        pass  # read-only or busy: the table is a shortcut, and the probes give the same answer


def terms_to_send(con: sqlite3.Connection, terms: list[str], prune_above: int = PRUNE_ABOVE_CHUNKS) -> list[str]:
    """The question's terms less those pruning drops ("How the Catalogue Ranks": above `prune_above` chunks,
    a term in more than PRUNE_DF_FRACTION of them leaves the expression)."""
    return _send(con, terms, prune_above)[0]


def _send(con: sqlite3.Connection, terms: list[str], prune_above: int) -> tuple[list[str], int]:
    if not terms:
        return [], 0
    blob = averages(con)
    total = chunk_total(con, blob)
    if total <= prune_above:
        return list(terms), total
    cutoff = total * PRUNE_DF_FRACTION
    common = common_terms(con, blob)
    if common is not None:
        return [t for t in terms if t not in common], total
    kept = []  # no table for this exact index: ask FTS5, term by term
    for t in terms:
        row = con.execute("SELECT doc FROM chunks_vocab WHERE term = ?", (t,)).fetchone()
        if row is None or row[0] <= cutoff:
            kept.append(t)
    return kept, total


@contextmanager
def one_snapshot(con: sqlite3.Connection) -> Iterator[None]:
    """Several SELECTs read one state of the index: a read transaction around them.

    In autocommit each SELECT sees the latest commit, so a `kb index` committing between
    the file ids and their chunks made a search look up a chunk that was gone (KeyError).
    Under WAL the writer does not wait for this reader, nor the reader for the writer.
    """
    if con.in_transaction:  # already inside one (an update reading its own writes)
        yield
        return
    con.execute("BEGIN")
    try:
        yield
    finally:
        if con.in_transaction:
            con.execute("COMMIT")  # nothing written: ends the read, releases the snapshot


def search(con: sqlite3.Connection, terms: list[str], limit: int, prune_above: int = PRUNE_ABOVE_CHUNKS):
    with one_snapshot(con):
        return _search_in_snapshot(con, terms, limit, prune_above)


def _search_in_snapshot(con: sqlite3.Connection, terms: list[str], limit: int, prune_above: int):
    if not terms:
        return [], []
    sent, total = _send(con, terms, prune_above)
    if not sent:
        return [], sent
    expr = fts_expression(sent)
    best = best_files(con, expr, limit) if total > SHORTCUT_ABOVE_CHUNKS else best_files_exact(con, expr, limit)
    if not best:
        return [], sent
    fids = [b[1] for b in best]
    paths = dict(
        con.execute(f"SELECT id, path FROM files WHERE id IN ({','.join('?' * len(fids))})", fids).fetchall()
    )
    rowids = [b[0] for b in best]
    texts = {
        r[0]: (r[1], r[2], r[3])
        for r in con.execute(
            f"SELECT rowid, heading_path, body, line FROM chunks WHERE rowid IN ({','.join('?' * len(rowids))})",
            rowids,
        )
    }
    out = []
    for rowid, fid, score in best:
        if fid not in paths:
            continue
        hp, body, line = texts[rowid]
        out.append((paths[fid], score, hp, body, line))
    # Ties in BM25 order by path, as the keyword ranking does.
    out.sort(key=lambda r: (r[1], r[0]))
    return out, sent


def best_files_exact(con: sqlite3.Connection, expr: str, limit: int) -> list[tuple[int, int, float]]:
    # The bare `rowid` beside min() takes the row that holds the minimum: the best chunk.
    return con.execute(
        # MATERIALIZED: bm25() may not run inside an aggregate, so the match is not flattened.
        "WITH m AS MATERIALIZED (SELECT rowid AS r, bm25(chunks) AS s FROM chunks WHERE chunks MATCH ?)"
        f" SELECT r, r >> {FILE_SHIFT} AS fid, min(s) AS best FROM m GROUP BY fid ORDER BY best, fid LIMIT ?",
        (expr, limit),
    ).fetchall()


def best_files(con: sqlite3.Connection, expr: str, limit: int) -> list[tuple[int, int, float]]:
    """(best chunk's rowid, file id, bm25) of the `limit` best files, best first, ties by file id.

    The exact answer groups every matching chunk by file. The shortcut reads only the
    n best chunks (by bm25, then rowid) and keeps each file's first; that is the exact
    answer when every match was read, or when the limit-th file's best is strictly better
    than the last chunk read (an unread chunk scores no better than that one, so no unread
    file can climb into the list, and every listed file's best chunk was read). A file
    whose best score is held by two chunks read would leave which chunk to show to the
    SQL's tie rule (unspecified for a bare column beside min()), so a listed file with such
    a tie sends the question to the exact query too. Measured on a 42,000-chunk base (300
    questions), the shortcut cut the p95 of this step by a fifth (16.7 to 13.3 ms) and fell
    back on 33 of 1,200 searches.
    """
    n = max(SHORTCUT_CHUNKS, 4 * limit)
    rows = con.execute(
        "SELECT rowid, bm25(chunks) FROM chunks WHERE chunks MATCH ? ORDER BY bm25(chunks), rowid LIMIT ?", (expr, n)
    ).fetchall()
    first: dict[int, tuple[int, int, float]] = {}
    tied: set[int] = set()
    for rowid, score in rows:
        fid = rowid >> FILE_SHIFT
        seen = first.get(fid)
        if seen is None:
            first[fid] = (rowid, fid, score)
        elif seen[2] == score:
            tied.add(fid)
    best = sorted(first.values(), key=lambda b: (b[2], b[1]))[:limit]
    if not tied or not any(b[1] in tied for b in best):
        if len(rows) < n:
            return best  # every match was read
        if len(best) == limit and best[-1][2] < rows[-1][1]:
            return best
    return best_files_exact(con, expr, limit)


def passage_candidates(con: sqlite3.Connection, path: str, terms: list[str], cap: int):
    with one_snapshot(con):
        return _passage_candidates_in_snapshot(con, path, terms, cap)


def _passage_candidates_in_snapshot(con: sqlite3.Connection, path: str, terms: list[str], cap: int):
    row = con.execute("SELECT id, chunks FROM files WHERE path = ?", (path,)).fetchone()
    if not row:
        return []
    lo = row[0] << FILE_SHIFT
    span = (lo, lo + (1 << FILE_SHIFT))
    cols = "SELECT rowid, heading_path, body, line FROM chunks WHERE rowid >= ? AND rowid < ?"
    if row[1] <= cap:
        rows = con.execute(cols + " ORDER BY rowid", span).fetchall()
    else:
        found = {r[0]: r for r in con.execute(cols + " ORDER BY rowid LIMIT 8", span)}
        if terms:
            for r in con.execute(cols + " AND chunks MATCH ? ORDER BY rank LIMIT ?", (*span, fts_expression(terms), cap)):
                found[r[0]] = r
        rows = sorted(found.values())
    return [(r[0] - lo, (r[1], r[2], r[3])) for r in rows]


def terms_held(con: sqlite3.Connection, path: str, terms: list[str]) -> set[str]:
    row = con.execute("SELECT id FROM files WHERE path = ?", (path,)).fetchone()
    if not row:
        return set()
    lo = row[0] << FILE_SHIFT
    held = set()
    for t in terms:
        hit = con.execute(
            "SELECT 1 FROM chunks WHERE chunks MATCH ? AND rowid >= ? AND rowid < ? LIMIT 1",
            (fts_expression(word_stems(t)), lo, lo + (1 << FILE_SHIFT)),
        ).fetchone()
        if hit:
            held.add(t)
    return held
