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

numpy is imported where it is used: a one-shot `kb route` never builds a resident leg (and
no longer imports this module: engine.memory imports it when a process holds the text in
memory), and a process that does pays numpy's import only when the leg is built.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from dataclasses import dataclass

from .stemming import stem_question
from .textsearch import ChunkText, Matches, TextMatch, from_rows
from .fts5search import BM25_B, BM25_K1, PRUNE_DF_FRACTION, averages, bm25_idf, one_snapshot, varint
from .indexschema import FILE_SHIFT
from .textindex import TextIndex

# FTS5's bm25() constants (fts5_aux.c), written once in engine/fts5search.py.
K1 = BM25_K1
B = BM25_B
# Short postings kept as Python (rowid, weight) pairs, ~100 bytes each: past this many the
# memory starts over (~20 MB). The numpy weights need no cap: 8 bytes a posting at most, half
# of what the postings themselves hold.
PAIRS_KEPT = 200_000

# unicode61 with at most its diacritics option: no tokenchars, separators or wrapper, so an
# ASCII run of lowercase letters and digits is one token, itself (FTS5's unicode61 rules).
_PLAIN_UNICODE61 = re.compile(r"'unicode61(?:\s+remove_diacritics\s+[012])?'")
_ASCII_TOKEN = re.compile(r"[a-z0-9]+")


_idf = bm25_idf  # FTS5's floored idf, the one the ceiling over many bases uses too


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

    # A question whose terms' postings total at most this many is scored in plain Python:
    # below it numpy's fixed cost per array operation is most of the time (measured on the
    # demo fleet and the 60,000-chunk haystack). An instance may move it (the tests do).
    small_postings = 400

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
        self.index._guard(_in_one_snapshot, self._build)

    def _build(self, con: sqlite3.Connection) -> None:
        import numpy as np

        con.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.chunks_instance USING fts5vocab(main, chunks, 'instance')")
        sizes = con.execute("SELECT id, sz FROM chunks_docsize").fetchall()
        self._clause = _tokenize_clause(con)
        self._plain_unicode61 = bool(_PLAIN_UNICODE61.fullmatch(self._clause))
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
        # The rowids as Python values, for the short-postings path; the paths by file id, so a
        # hit costs no lookup in the files table.
        self._rowid_list = self.rowids.tolist()
        self._paths = {fid: path for fid, path, _hash in self._files}
        # Per term asked, its postings' part of bm25 that is not idf, (tf * (k1 + 1)) / (tf +
        # norm), made once: the same double operations FTS5 does, done the first time a
        # question sends the term rather than every time. A new dict with every new norm (the
        # totals moved), so a question holds the weights of the postings it holds.
        self._weights: dict[str, np.ndarray] = {}
        self._pairs = _Pairs()  # the same, as (rowid, weight), for short postings

    def refresh(self) -> None:
        """Follow the store after an update: the chunks of changed notes, nothing else."""
        self.index._guard(_in_one_snapshot, self._refresh)

    def _refresh(self, con: sqlite3.Connection) -> None:
        import numpy as np

        now = _file_keys(con)
        gone = [k for k in self._files if k not in now]
        new = [k for k in now if k not in self._files]
        if not gone and not new:
            with self._lock:
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
        self._learn_tokens([term])
        return self._token_of[term]

    def _learn_tokens(self, terms) -> None:
        """Settle, for each term not yet known, whether the tokenizer keeps it as itself.

        A question of new words (a miss log is mostly misspellings) costs one round trip to
        the private tokenizer table for all of them, not three statements per word. Under
        plain unicode61 (what the index declares unless changed) a lowercase ASCII letter or
        digit is a token character and folds to itself, so such a term is its own token
        without asking; any other tokenizer clause is always asked."""
        new = [t for t in dict.fromkeys(terms) if t not in self._token_of]
        if not new:
            return
        if self._plain_unicode61:
            for t in [t for t in new if _ASCII_TOKEN.fullmatch(t)]:
                self._token_of[t] = t
            new = [t for t in new if t not in self._token_of]
            if not new:
                return
        with self._lock:
            rows = self._tokenized([(i + 1, "", t) for i, t in enumerate(new)])
        got: dict[int, list[str]] = {}
        for token, doc, _n in rows:
            got.setdefault(doc, []).append(token)
        for i, t in enumerate(new):
            self._token_of[t] = t if got.get(i + 1) == [t] else None

    # -- asking ----------------------------------------------------------------------

    def matches(self, terms: list[str], limit: int, question: str = "") -> list[TextMatch]:
        """The TextSearch interface (engine/textsearch.py): higher is better. Each match's
        chunk text is read from the store only if something reads it (a shown row's passage)."""
        stems = stem_question(question, terms)
        ranked = self._ranked(stems, limit)
        if ranked is None:  # answered by FTS5 itself
            return from_rows(self.index.search_stems(stems, limit)[0])
        rows = ranked[0]
        load, load_many = self._chunk, self._chunks
        return Matches([path for _, path, _ in rows], [-bm25 for _, _, bm25 in rows],
                       lambda k: ChunkText(load=load, key=rows[k][0], load_many=load_many))

    def search(self, terms: list[str], limit: int, question: str = ""):
        """As TextIndex.search: ((path, bm25, heading_path, text, line) rows, stems sent)."""
        return self.search_stems(stem_question(question, terms), limit)

    def search_stems(self, terms: list[str], limit: int):
        """As TextIndex.search_stems: the terms are the stems the index holds."""
        ranked = self._ranked(terms, limit)
        if ranked is None:
            return self.index.search_stems(terms, limit)
        rows, sent = ranked
        texts = self.index._guard(_texts, [r[0] for r in rows])
        return [(path, bm25, *texts[rowid]) for rowid, path, bm25 in rows], sent

    def _chunk(self, rowid: int) -> tuple[str, str, int]:
        return self.index._guard(_texts, [rowid]).get(rowid, ("", "", 0))

    def _chunks(self, rowids: list[int]) -> dict[int, tuple[str, str, int]]:
        return self.index._guard(_texts, rowids)

    def _ranked(self, terms: list[str], limit: int):
        """((best chunk's rowid, path, bm25) rows ordered as TextIndex.search, terms sent), or
        None when FTS5 must answer (a term it would read as a phrase)."""
        if not terms:
            return [], []
        self._learn_tokens(terms)
        if any(self._token_of[t] is None for t in terms):
            return None  # a phrase or nothing to FTS5: its own answer
        with self._lock:
            postings, rowids, norm, n_rows, paths = self.postings, self.rowids, self.norm, self.n_rows, self._paths
            weights, pairs, rowid_list = self._weights, self._pairs, self._rowid_list
        sent = self._sent(terms, postings, n_rows)
        found = [postings[t] for t in sent if t in postings]
        if not found:
            return [], sent
        if sum(len(p.slots) for p in found) <= self.small_postings:
            best = _best_per_file_small(_scores_small(sent, postings, n_rows, norm, rowid_list, weights, pairs), limit)
        else:
            import numpy as np

            acc = self._scores(sent, postings, norm, n_rows, weights)
            hit = np.flatnonzero(acc)
            if hit.size == 0:
                return [], sent
            best = _best_per_file(rowids[hit], acc[hit], limit)
        rows = [(rowid, paths[fid], score) for rowid, fid, score in best if fid in paths]
        rows.sort(key=lambda r: (r[2], r[1]))  # ties in bm25 by path, as TextIndex.search
        return rows, sent

    def _sent(self, terms, postings, n_rows) -> list[str]:
        # Pruning as fts5search._send: above the threshold, a term in more than a quarter of the
        # chunks leaves the question.
        if n_rows <= self.index.prune_above:
            return list(terms)
        cutoff = n_rows * PRUNE_DF_FRACTION
        return [t for t in terms if t not in postings or len(postings[t].slots) <= cutoff]

    @staticmethod
    def _scores(sent, postings, norm, n_rows, weights: dict | None = None) -> np.ndarray:
        """FTS5's bm25 with the sign turned: phrase by phrase, in the expression's order, the
        same double operations as fts5Bm25Function, so the sums are the same to the bit:
        idf * ((tf * (k1 + 1)) / (tf + norm)), the parenthesised part kept per term in `weights`."""
        import numpy as np

        acc = np.zeros(len(norm), dtype=np.float64)
        for term in sent:
            p = postings.get(term)
            if p is None:
                continue
            idf = _idf(n_rows, len(p.slots))
            acc[p.slots] += idf * _weight(term, p, norm, weights)
        return acc


class _Pairs(dict):
    """term -> its (rowid, weight) pairs, holding at most about PAIRS_KEPT of them."""

    held = 0

    def keep(self, term: str, pairs: list[tuple[int, float]]) -> None:
        if self.held + len(pairs) > PAIRS_KEPT:
            self.clear()
            self.held = 0
        self[term] = pairs
        self.held += len(pairs)


def _in_one_snapshot(con: sqlite3.Connection, read) -> None:
    """A build or a follow reads lengths, postings, files and totals in several SELECTs: a
    `kb index` committing between them gave postings of chunks with no length (KeyError) or
    of another note under a reused file id (a ranking unlike FTS5's). One state for all."""
    with one_snapshot(con):
        read(con)


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

    `rowids` ascend, and a file's rowids are one run (its id is their high bits), so each
    file's best is a reduction over its run and nothing is sorted but the files' bests; only
    the `limit` kept are turned into Python values (a common word matches thousands of files).
    """
    import numpy as np

    fids = rowids >> FILE_SHIFT
    starts = np.flatnonzero(np.concatenate(([True], fids[1:] != fids[:-1])))  # each file's first hit
    best = np.maximum.reduceat(acc, starts)
    # The files ascend, so a stable sort on bm25 orders ties by file id. fts5 returns -1.0 *
    # score: the exact negation.
    bm25 = -best
    if len(bm25) > limit:
        # Only what can reach the first `limit` is sorted: everything at or better than the
        # limit-th best bm25 (ties at the cut included, then cut after the stable sort).
        cut = np.partition(bm25, limit - 1)[limit - 1] if limit > 0 else -np.inf
        keep = np.flatnonzero(bm25 <= cut)
        ranked = keep[np.argsort(bm25[keep], kind="stable")][:limit]
    else:
        ranked = np.argsort(bm25, kind="stable")
    # A file's chunk: the first in its run whose score is its best (the lowest rowid among equals).
    at_best = np.flatnonzero(acc == np.repeat(best, np.diff(np.append(starts, len(fids)))))
    run = fids[at_best]
    first = at_best[np.concatenate(([True], run[1:] != run[:-1]))]  # one per file, in file order
    return list(zip(rowids[first[ranked]].tolist(), fids[starts[ranked]].tolist(), bm25[ranked].tolist()))


def _weight(term: str, p: _Postings, norm, weights: dict | None):
    """(tf * (k1 + 1)) / (tf + norm) over the term's postings (numpy), kept in `weights`."""
    w = weights.get(term) if weights is not None else None
    if w is None:
        w = (p.tf * (K1 + 1.0)) / (p.tf + norm[p.slots])
        if weights is not None:
            weights[term] = w
    return w


def _scores_small(sent, postings, n_rows, norm, rowid_of, weights: dict | None = None,
                  pairs_of: dict | None = None) -> dict[int, float]:
    """_scores for a question whose postings are short, in plain Python: numpy's fixed cost
    per call is most of such a question. The same double operations in the same order
    (Python's floats are IEEE doubles, as numpy's float64, and numpy does each element's
    operations as Python would), so the same sums: rowid -> score."""
    acc: dict[int, float] = {}
    get = acc.get
    for term in sent:
        p = postings.get(term)
        if p is None:
            continue
        idf = _idf(n_rows, len(p.slots))
        pairs = pairs_of.get(term) if pairs_of is not None else None
        if pairs is None:  # the term's (rowid, weight) pairs as Python values, kept beside its array
            pairs = list(zip([rowid_of[s] for s in p.slots.tolist()], _weight(term, p, norm, weights).tolist()))
            if pairs_of is not None:
                pairs_of.keep(term, pairs)
        for r, w in pairs:
            acc[r] = get(r, 0.0) + idf * w
    return acc


def _best_per_file_small(acc: dict[int, float], limit: int) -> list[tuple[int, int, float]]:
    """_best_per_file over rowid -> score in plain Python: a file at its best chunk (the lowest
    rowid among equal bests), the `limit` best files by bm25 then file id."""
    best: dict[int, tuple[float, int]] = {}
    for rowid in sorted(acc):
        score = acc[rowid]
        if score == 0.0:
            continue  # as np.flatnonzero: a chunk that scored nothing is no match
        fid = rowid >> FILE_SHIFT
        had = best.get(fid)
        if had is None or score > had[0]:
            best[fid] = (score, rowid)
    ranked = sorted(best, key=lambda f: (-best[f][0], f))[:limit]
    return [(best[f][1], f, -best[f][0]) for f in ranked]


def _texts(con: sqlite3.Connection, rowids: list[int]) -> dict[int, tuple[str, str, int]]:
    if not rowids:
        return {}
    return {
        r[0]: (r[1], r[2], r[3])
        for r in con.execute(
            f"SELECT rowid, heading_path, body, line FROM chunks WHERE rowid IN ({','.join('?' * len(rowids))})", rowids)
    }
