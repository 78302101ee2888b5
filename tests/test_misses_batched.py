"""A review of a whole log keeps what its questions share (the text leg's answers by the stems
each base holds, a word's and a span's spelling measures per file, the near files): each
review must be the one its question gets asked alone, with nothing kept from the others."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engine import Memory
from engine.review import missspelling
from engine.review.misses import MissEntry, render_log
from engine.review.missreview import review_misses, review_one, reviewing
from engine.rank.normalize import terms


def _vocabulary(demo, mem) -> list[str]:
    """The demo's own words (its notes' text and keys), the same words misspelled, and
    words no note holds: what a miss log's questions are made of."""
    said: set[str] = set()
    for note in sorted(demo.rglob("*.md")):
        said.update(terms(note.read_text(encoding="utf-8")))
    for key, _entry in mem.snapshot().catalogue.vocabulary_keys():
        said.update(terms(key))
    known = sorted(said)
    misspelled = [w[:len(w) // 2] + w[len(w) // 2 + 1:] for w in known if len(w) > 4]
    return known + misspelled + ["n17", "n4242", "zorbly", "xyzzy", "qwfp"]


def _alone(mem, entry: MissEntry, near: int):
    """The entry reviewed by itself: a review of its own, every per-file memory started anew."""
    missspelling.file_keys.cache_clear()
    with reviewing(mem, [entry.question]):
        return review_one(mem, entry, near=near).to_json()


def test_a_log_reviewed_together_gives_each_question_its_review_alone(demo, tmp_path):
    mem = Memory(demo)
    assert mem.hold_text_in_memory()  # the text leg from memory: where answers are kept and shared
    vocabulary = _vocabulary(demo, mem)
    log = tmp_path / "log.txt"
    reviewed = {"questions": 0, "proposals": 0, "text hits": 0}

    @settings(max_examples=30, deadline=None, derandomize=True)
    @given(questions=st.lists(st.lists(st.sampled_from(vocabulary), min_size=1, max_size=6).map(" ".join),
                              min_size=2, max_size=40, unique=True),
           near=st.sampled_from([0, 1, 3, 5]))
    def check(questions, near):
        entries = [MissEntry(len(questions) - i, "2026-11-01", "2026-11-20", q, "") for i, q in enumerate(questions)]
        log.write_text(render_log(entries), encoding="utf-8")
        together = review_misses(mem, near=near, path=log)
        assert [r.entry.question for r in together.reviews] == questions
        alone = [_alone(mem, e, near) for e in entries]
        assert [r.to_json() for r in together.reviews] == alone
        reviewed["questions"] += len(alone)
        reviewed["proposals"] += sum(r["proposal"] is not None for r in alone)
        reviewed["text hits"] += sum(1 for r in alone for f in r["near"] if f["text_rank"])

    check()
    # The logs drawn reach every part of a review: proposals made and text hits shown.
    assert reviewed["proposals"] > 20 and reviewed["text hits"] > 20, reviewed
