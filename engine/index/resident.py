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

from ..rank.stemming import stem_question, word_stems
from .textsearch import ChunkText, Matches, TextMatch, from_rows
from ..rank import bm25
from .fts5search import PRUNE_DF_FRACTION, averages, varint
from .indexschema import FILE_SHIFT
from .resident_scores import (  # the leg's arithmetic, under the names the leg reads (and its tests)
    Layout as _Layout, best_per_file as _best_per_file, best_per_file_small as _best_per_file_small,
    by_path as _by_path, group as _group, part as _part, scores_small as _scores_small,
)
from .textindex import TextIndex

# Short postings kept as Python (rowid, weight) pairs, ~100 bytes each: past this many the
# memory starts over (~20 MB). The numpy weights need no cap: 8 bytes a posting at most, half
# of what the postings themselves hold.
PAIRS_KEPT = 200_000

# unicode61 with at most its diacritics option: no tokenchars, separators or wrapper, so an
# ASCII run of lowercase letters and digits is one token, itself (FTS5's unicode61 rules).
_PLAIN_UNICODE61 = re.compile(r"'unicode61(?:\s+remove_diacritics\s+[012])?'")
_ASCII_TOKEN = re.compile(r"[a-z0-9]+")


def _varints(blob: bytes) -> list[int]:
    out, i = [], 0
    while i < len(blob):
        v, i = varint(blob, i)
        out.append(v)
    return out


# Whether a term is a token of itself depends on the tokenizer clause alone: the bases of a
# fleet (which share one) learn each new word once between them, not once each.
_TOKENS_BY_CLAUSE: dict[str, dict[str, str | None]] = {}


def _tokens_under(clause: str) -> dict[str, str | None]:
    return _TOKENS_BY_CLAUSE.setdefault(clause, {})


def _tokenize_clause(con: sqlite3.Connection) -> str:
    sql = con.execute("SELECT sql FROM sqlite_master WHERE name = 'chunks'").fetchone()[0]
    m = re.search(r"tokenize\s*=\s*('(?:[^']|'')*')", sql)
    return m.group(1) if m else "'unicode61'"


class ResidentText:
    """One base's text leg in memory, answering exactly as TextIndex.search does."""

    # A question whose terms' postings total at most this many is scored in plain Python:
    # below it numpy's fixed cost per array operation is most of the time (measured per size
    # of postings on the 60,000-chunk haystack: the two ways cost the same near 100). An
    # instance may move it (the tests do).
    small_postings = 100

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
        self.index.in_snapshot(self._build)

    def _build(self, con: sqlite3.Connection) -> None:
        import numpy as np

        con.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.chunks_instance USING fts5vocab(main, chunks, 'instance')")
        sizes = con.execute("SELECT id, sz FROM chunks_docsize").fetchall()
        self._clause = _tokenize_clause(con)
        self._plain_unicode61 = bool(_PLAIN_UNICODE61.fullmatch(self._clause))
        self._token_of = _tokens_under(self._clause)
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
            self._laid_out()
            self._totals(con)

    def _laid_out(self) -> None:
        """What follows the chunks and files held, not the totals: made when they change."""
        # The rowids as Python values, for the short-postings path; the paths by file id, so a
        # hit costs no lookup in the files table; the files numbered, for the numpy path.
        self._rowid_list = self.rowids.tolist()
        self._paths = {fid: path for fid, path, _hash in self._files}
        self._fid_of = {path: fid for fid, path, _hash in self._files}  # the coverage rule's terms_held
        self._layout = _Layout.of(self.rowids, self._paths)

    def _totals(self, con: sqlite3.Connection) -> None:
        nums = _varints(averages(con))
        self.n_rows = nums[0] if nums else 0
        self.n_tokens = sum(nums[1:])
        # The length part of bm25's denominator (engine/rank/bm25.py), per chunk: it changes only
        # with the totals, so it is computed here and not per question.
        self.norm = bm25.length_norm(self.length, bm25.average_length(self.n_tokens, self.n_rows))
        # Per term asked, its postings' part of bm25, idf * ((tf * (k1 + 1)) / (tf + norm)),
        # made once: the same double operations FTS5 does, done the first time a question
        # sends the term rather than every time. idf depends on the row count and the term's
        # chunk count, norm on the totals: all fixed until the totals move, and then a new
        # dict is made, so a question holds the parts of the postings it holds.
        self._parts: dict[str, np.ndarray] = {}
        self._pairs = _Pairs()  # the same, as (rowid, part), for short postings

    def refresh(self) -> None:
        """Follow the store after an update: the chunks of changed notes, nothing else."""
        self.index.in_snapshot(self._refresh)

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
            self._laid_out()
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
        """The TextSearch interface (engine/index/textsearch.py): higher is better. Each match's
        chunk text is read from the store only if something reads it (a shown row's passage)."""
        stems = stem_question(question, terms)
        if self._holds_none(stems):
            return []  # most bases, for most of a miss log's questions: nothing to rank
        ranked = self._ranked(stems, limit)
        if ranked is None:  # answered by FTS5 itself
            return from_rows(self.index.search_stems(stems, limit)[0])
        rowids, paths, bm25s = ranked[0]
        load, load_many = self._chunk, self._chunks
        return Matches(paths, [-bm25 for bm25 in bm25s],
                       lambda k: ChunkText(load=load, key=(rowids[k], paths[k]), load_many=load_many))

    def terms_held(self, path: str, terms: list[str]) -> set[str]:
        """As TextIndex.terms_held, from the postings: a term is held when one of its stems
        (both languages, as that query sends) has a posting in one of the note's chunks. A
        stem the tokenizer would not keep as itself is FTS5's to answer, as in `matches`.
        `kb misses` asks this of thousands of questions' new words: no query each."""
        import numpy as np

        stems = {t: word_stems(t) for t in terms}
        self._learn_tokens([s for ss in stems.values() for s in ss])
        if any(self._token_of[s] is None for ss in stems.values() for s in ss):
            return self.index.terms_held(path, terms)
        with self._lock:
            postings, rowids, fid = self.postings, self.rowids, self._fid_of.get(path)
        if fid is None:
            return set()
        # The note's chunks are one run of slots (rowids ascend, a note's are its id's high bits).
        lo, hi = np.searchsorted(rowids, [fid << FILE_SHIFT, (fid + 1) << FILE_SHIFT]).tolist()
        held = set()
        for t, ss in stems.items():
            for s in ss:
                p = postings.get(s)
                if p is not None and _any_between(p.slots, lo, hi):
                    held.add(t)
                    break
        return held

    def _holds_none(self, stems: list[str]) -> bool:
        """Every stem is a token the tokenizer keeps as itself and none is in this base: no
        chunk can match (a stem FTS5 would read as a phrase is left to `_ranked`)."""
        token_of, postings = self._token_of, self.postings
        for t in stems:
            if token_of.get(t) is None:  # a word not seen yet, or a phrase
                self._learn_tokens(stems)
                break
        for t in stems:  # one loop each, not a generator's frames: asked per base of every question
            if token_of[t] is None or t in postings:
                return False
        return True

    def search(self, terms: list[str], limit: int, question: str = ""):
        """As TextIndex.search: ((path, bm25, heading_path, text, line) rows, stems sent)."""
        return self.search_stems(stem_question(question, terms), limit)

    def search_stems(self, terms: list[str], limit: int):
        """As TextIndex.search_stems: the terms are the stems the index holds."""
        ranked = self._ranked(terms, limit)
        if ranked is None:
            return self.index.search_stems(terms, limit)
        (rowids, paths, bm25s), sent = ranked
        keys = list(zip(rowids, paths))
        texts = self.index.read(_texts, keys)
        return [(key[1], bm25, *texts.get(key, ("", "", 0))) for key, bm25 in zip(keys, bm25s)], sent

    def _chunk(self, key: tuple[int, str]) -> tuple[str, str, int]:
        return self.index.read(_texts, [key]).get(key, ("", "", 0))

    def _chunks(self, keys: list[tuple[int, str]]) -> dict[tuple[int, str], tuple[str, str, int]]:
        return self.index.read(_texts, keys)

    def _ranked(self, terms: list[str], limit: int):
        """((best chunks' rowids, paths, bm25s) in TextIndex.search's order, terms sent), or
        None when FTS5 must answer (a term it would read as a phrase)."""
        if not terms:
            return ([], [], []), []
        if not self._all_tokens(terms):
            return None  # a phrase or nothing to FTS5: its own answer
        with self._lock:
            postings, rowids, norm, n_rows, paths = self.postings, self.rowids, self.norm, self.n_rows, self._paths
            parts, pairs, rowid_list, layout = self._parts, self._pairs, self._rowid_list, self._layout
        sent = self._sent(terms, postings, n_rows)
        found = [t for t in sent if t in postings]
        if not found:
            return ([], [], []), sent
        if sum([len(postings[t].slots) for t in found]) <= self.small_postings:
            best = _best_per_file_small(_scores_small(found, postings, n_rows, norm, rowid_list, parts, pairs), limit)
            return _by_path(best, paths), sent
        hit, scores = self._scores(found, postings, norm, n_rows, parts)
        if hit.size == 0:
            return ([], [], []), sent
        return layout.ranked(rowids, hit, scores, limit), sent

    def _all_tokens(self, terms: list[str]) -> bool:
        """Whether the tokenizer keeps every term as itself (else FTS5 reads it as a phrase)."""
        token_of = self._token_of
        if any(token_of.get(t) is None for t in terms):  # a word not seen yet, or a phrase
            self._learn_tokens(terms)
            return not any(token_of[t] is None for t in terms)
        return True

    def held_stems(self, stems: list[str]) -> tuple[str, ...] | None:
        """The stems `matches` ranks by: those sent that a chunk holds, in their order (a stem
        no chunk holds adds to no score), so two questions with the same held stems get the
        same matches. None when FTS5 answers instead (a stem it reads as a phrase)."""
        token_of = self._token_of
        for t in stems:  # plain loops, as _holds_none: asked per base of every question
            if token_of.get(t) is None:
                if not self._all_tokens(stems):
                    return None
                break
        with self._lock:
            postings, n_rows = self.postings, self.n_rows
        return tuple([t for t in self._sent(stems, postings, n_rows) if t in postings])

    def _sent(self, terms, postings, n_rows) -> list[str]:
        # Pruning as fts5search._send: above the threshold, a term in more than a quarter of the
        # chunks leaves the question.
        if n_rows <= self.index.prune_above:
            return list(terms)
        cutoff = n_rows * PRUNE_DF_FRACTION
        return [t for t in terms if t not in postings or len(postings[t].slots) <= cutoff]

    @staticmethod
    def _scores(found, postings, norm, n_rows, parts: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(slots that scored, their scores): FTS5's bm25 with the sign turned. Per chunk,
        0.0 plus each term's part in the expression's order, the same double operations as
        fts5Bm25Function, so the sums are the same to the bit. np.bincount adds its weights
        one by one in the order given, each to its slot's sum, so the terms' postings end to
        end, in the question's order, make exactly those sums, in one operation."""
        import numpy as np

        if len(found) == 1:  # one term: each chunk's score is 0.0 + its part, the part itself
            p = postings[found[0]]
            return p.slots, _part(found[0], p, norm, n_rows, parts)
        acc = np.bincount(np.concatenate([postings[t].slots for t in found]),
                          weights=np.concatenate([_part(t, postings[t], norm, n_rows, parts) for t in found]),
                          minlength=len(norm))
        # A comparison then nonzero: np.flatnonzero on the float array itself is ~10x slower.
        hit = np.flatnonzero(acc != 0.0)
        return hit, acc[hit]


class _Pairs(dict):
    """term -> its (rowid, weight) pairs, holding at most about PAIRS_KEPT of them."""

    held = 0

    def keep(self, term: str, pairs: list[tuple[int, float]]) -> None:
        if self.held + len(pairs) > PAIRS_KEPT:
            self.clear()
            self.held = 0
        self[term] = pairs
        self.held += len(pairs)


def _any_between(slots: np.ndarray, lo: int, hi: int) -> bool:
    """Whether the ascending `slots` hold one in [lo, hi)."""
    k = int(slots.searchsorted(lo))
    return k < len(slots) and int(slots[k]) < hi


def _file_keys(con: sqlite3.Connection) -> dict[tuple[int, str, str], None]:
    return dict.fromkeys(con.execute("SELECT id, path, hash FROM files"))


def _texts(con: sqlite3.Connection, keys: list[tuple[int, str]]) -> dict[tuple[int, str], tuple[str, str, int]]:
    """Each (chunk rowid, its note's path) key's (heading path, text, line), when that chunk is
    still that note's. A chunk is read after its answer was made: the index may have changed
    meanwhile, and a rowid whose file id a deleted note freed is the next note's (it read
    another note's text under this one's path). A key whose chunk is gone is left out."""
    if not keys:
        return {}
    wanted = set(keys)
    rowids = [rowid for rowid, _ in keys]
    rows = con.execute(
        "SELECT c.rowid, f.path, c.heading_path, c.body, c.line FROM chunks c JOIN files f"
        f" ON f.id = c.rowid >> {FILE_SHIFT} WHERE c.rowid IN ({','.join('?' * len(rowids))})", rowids)
    return {(r[0], r[1]): (r[2], r[3], r[4]) for r in rows if (r[0], r[1]) in wanted}
