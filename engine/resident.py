"""The resident text leg: FTS5's BM25 answered from postings held in memory.

For processes that stay up (the reading room, `kb serve`) a question need not go to SQLite:
the postings of every token, each chunk's length and the two totals BM25 reads are kept as
numpy arrays, and a question is a few array operations. The ranking is FTS5's own, to the
bit (docs/speed.md): the same arithmetic in the same order on the same integers.

Where the integers come from, so a change of tokenizer flows through untouched:
- postings (token, chunk, occurrences) from FTS5's own index, through fts5vocab 'instance';
  for the chunks of a note changed later, from the same tokenizer (the tokenize clause read
  from the index's schema) on a private in-memory FTS5 table;
- each chunk's length from FTS5's docsize record (what bm25() reads through xColumnSize);
- the row count and token total from FTS5's averages record (xRowCount, xColumnTotalSize).

A question term the tokenizer does not keep as exactly one token of itself (it would be a
phrase, or nothing) is answered by FTS5 itself: the leg never guesses.

numpy is imported where it is used: `engine.memory` imports this module, and a one-shot
`kb route` never builds a resident leg, so it must not pay numpy's import.
"""

from __future__ import annotations

import math
import re
import sqlite3
import threading
from dataclasses import dataclass

from .stemming import stem_question
from .textsearch import from_rows
from .fts5search import PRUNE_DF_FRACTION, averages, varint
from .indexschema import FILE_SHIFT
from .textindex import TextIndex

# FTS5's bm25() constants (fts5_aux.c) and its floor for a term in more than half the rows.
K1 = 1.2
B = 0.75
IDF_FLOOR = 1e-6


def _varints(blob: bytes) -> list[int]:
    out, i = [], 0
    while i < len(blob):
        v, i = varint(blob, i)
        out.append(v)
    return out


def _tokenize_clause(con: sqlite3.Connection) -> str:
    sql = con.execute("SELECT sql FROM sqlite_master WHERE name = 'chunks'").fetchone()[0]
    m = re.search(r"tokenize\s*=\s*('(?:[^']|'')*')", sql)
    return m.group(1) if m else "'unicode61'"


@dataclass
class _Postings:
    slots: np.ndarray  # int64: the chunks (by slot) holding the token, ascending slot
    tf: np.ndarray  # float64: its occurrences there, all columns (bm25 weights are 1.0)


class ResidentText:
    """One base's text leg in memory, answering exactly as TextIndex.search does."""

    def __init__(self, index: TextIndex):
        self.index = index
        self._lock = threading.Lock()
        self._tok: sqlite3.Connection | None = None
        self._token_of: dict[str, str | None] = {}
        self._files: dict[tuple[int, str, str], None] = {}
        self.build()

    # -- building --------------------------------------------------------------------

    def build(self) -> None:
        """Every posting, from FTS5's own index."""
        self.index._guard(self._build)

    def _build(self, con: sqlite3.Connection) -> None:
        import numpy as np

        con.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.chunks_instance USING fts5vocab(main, chunks, 'instance')")
        sizes = con.execute("SELECT id, sz FROM chunks_docsize").fetchall()
        self._clause = _tokenize_clause(con)
        rowids = np.array([r for r, _ in sizes], dtype=np.int64)
        order = np.argsort(rowids, kind="stable")
        rowids = rowids[order]  # slot -> rowid, ascending
        length = np.array([float(sum(_varints(bytes(sz)))) for _, sz in sizes], dtype=np.float64)[order]
        del sizes
        slot_of = {int(r): i for i, r in enumerate(rowids)}
        # Streamed from the cursor: the instance rows of 60,000 chunks are millions of tuples.
        postings = _group(con.execute("SELECT term, doc, count(*) FROM temp.chunks_instance GROUP BY term, doc"), slot_of)
        with self._lock:
            self.rowids, self.length, self.postings = rowids, length, postings
            self._files = _file_keys(con)
            self._totals(con)

    def _totals(self, con: sqlite3.Connection) -> None:
        nums = _varints(averages(con))
        self.n_rows = nums[0] if nums else 0
        self.n_tokens = sum(nums[1:])
        # The length part of bm25's denominator, k1 * (1 - b + b * D / avgdl), per chunk: it
        # changes only with the totals, so it is computed here and not per question.
        avgdl = float(self.n_tokens) / float(self.n_rows) if self.n_rows else 1.0
        self.norm = K1 * (1 - B + B * self.length / avgdl)

    def refresh(self) -> None:
        """Follow the store after an update: the chunks of changed notes, nothing else."""
        self.index._guard(self._refresh)

    def _refresh(self, con: sqlite3.Connection) -> None:
        import numpy as np

        now = _file_keys(con)
        gone = [k for k in self._files if k not in now]
        new = [k for k in now if k not in self._files]
        if not gone and not new:
            self._totals(con)
            return
        with self._lock:
            keep = np.ones(len(self.rowids), dtype=bool)
            for fid, _p, _h in gone:
                lo = fid << FILE_SHIFT
                keep &= ~((self.rowids >= lo) & (self.rowids < lo + (1 << FILE_SHIFT)))
            sizes, rows = [], []
            for fid, _p, _h in new:
                lo, hi = fid << FILE_SHIFT, (fid + 1) << FILE_SHIFT
                sizes += con.execute("SELECT id, sz FROM chunks_docsize WHERE id >= ? AND id < ?", (lo, hi)).fetchall()
                rows += self._tokenized(con.execute(
                    "SELECT rowid, heading_stems, body_stems FROM chunks WHERE rowid >= ? AND rowid < ?", (lo, hi)).fetchall())
            # The kept postings, as (token, rowid, tf), joined with the new ones and regrouped.
            old_rows = []
            for token, p in self.postings.items():
                k = keep[p.slots]
                if k.any():
                    old_rows.extend(zip([token] * int(k.sum()), self.rowids[p.slots[k]].tolist(), p.tf[k].tolist()))
            old_sizes = list(zip(self.rowids[keep].tolist(), self.length[keep].tolist()))
            rowids = np.array([r for r, _ in old_sizes] + [r for r, _ in sizes], dtype=np.int64)
            length = np.array([ln for _, ln in old_sizes] + [float(sum(_varints(bytes(sz)))) for _, sz in sizes])
            order = np.argsort(rowids, kind="stable")
            self.rowids, self.length = rowids[order], length[order]
            slot_of = {int(r): i for i, r in enumerate(self.rowids)}
            self.postings = _group(sorted(old_rows + rows), slot_of)
            self._files = now
            self._totals(con)

    def _tokenized(self, chunks) -> list[tuple[str, int, int]]:
        """(token, rowid, occurrences) for these chunks, by the index's own tokenizer."""
        tok = self._tokenizer()
        tok.execute("DELETE FROM t")
        tok.executemany("INSERT INTO t(rowid, h, b) VALUES (?,?,?)", chunks)
        return tok.execute("SELECT term, doc, count(*) FROM t_instance GROUP BY term, doc").fetchall()

    def _tokenizer(self) -> sqlite3.Connection:
        if self._tok is None:
            tok = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
            tok.execute(f"CREATE VIRTUAL TABLE t USING fts5(h, b, tokenize = {self._clause})")
            tok.execute("CREATE VIRTUAL TABLE t_instance USING fts5vocab(t, 'instance')")
            self._tok = tok
        return self._tok

    def token_of(self, term: str) -> str | None:
        """The term itself when the tokenizer keeps it as exactly that one token, else None."""
        if term not in self._token_of:
            with self._lock:
                got = [r[0] for r in self._tokenized([(1, "", term)])]
            self._token_of[term] = term if got == [term] else None
        return self._token_of[term]

    # -- asking ----------------------------------------------------------------------

    def matches(self, terms: list[str], limit: int, question: str = ""):
        """The TextSearch interface (engine/textsearch.py): higher is better."""
        return from_rows(self.search(terms, limit, question)[0])

    def search(self, terms: list[str], limit: int, question: str = ""):
        """As TextIndex.search: ((path, bm25, heading_path, text, line) rows, stems sent)."""
        return self.search_stems(stem_question(question, terms), limit)

    def search_stems(self, terms: list[str], limit: int):
        """As TextIndex.search_stems: the terms are the stems the index holds."""
        import numpy as np

        if not terms:
            return [], []
        if any(self.token_of(t) is None for t in terms):
            return self.index.search_stems(terms, limit)  # a phrase or nothing to FTS5: its own answer
        with self._lock:
            postings, rowids, norm, n_rows = self.postings, self.rowids, self.norm, self.n_rows
        sent = self._sent(terms, postings, n_rows)
        if not sent:
            return [], sent
        acc = self._scores(sent, postings, norm, n_rows)
        hit = np.flatnonzero(acc)
        if hit.size == 0:
            return [], sent
        best = _best_per_file(rowids[hit], acc[hit], limit)
        return self.index._guard(_rows_for, best), sent

    def _sent(self, terms, postings, n_rows) -> list[str]:
        # Pruning as fts5search._send: above the threshold, a term in more than a quarter of the
        # chunks leaves the question.
        if n_rows <= self.index.prune_above:
            return list(terms)
        cutoff = n_rows * PRUNE_DF_FRACTION
        return [t for t in terms if t not in postings or len(postings[t].slots) <= cutoff]

    @staticmethod
    def _scores(sent, postings, norm, n_rows) -> np.ndarray:
        """FTS5's bm25 with the sign turned: phrase by phrase, in the expression's order, the
        same double operations as fts5Bm25Function, so the sums are the same to the bit."""
        import numpy as np

        acc = np.zeros(len(norm), dtype=np.float64)
        for term in sent:
            p = postings.get(term)
            if p is None:
                continue
            n_hit = len(p.slots)
            idf = math.log((n_rows - n_hit + 0.5) / (n_hit + 0.5))
            if idf <= 0.0:
                idf = IDF_FLOOR
            acc[p.slots] += idf * ((p.tf * (K1 + 1.0)) / (p.tf + norm[p.slots]))
        return acc


def _file_keys(con: sqlite3.Connection) -> dict[tuple[int, str, str], None]:
    return dict.fromkeys(con.execute("SELECT id, path, hash FROM files"))


def _group(rows, slot_of: dict[int, int]) -> dict[str, _Postings]:
    """(token, rowid, tf) rows sorted by token then rowid -> postings by token."""
    import numpy as np

    out: dict[str, _Postings] = {}
    token, slots, tfs = None, [], []
    for t, rowid, tf in rows:
        if t != token:
            if token is not None:
                out[token] = _Postings(np.array(slots, dtype=np.int64), np.array(tfs, dtype=np.float64))
            token, slots, tfs = t, [], []
        slots.append(slot_of[rowid])
        tfs.append(tf)
    if token is not None:
        out[token] = _Postings(np.array(slots, dtype=np.int64), np.array(tfs, dtype=np.float64))
    return out


def _best_per_file(rowids: np.ndarray, acc: np.ndarray, limit: int) -> list[tuple[int, int, float]]:
    """(best chunk's rowid, file id, bm25) of the `limit` best files, as fts5search.best_files_exact:
    a file at its best chunk (the first by rowid among equal bests), files by bm25 then id.

    `rowids` ascend. Each file's best is one pass (maximum.at over file ids); only the files'
    bests are sorted, never every matching chunk (a common word matches thousands).
    """
    import numpy as np

    fids = rowids >> FILE_SHIFT
    best = np.full(int(fids[-1]) + 1, -np.inf)
    np.maximum.at(best, fids, acc)
    files = np.flatnonzero(best > -np.inf)
    bm25 = -best[files]  # fts5 returns -1.0 * score: the exact negation
    ranked = files[np.lexsort((files, bm25))][:limit]
    at_best = np.flatnonzero(acc == best[fids])  # ascending: a file's first is its lowest rowid
    first_fid, first_at = np.unique(fids[at_best], return_index=True)
    chunk_of = dict(zip(first_fid.tolist(), rowids[at_best[first_at]].tolist()))
    return [(chunk_of[f], f, float(-best[f])) for f in ranked.tolist()]


def _rows_for(con: sqlite3.Connection, best):
    if not best:
        return []
    fids = [b[1] for b in best]
    paths = dict(con.execute(f"SELECT id, path FROM files WHERE id IN ({','.join('?' * len(fids))})", fids))
    rowids = [b[0] for b in best]
    texts = {
        r[0]: (r[1], r[2], r[3])
        for r in con.execute(
            f"SELECT rowid, heading_path, body, line FROM chunks WHERE rowid IN ({','.join('?' * len(rowids))})", rowids)
    }
    out = []
    for rowid, fid, score in best:
        if fid not in paths:
            continue
        hp, body, line = texts[rowid]
        out.append((paths[fid], score, hp, body, line))
    out.sort(key=lambda r: (r[1], r[0]))  # ties in bm25 by path, as TextIndex.search
    return out
