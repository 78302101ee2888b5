"""The resident text leg ranks exactly as FTS5: the same files, in the same order, with the
same bm25 to the bit and the same best chunk, for random questions after random edit
sequences (adds, edits, deletes, followed incrementally), with and without pruning; and a
resident Memory answers as a one-shot one does."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import copy_demo
from engine.memory import Memory
from engine.rank.normalize import unique_terms
from engine.index.resident import ResidentText
from engine.index.textsearch import Fts5TextSearch

SETTINGS = settings(
    max_examples=30, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large],
)
# Few words, so terms repeat across notes: ties in bm25, files with several matching chunks,
# terms in more than a quarter of the chunks (pruned when the threshold is moved down).
WORDS = ["deploy", "producao", "produção", "rollback", "schema", "ledger", "pallet", "café", "日本語", "sono",
         "review", "postgres", "sqlite", "x2", "ab"]
word = st.sampled_from(WORDS)
paragraph = st.lists(word, min_size=1, max_size=12).map(" ".join)
section = st.tuples(st.lists(word, min_size=1, max_size=3).map(" ".join), st.lists(paragraph, min_size=1, max_size=3))
note_text = st.lists(section, min_size=1, max_size=4).map(
    lambda secs: "Search for: " + secs[0][0] + "\n\n" + "\n\n".join(
        f"## {h}\n\n" + "\n\n".join(ps) for h, ps in secs))
edit = st.tuples(st.sampled_from(["write", "delete"]), st.integers(0, 5), note_text)
question = st.lists(word, min_size=1, max_size=5).map(" ".join)


def _fleet() -> Path:
    root = Path(tempfile.mkdtemp(prefix="kb-resident-"))
    (root / "fleet.txt").write_text("", encoding="utf-8")
    (root / "ana").mkdir()
    (root / "ana" / "agent.txt").write_text("name: ana\n", encoding="utf-8")
    return root


def _same(idx, leg, questions, paths=()) -> None:
    for q in questions:
        terms = unique_terms(q)
        for path in (*paths, "gone.md"):  # the coverage rule's question, asked of every note
            assert leg.terms_held(path, terms) == idx.terms_held(path, terms), (q, path)
        for prune_above in (10_000, 0):  # 0: every term in more than a quarter of the chunks is pruned
            idx.prune_above = prune_above
            # Both ways of scoring: numpy arrays (0: every question) and plain Python (every question here).
            for small in (0, 10**9):
                leg.small_postings = small
                assert leg.search(terms, 50) == idx.search(terms, 50), (q, prune_above, small)
                assert leg.search(terms, 3) == idx.search(terms, 3), (q, prune_above, small)
                assert leg.matches(terms, 50, q) == Fts5TextSearch(idx).matches(terms, 50, q), (q, prune_above, small)
    idx.prune_above = 10_000
    del leg.small_postings


@SETTINGS
@given(first=st.lists(note_text, min_size=1, max_size=6), edits=st.lists(edit, max_size=6),
       questions=st.lists(question, min_size=1, max_size=6))
def test_resident_ranks_as_fts5_after_any_edits(first, edits, questions):
    root = _fleet()
    try:
        notes = root / "ana"
        for i, text in enumerate(first):
            (notes / f"n{i}.md").write_text(text, encoding="utf-8")
        mem = Memory(root)
        idx = mem.indexes["ana"]
        idx.update()
        leg = ResidentText(idx)
        _same(idx, leg, questions, [f"n{i}.md" for i in range(6)])
        for n, (kind, i, text) in enumerate(edits):
            target = notes / f"n{i}.md"
            if kind == "delete":
                target.unlink(missing_ok=True)
            else:
                target.write_text(text, encoding="utf-8")
                os.utime(target, ns=(n + 1, 10**9 * (n + 1)))  # a new stat, so the update reads it
            idx.update()
            leg.refresh()
            _same(idx, leg, questions, [f"n{i}.md" for i in range(6)])
            fresh = ResidentText(idx)  # built whole from FTS5 equals followed incrementally
            assert fresh.postings.keys() == leg.postings.keys()
            assert (fresh.rowids == leg.rowids).all() and (fresh.length == leg.length).all()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_a_term_fts5_reads_as_a_phrase_is_answered_by_fts5(tmp_path):
    fleet = copy_demo(tmp_path / "demo")
    idx = Memory(fleet).indexes["zed"]
    idx.update()
    leg = ResidentText(idx)
    assert leg.token_of("deploy") == "deploy"
    assert leg.token_of("a.b") is None  # two tokens to unicode61: a phrase
    assert leg.search(["a.b", "deploy"], 50) == idx.search(["a.b", "deploy"], 50)
    path = idx.search(["deploy"], 1)[0][0][0]
    assert leg.terms_held(path, ["a.b", "deploy"]) == idx.terms_held(path, ["a.b", "deploy"]) == {"deploy"}


def test_equal_chunks_of_one_note_show_the_earlier_both_ways():
    root = _fleet()
    try:
        # Two chunks of one note score the same for "deploy" (same length, one occurrence each).
        (root / "ana" / "n.md").write_text(
            "Search for: deploy\n\n## one\n\ndeploy alpha\n\n## two\n\ndeploy gamma\n", encoding="utf-8")
        (root / "ana" / "m.md").write_text("Search for: other\n\nnothing here\n", encoding="utf-8")
        idx = Memory(root).indexes["ana"]
        idx.update()
        leg = ResidentText(idx)
        want = idx.search(["deploy"], 50)
        assert want[0][0][2] == "one"  # FTS5's own: the earlier chunk
        for small in (0, 10**9):
            leg.small_postings = small
            assert leg.search(["deploy"], 50) == want, small
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_a_resident_hit_reads_its_text_only_when_asked(tmp_path):
    fleet = copy_demo(tmp_path / "demo")
    idx = Memory(fleet).indexes["zed"]
    idx.update()
    leg = ResidentText(idx)
    found = leg.matches(["deploy"], 50)
    assert len(found) > 1
    assert all("not read yet" in repr(m.chunk) for m in found)  # ranking read no text
    assert found[0].text == Fts5TextSearch(idx).matches(["deploy"], 50)[0].text
    assert "not read yet" not in repr(found[0].chunk) and "not read yet" in repr(found[1].chunk)


def test_resident_memory_answers_as_a_one_shot(tmp_path):
    fleet = copy_demo(tmp_path / "demo")
    one_shot, resident = Memory(fleet), Memory(fleet, resident=True)
    assert resident.wait_resident(), "the resident legs were built"
    gold = [ln.split("\t")[0] for ln in (fleet / "gold.tsv").read_text(encoding="utf-8").splitlines()
            if ln.strip() and not ln.startswith("#")]
    for q in gold:
        a, b = one_shot.ask(q, record_miss=False), resident.ask(q, record_miss=False)
        assert a.text == b.text and a.results == b.results, q
    assert resident._resident, "the resident Memory answered from memory"
    # An edit is followed: the resident leg sees the new note after a refresh.
    (fleet / "zed" / "new-note.md").write_text("Search for: zyzzyva\n\nzyzzyva zyzzyva\n", encoding="utf-8")
    resident.refresh()
    one_shot.refresh()
    assert [h.path for h in resident.ask("zyzzyva", record_miss=False).text] == ["new-note.md"]
    assert resident.ask("zyzzyva", record_miss=False).text == one_shot.ask("zyzzyva", record_miss=False).text


def test_the_fleet_check_finds_no_difference_and_would_find_one(tmp_path, monkeypatch):
    from engine.rank import bm25
    from kbtools.resident_identity import differences

    fleet = copy_demo(tmp_path / "demo")
    list(Memory(fleet).index())  # the check reads indexed bases
    questions = ["deploy rollback canary", "how much protein per meal", "quem decide se um deploy pode ir pra producao"]
    found, compared = differences([str(fleet)], questions, say=lambda _: None)
    assert (found, compared) == (0, len(questions) * (2 * 3 + 1))  # 3 bases both ways, and the pool
    monkeypatch.setattr(bm25, "K1", bm25.K1 + 0.01)  # a leg that is not FTS5's (FTS5 keeps its own)
    found, _ = differences([str(fleet)], questions, say=lambda _: None)
    assert found > 0
