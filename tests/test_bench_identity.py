"""Speed work (issue 8) leaves every answer bit-identical: the code before it, kept here verbatim
as the reference, and the engine as it is answer the same questions with the same order and
the same floats, on the demo and on a generated 1,000-chunk haystack, pruning and the top-N
shortcut off (the seed's threshold) and forced on (a lowered one). Nothing here is timed."""

from __future__ import annotations

import os
import sqlite3
import time
import unicodedata
from collections import defaultdict
from pathlib import Path

import pytest

import engine.rank.normalize as normalize_mod
import engine.index.fts5search as fts
import engine.index.indexupdate as indexupdate
from engine.index import catalogue_cache
from engine.index.indexschema import FILE_SHIFT
from engine.rank.catalogue import (
    SEGMENT_BREAK, W_KEYWORD, W_PHRASE, W_PURPOSE, W_STEM, W_TITLE, Entry, Scored, idf_for, make_entry,
)
from kbtools.haystack import generate
from engine.memory import Memory
from engine.rank.suggest import speller_for

# -- the reference: the code as it was before issue 8, verbatim but for names ---------------


class OldCatalogue:
    def __init__(self, entries: list[Entry]):
        self.entries: tuple[Entry, ...] = tuple(sorted(entries, key=lambda e: e.id))
        self.n = len(self.entries)
        df: dict[str, int] = defaultdict(int)
        for e in self.entries:
            for w in e.vocabulary:
                df[w] += 1
        self.df = dict(df)
        self._idf: dict[str, float] = {}
        postings: dict[str, list[tuple[int, bool, float]]] = defaultdict(list)
        phrase_index: dict[str, list[tuple[int, str, tuple[str, ...]]]] = defaultdict(list)
        for i, e in enumerate(self.entries):
            for w in e.vocabulary:
                other = (
                    (W_TITLE if w in e.title_words else 0.0)
                    + (W_STEM if w in e.stem_words else 0.0)
                    + (W_PURPOSE if w in e.purpose_words else 0.0)
                )
                postings[w].append((i, w in e.one_word_keys, other))
            for written, t in e.phrases:
                phrase_index[t[0]].append((i, written, t))
        self._postings = dict(postings)
        self._phrases = dict(phrase_index)

    def idf(self, w: str) -> float:
        v = self._idf.get(w)
        if v is None:
            v = idf_for(self.n, self.df.get(w, 0))
            self._idf[w] = v
        return v

    def vocabulary_keys(self) -> list[tuple[str, Entry]]:
        return [(k, e) for e in self.entries for k in e.keys]

    def keys_as_written(self) -> list[str]:  # what Memory.ask's miss path built every time
        return [k for k, _ in self.vocabulary_keys()]

    def speller(self):  # what Memory.ask's miss path asks now: here, every key prepared at once
        return speller_for(self.keys_as_written())

    def score(self, segments: list[list[str]]) -> list[Scored]:
        seq = [t for seg in segments for t in seg]
        joined = " " + SEGMENT_BREAK.join(" ".join(seg) for seg in segments) + " "
        unique = list(dict.fromkeys(seq))
        scores: dict[int, float] = defaultdict(float)
        matched: dict[int, list[str]] = defaultdict(list)
        parts: dict[int, list[tuple[str, str, float, float]]] = defaultdict(list)
        for w in unique:
            for i, written, t in self._phrases.get(w, ()):
                if " " + " ".join(t) + " " in joined and written not in matched[i]:
                    mean_idf = sum(self.idf(x) for x in t) / len(t)
                    scores[i] += W_PHRASE * mean_idf
                    matched[i].append(written)
                    parts[i].append((written, f"phrase {W_PHRASE:g}", W_PHRASE, mean_idf))
        for w in unique:
            idf = None
            for i, is_key, other in self._postings.get(w, ()):
                # The specification's phrase rule: a one-word key scores beside a phrase holding its word.
                key_weight = W_KEYWORD if is_key else 0.0
                weight = key_weight + other
                if not weight:
                    continue
                if idf is None:
                    idf = self.idf(w)
                scores[i] += weight * idf
                matched[i].append(w)
                parts[i].append((w, _old_why(self.entries[i], w, key_weight), weight, idf))
        out = [
            Scored(self.entries[i], s, tuple(matched[i]), tuple(parts[i])) for i, s in scores.items() if s > 0
        ]
        out.sort(key=lambda s: (-s.score, s.entry.id))
        return out


class _OldRanking(list):
    """The reference's list of Scored, read through the accessors Memory reads a ranking by
    now (engine.rank.catalogue.Ranking); nothing computed here."""

    def entry_at(self, k):
        return self[k].entry

    def score_at(self, k):
        return self[k].score

    def ids(self):
        return [s.entry.id for s in self]

    def bases(self):
        return [s.entry.base for s in self]

    def species(self):
        return [s.entry.species for s in self]

    def groups(self):
        names = self.group_names()
        return [names.index((s.entry.base, s.entry.species)) for s in self]

    def group_names(self):
        return sorted({(s.entry.base, s.entry.species) for s in self})

    def scores(self):
        return [s.score for s in self]


class _OldCatalogueRanked(OldCatalogue):
    def score(self, segments):
        return _OldRanking(super().score(segments))


def _old_why(e: Entry, w: str, key_weight: float) -> str:
    bits = []
    if key_weight:
        bits.append(f"key {W_KEYWORD:g}")
    if w in e.title_words:
        bits.append(f"title {W_TITLE:g}")
    if w in e.stem_words:
        bits.append(f"stem {W_STEM:g}")
    if w in e.purpose_words:
        bits.append(f"purpose {W_PURPOSE:g}")
    return " + ".join(bits)


def _old_search(con: sqlite3.Connection, terms: list[str], limit: int, prune_above: int):
    if not terms:
        return [], []
    sent = list(terms)
    total = con.execute("SELECT count(*) FROM chunks").fetchone()[0] if len(terms) else 0
    if total > prune_above:
        cutoff = total * fts.PRUNE_DF_FRACTION
        kept = []
        for t in terms:
            row = con.execute("SELECT doc FROM chunks_vocab WHERE term = ?", (t,)).fetchone()
            if row is None or row[0] <= cutoff:
                kept.append(t)
        sent = kept
    if not sent:
        return [], sent
    best = con.execute(
        "WITH m AS MATERIALIZED (SELECT rowid AS r, bm25(chunks) AS s FROM chunks WHERE chunks MATCH ?)"
        f" SELECT r, r >> {FILE_SHIFT} AS fid, min(s) AS best FROM m GROUP BY fid ORDER BY best, fid LIMIT ?",
        (fts.fts_expression(sent), limit),
    ).fetchall()
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
    out.sort(key=lambda r: (r[1], r[0]))
    return out, sent


def _old_fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _old_list_notes(root: Path):
    found: dict[str, os.stat_result] = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in filenames:
            if not name.endswith(".md") or name.startswith("."):
                continue
            full = os.path.join(dirpath, name)
            found[os.path.relpath(full, root).replace(os.sep, "/")] = os.stat(full)
    return found, []


# -- the comparison ----------------------------------------------------------------------------


def _answers(fleet: Path, questions: list[str], prune_above: int | None) -> dict[str, object]:
    m = Memory(fleet)
    if prune_above is not None:
        for idx in m.indexes.values():
            idx.prune_above = prune_above
    out = {}
    for q in questions:
        a = m.ask(q, record_miss=False)
        out[q] = (
            a.to_json(),
            [(k.id, k.score, k.matched, k.terms, k.species) for k in a.keyword],
            [(t.id, t.score, t.heading_path, t.text) for t in a.text],
            [(r.id, r.score, r.keyword_score, r.why, r.passages) for r in a.results],
            a.agent,
        )
    return out


def _before(monkeypatch, prune_above: int | None) -> list[int]:
    """Swap the reference in; returns a counter of the searches it served."""
    limit = prune_above if prune_above is not None else fts.PRUNE_ABOVE_CHUNKS
    calls = [0]

    def search(con, terms, k, _prune):
        calls[0] += 1
        return _old_search(con, terms, k, limit)

    def old_catalogue(openings, fleet_root=""):
        # The reference builds its catalogue from every record, as before the opening cache.
        return _OldCatalogueRanked([
            make_entry(name, r.path, r.title, r.purpose, r.species, r.keys)
            for name, op in openings.items() for r in catalogue_cache.Records(op).values() if r.is_entry
        ])

    monkeypatch.setattr(catalogue_cache, "FleetCatalogue", old_catalogue)
    monkeypatch.setattr(catalogue_cache, "text_ceiling", lambda *args: None)  # every base searched
    monkeypatch.setattr(fts, "search", search)
    monkeypatch.setattr(indexupdate, "list_notes", _old_list_notes)
    monkeypatch.setattr(normalize_mod, "fold", _old_fold)
    return calls


def _questions(root: Path) -> list[str]:
    lines = (root / "questions.tsv").read_text(encoding="utf-8").splitlines()
    return [ln.split("\t")[0] for ln in lines if ln and not ln.startswith("#")]


def _age_indexes(fleet: Path) -> None:
    """Date every index file a minute back, so the "after" side reads the opening cache
    (engine/index/catalogue_cache.py keeps none for an index younger than its clock can vouch for)."""
    then = os.stat(fleet).st_mtime - 60
    for f in fleet.glob("*/.kb/index.db*"):
        os.utime(f, (then, then))


@pytest.fixture(scope="module")
def hay1k(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("identity") / "h1k"
    generate(root, 1000, seed=8, bases=4, questions=160)
    m = Memory(root)
    m.snapshot()  # indexed once, so both sides read the same file
    for idx in m.indexes.values():  # and pruning at a lowered threshold reads the stored table
        fts.refresh_common_terms(idx.conn(), 0)
    for idx in m.indexes.values():
        idx.close()  # closed first: the last close checkpoints, which writes index.db
    _age_indexes(root)
    return root


def _compare(after, before):
    assert list(after) == list(before)
    differ = [q for q in after if after[q] != before[q]]
    assert not differ, f"{len(differ)} of {len(after)} answers differ, first: {differ[0]!r}"


def test_demo_answers_are_bit_identical(demo, monkeypatch):
    qs = [ln.split("\t")[0] for ln in (demo / "gold.tsv").read_text(encoding="utf-8").splitlines()
          if ln and not ln.startswith("#")]
    qs += ["deploy production rollback canary", "me conta uma piada", "proteina treino recuperacao"]
    # Notes copied within CTIME_SLACK_NS of the index's start are young to it (their ctime may
    # be a change the update missed) and would be re-read by every Memory after, so no cache
    # would ever be current: the copy is let age past that first.
    time.sleep(indexupdate.CTIME_SLACK_NS / 1e9 + 0.05)
    first = Memory(demo)
    first.snapshot()
    for idx in first.indexes.values():
        idx.close()
    _age_indexes(demo)
    after = _answers(demo, qs, None)
    assert all(catalogue_cache.cached(i) for i in Memory(demo).indexes.values())  # "after" read the cache
    calls = _before(monkeypatch, None)
    _compare(after, _answers(demo, qs, None))
    assert calls[0] >= len(qs)


@pytest.mark.parametrize("prune_above", [None, 150])
def test_haystack_answers_are_bit_identical(hay1k, monkeypatch, prune_above):
    """None: the seed's threshold (nothing prunes at 1,000 chunks). 150: every base of the
    haystack prunes, and with the shortcut's threshold lowered too, its path runs on each."""
    qs = _questions(hay1k)
    shortcut = {"kept": 0, "exact": 0}
    if prune_above is not None:
        monkeypatch.setattr(fts, "SHORTCUT_ABOVE_CHUNKS", prune_above)
        exact = fts.best_files_exact

        def counted_exact(*args):
            shortcut["exact"] += 1
            return exact(*args)

        monkeypatch.setattr(fts, "best_files_exact", counted_exact)
        shortcut_fn = fts.best_files

        def counted(*args):
            before = shortcut["exact"]
            out = shortcut_fn(*args)
            shortcut["kept"] += shortcut["exact"] == before
            return out

        monkeypatch.setattr(fts, "best_files", counted)
    after = _answers(hay1k, qs, prune_above)
    assert sum(bool(a[2]) for a in after.values()) > len(qs) // 2  # the text leg answered most
    if prune_above is not None:
        assert shortcut["kept"] > 20 and shortcut["exact"] > 0  # both paths ran
    monkeypatch.undo()
    calls = _before(monkeypatch, prune_above)
    _compare(after, _answers(hay1k, qs, prune_above))
    assert calls[0] >= len(qs)


@pytest.mark.parametrize("limit", [3, 10, 50])
def test_the_top_n_shortcut_gives_the_exact_querys_rows(hay1k, limit):
    """Every question's expression, on every base: the shortcut's rows (best chunk, file, bm25)
    are the GROUP BY's, whether it kept its own answer or fell back; and both happened."""
    m = Memory(hay1k)
    kept = fell_back = 0
    for q in _questions(hay1k):
        terms = list(m.ask(q, record_miss=False, with_passages=False).terms)
        for idx in m.indexes.values():
            con = idx.conn()
            sent = fts.terms_to_send(con, terms, 10**9)
            if not sent:
                continue
            expr = fts.fts_expression(sent)
            exact = fts.best_files_exact(con, expr, limit)
            calls = []
            real = fts.best_files_exact
            fts.best_files_exact = lambda *a: calls.append(1) or real(*a)
            try:
                got = fts.best_files(con, expr, limit)
            finally:
                fts.best_files_exact = real
            assert [tuple(r) for r in got] == [tuple(r) for r in exact], (q, idx.base.name)
            fell_back += bool(calls)
            kept += not calls
    assert kept > 50 and fell_back > 0
