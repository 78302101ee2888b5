"""The resident answer's shortcuts (issue 17) read less and compute the same: each is checked
here against the long way it replaced, on the real index and real catalogues. Nothing here
is timed (docs/speed.md prints the figures).

- the fleet catalogue's columns (ids, bases, species, (base, species) as numbers), filled once,
  against the entries themselves;
- what any ranked entry matched, read from the ranking, against every hit's `matched`;
- the resident leg's best chunk per file, against a plain sort of every matching chunk;
- a page's chunks read in one query per base, against each read alone;
- the short postings' pairs, capped.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from engine.index import catalogue_cache
from engine.index import resident as resident_mod
from engine.notes.aliases import expand
from engine.index.indexschema import FILE_SHIFT
from engine.memory import Memory
from engine.rank.normalize import terms as normalise
from engine.index.textsearch import ChunkText, read_all
from kbtools.haystack import generate


@pytest.fixture(scope="module")
def hay(tmp_path_factory):
    root = tmp_path_factory.mktemp("shortcuts") / "hay"
    info = generate(root, 1_500, bases=3)
    mem = Memory(root)
    mem.snapshot()
    questions = [ln.split("\t")[0] for ln in (root / "questions.tsv").read_text(encoding="utf-8").splitlines()
                 if ln.strip()]
    return root, info, questions


def _questions(root, questions):
    # The haystack's own, plus some that share common words and phrase keys' first words.
    vocabulary = sorted({w for q in questions for w in normalise(q)})
    rng = random.Random(17)
    extra = [" ".join(rng.sample(vocabulary, rng.randint(1, 5))) for _ in range(60)]
    return questions[:120] + extra


def test_the_fleet_catalogues_columns_are_the_entries_own(hay):
    root, _, questions = hay
    cat = Memory(root).snapshot().catalogue
    assert isinstance(cat, catalogue_cache.FleetCatalogue)
    rng = random.Random(3)
    for _ in range(40):  # random orders, repeats included, each column filled piecemeal
        order = [rng.randrange(cat.n) for _ in range(rng.randint(0, 60))]
        assert cat.column("ids", order) == [cat.entries[i].id for i in order]
        assert cat.column("bases", order) == [cat.entries[i].base for i in order]
        assert cat.column("species", order) == [cat.entries[i].species for i in order]
        assert [cat.group_names[g] for g in cat.column("groups", order)] == [
            (cat.entries[i].base, cat.entries[i].species) for i in order]
    # Once every value is filled the column is read without looking for gaps: still right.
    every = list(range(cat.n))
    cat.column("groups", every)
    assert cat._unfilled["groups"] == 0
    assert [cat.group_names[g] for g in cat.column("groups", every[::-1])] == [
        (e.base, e.species) for e in list(cat.entries)[::-1]]


def test_what_any_entry_matched_is_read_from_the_ranking(hay, demo):
    root, _, questions = hay
    checked = phrases = 0
    for fleet, qs in ((root, _questions(root, questions)),
                      (demo, ["how much protein per meal", "quem decide se um deploy pode ir pra producao",
                              "deploy rollback canary", "me conta uma piada"])):
        snap = Memory(fleet).snapshot()
        for q in qs:
            ranking = snap.catalogue.score(expand(normalise(q), list(snap.aliases)))
            every = {m for scored in ranking for m in scored.matched}
            assert ranking.matched_anywhere() == every, q
            checked += bool(every)
            phrases += any(" " in m for m in every)
    assert checked >= 50 and phrases >= 1  # words and whole phrases both went through it


def _best_per_file_by_sorting(rowids, acc, limit):
    """The definition: every matching chunk, a file at its best (the lowest rowid among
    equal bests), files by bm25 (the negated score) then file id."""
    best: dict[int, tuple[float, int]] = {}
    for rowid, score in zip(rowids.tolist(), acc.tolist()):
        fid = rowid >> FILE_SHIFT
        if fid not in best or score > best[fid][0]:
            best[fid] = (score, rowid)
    ranked = sorted(best, key=lambda f: (-best[f][0], f))[:limit]
    return [(best[f][1], f, -best[f][0]) for f in ranked]


def test_the_best_chunk_per_file_is_the_sorted_definitions():
    rng = random.Random(5)
    for _ in range(3_000):
        rows = sorted({(f << FILE_SHIFT) + rng.randrange(40)
                       for f in rng.sample(range(1, 300), rng.randint(1, 60)) for _ in range(rng.randint(1, 5))})
        # Few distinct scores, so ties in a file and across files at the cut are common.
        acc = np.array([rng.choice([0.25, 0.5, 1.0, 1.5, rng.random()]) for _ in rows])
        rowids = np.array(rows, dtype=np.int64)
        limit = rng.choice([0, 1, 3, 10, 50])
        first, files, bm25 = resident_mod._best_per_file(rowids >> FILE_SHIFT, acc, limit)
        got = list(zip(rowids[first].tolist(), files.tolist(), bm25.tolist()))
        assert got == _best_per_file_by_sorting(rowids, acc, limit)


def test_a_pages_chunks_are_read_in_one_query_per_base(hay):
    root, _, questions = hay
    mem = Memory(root, resident=True)
    assert mem.wait_resident(120)
    alone = Memory(root, resident=True)
    assert alone.wait_resident(120)
    reads: list[int] = []
    for leg in mem._resident.values():
        many = leg._chunks

        def counted(rowids, many=many):
            reads.append(len(rowids))
            return many(rowids)
        leg._chunks = counted
    pages = 0
    for q in questions[:40]:
        reads.clear()
        page = mem.ask(q, record_miss=False, top=8).results
        one_by_one = alone.ask(q, record_miss=False, top=8).results
        assert page == one_by_one, q  # the same passages as each chunk read alone
        bases = {r.base for r in page if r.text_rank}
        assert len(reads) <= len(bases), q  # at most one read per base on the page
        pages += len(reads) > 0 and sum(reads) > len(reads)
    assert pages >= 5  # pages that held several text hits of one base were read together


def test_read_all_reads_each_chunk_once_and_leaves_others_alone():
    calls: list[list[int]] = []
    store = {1: ("h1", "one", 1), 2: ("h2", "two", 5)}

    def load_many(keys):
        calls.append(list(keys))
        return {k: store[k] for k in keys if k in store}

    a, b, gone = (ChunkText(load=lambda k: store[k], key=k, load_many=load_many) for k in (1, 2, 3))
    held = ChunkText(("h", "held", 9))
    read_all([a, b, gone, held])
    assert calls == [[1, 2, 3]]
    assert (a.get(), b.get(), gone.get(), held.get()) == (store[1], store[2], ("", "", 0), ("h", "held", 9))
    read_all([a, b])
    assert calls == [[1, 2, 3]]  # nothing read twice


def test_the_short_postings_pairs_are_capped(monkeypatch):
    monkeypatch.setattr(resident_mod, "PAIRS_KEPT", 10)
    pairs = resident_mod._Pairs()
    for n, term in enumerate(["a", "b", "c", "d"]):
        pairs.keep(term, [(n, 1.0)] * 4)
        assert pairs.held == sum(len(v) for v in pairs.values()) <= 10
    assert "d" in pairs and "a" not in pairs
