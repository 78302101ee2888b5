"""The resident leg's arithmetic over its columns (engine/index/resident.py): each term's BM25
part (engine/rank/bm25.py), summed per chunk, and each file ranked at its best chunk, in the
order FTS5's search gives them (fts5search.best_files_exact), to the bit.

numpy is imported where it is used, as in the leg itself."""

from __future__ import annotations

from dataclasses import dataclass

from ..rank import bm25
from .indexschema import FILE_SHIFT


@dataclass
class Postings:
    slots: np.ndarray  # int64: the chunks (by slot) holding the token, ascending slot
    tf: np.ndarray  # float64: its occurrences there, all columns (bm25 weights are 1.0)


def group(rows, slot_of: dict[int, int]) -> dict[str, Postings]:
    """(token, rowid, tf) rows sorted by token then rowid -> postings by token."""
    import numpy as np

    out: dict[str, Postings] = {}
    token, slots, tfs = None, [], []
    for t, rowid, tf in rows:
        if t != token:
            if token is not None:
                out[token] = Postings(np.array(slots, dtype=np.int64), np.array(tfs, dtype=np.float64))
            token, slots, tfs = t, [], []
        slots.append(slot_of[rowid])
        tfs.append(tf)
    if token is not None:
        out[token] = Postings(np.array(slots, dtype=np.int64), np.array(tfs, dtype=np.float64))
    return out


@dataclass(frozen=True)
class Layout:
    """Where each file's chunks sit among the slots, for ranking files at their best chunk:
    a file's chunks have consecutive rowids (its id is their high bits), so they are one run
    of slots. Files are numbered in slot order (so in file id order)."""

    file_of_slot: np.ndarray  # int64: the file number of each slot
    names: list  # each file number's path (None for a file id the listing does not hold)
    path_rank: np.ndarray  # int64: each file number's place among the paths, for ties in bm25

    @staticmethod
    def of(rowids: np.ndarray, paths: dict[int, str]) -> Layout:
        import numpy as np

        fid_of_slot = rowids >> FILE_SHIFT
        new = np.concatenate(([True], fid_of_slot[1:] != fid_of_slot[:-1])) if len(rowids) else np.zeros(0, bool)
        names = [paths.get(f) for f in fid_of_slot[new].tolist()]
        by_path = sorted(range(len(names)), key=lambda k: (names[k] is None, names[k] or ""))
        rank = np.empty(len(names), dtype=np.int64)
        rank[by_path] = np.arange(len(names))
        return Layout(np.cumsum(new) - 1, names, rank)

    def ranked(self, rowids: np.ndarray, hit: np.ndarray, scores: np.ndarray, limit: int):
        """(best chunks' rowids, paths, bm25s) of the `limit` best files among the scored
        slots `hit` (ascending), ordered as TextIndex.search: cut by bm25 then file id, then
        ordered by bm25 then path."""
        import numpy as np

        first, files, bm25 = best_per_file(self.file_of_slot[hit], scores, limit)
        order = np.lexsort((self.path_rank[files], bm25))
        names = self.names
        rowid_l, file_l, bm25_l = rowids[hit[first[order]]].tolist(), files[order].tolist(), bm25[order].tolist()
        paths = [names[f] for f in file_l]
        if None in paths:  # a file id the listing does not hold is no hit
            keep = [k for k, name in enumerate(paths) if name is not None]
            return [rowid_l[k] for k in keep], [paths[k] for k in keep], [bm25_l[k] for k in keep]
        return rowid_l, paths, bm25_l


def best_per_file(files: np.ndarray, acc: np.ndarray, limit: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(where each one's best chunk is, files, bm25s) of the `limit` best files, as
    fts5search.best_files_exact: a file at its best chunk (the first among equal bests),
    files by bm25 then file.

    `files` (the file of each scored chunk) ascend, and a file's chunks are one run, so each
    file's best is a reduction over its run and nothing is sorted but the files' bests; only
    the `limit` kept are looked at further (a common word matches thousands of files).
    """
    import numpy as np

    new = np.empty(len(files), dtype=bool)
    new[:1] = True
    np.not_equal(files[1:], files[:-1], out=new[1:])
    starts = np.flatnonzero(new)  # each file's first scored chunk
    best = np.maximum.reduceat(acc, starts) if len(starts) else acc[:0]
    # The files ascend, so a stable sort on bm25 orders ties by file. fts5 returns -1.0 *
    # score: the exact negation.
    bm25 = -best
    if len(bm25) > limit:
        if limit <= 0:
            return starts[:0], files[:0], bm25[:0]
        # Only what can reach the first `limit` is sorted: everything at or better than the
        # limit-th best bm25 (ties at the cut included, then cut after the stable sort).
        cut = np.partition(bm25, limit - 1)[limit - 1]
        keep = np.flatnonzero(bm25 <= cut)
        ranked = keep[np.argsort(bm25[keep], kind="stable")][:limit]
    else:
        ranked = np.argsort(bm25, kind="stable")
    if not len(ranked):
        return starts[:0], files[:0], bm25[:0]
    return first_at_best(acc, starts, ranked, best), files[starts[ranked]], bm25[ranked]


def first_at_best(acc: np.ndarray, starts: np.ndarray, ranked: np.ndarray, best: np.ndarray) -> np.ndarray:
    """For each ranked file, the position of the first chunk in its run scoring its best (the
    lowest rowid among equals). Only the ranked files' runs are read: a few hundred values,
    not every chunk that matched."""
    import numpy as np

    run_start = starts[ranked]
    lens = np.append(starts, len(acc))[ranked + 1] - run_start
    offs = np.cumsum(lens) - lens  # where each ranked run begins among the gathered values
    at = np.arange(int(offs[-1] + lens[-1])) + np.repeat(run_start - offs, lens)
    pos = np.where(acc[at] == np.repeat(best[ranked], lens), at, len(acc))
    return np.minimum.reduceat(pos, offs)


def by_path(best: tuple[list[int], list[int], list[float]], paths: dict[int, str]):
    """(rowids, paths, bm25s) of files ranked by bm25 then id, ordered as TextIndex.search:
    by bm25 then path. Only a tie in bm25 needs the sort."""
    rowids, fids, bm25s = best
    names = [paths.get(f) for f in fids]
    if None in names:  # a file id the listing does not hold is no hit
        keep = [k for k, name in enumerate(names) if name is not None]
        rowids, names, bm25s = [rowids[k] for k in keep], [names[k] for k in keep], [bm25s[k] for k in keep]
    if any(x == y for x, y in zip(bm25s, bm25s[1:])):
        order = sorted(range(len(names)), key=lambda k: (bm25s[k], names[k]))
        rowids, names, bm25s = [rowids[k] for k in order], [names[k] for k in order], [bm25s[k] for k in order]
    return rowids, names, bm25s


def part(term: str, p: Postings, norm, n_rows: int, parts: dict | None):
    """idf * ((tf * (k1 + 1)) / (tf + norm)) over the term's postings (numpy), kept in `parts`."""
    got = parts.get(term) if parts is not None else None
    if got is None:
        got = bm25.term_part(bm25.idf(n_rows, len(p.slots)), p.tf, norm[p.slots])
        if parts is not None:
            parts[term] = got
    return got


def scores_small(found, postings, n_rows, norm, rowid_of, parts: dict | None = None,
                  pairs_of: dict | None = None) -> dict[int, float]:
    """_scores for a question whose postings are short, in plain Python: numpy's fixed cost
    per call is most of such a question. The same double operations in the same order
    (Python's floats are IEEE doubles, as numpy's float64, and numpy does each element's
    operations as Python would), so the same sums: rowid -> score."""
    acc: dict[int, float] = {}
    get = acc.get
    for term in found:
        pairs = pairs_of.get(term) if pairs_of is not None else None
        if pairs is None:  # the term's (rowid, part) pairs as Python values, kept beside its array
            p = postings[term]
            pairs = list(zip([rowid_of[s] for s in p.slots.tolist()], part(term, p, norm, n_rows, parts).tolist()))
            if pairs_of is not None:
                pairs_of.keep(term, pairs)
        for r, x in pairs:
            acc[r] = get(r, 0.0) + x
    return acc


def best_per_file_small(acc: dict[int, float], limit: int) -> tuple[list[int], list[int], list[float]]:
    """best_per_file over rowid -> score in plain Python: a file at its best chunk (the lowest
    rowid among equal bests), the `limit` best files by bm25 then file id."""
    best: dict[int, tuple[float, int]] = {}
    get = best.get
    for rowid, score in sorted(acc.items()):  # rowids are distinct: sorted by rowid alone
        if score == 0.0:
            continue  # as np.flatnonzero: a chunk that scored nothing is no match
        fid = rowid >> FILE_SHIFT
        had = get(fid)
        if had is None or score > had[0]:
            best[fid] = (score, rowid)
    ranked = sorted(best, key=lambda f: (-best[f][0], f))[:limit]
    return [best[f][1] for f in ranked], ranked, [-best[f][0] for f in ranked]
