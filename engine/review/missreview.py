"""Reading the recall-loss log back against the base as it stands today (`kb misses`).

The log holds what was lost; it cannot hold which files nearly caught a question, because
that is a fact about today's notes, so it is recomputed here for every entry: the files the
text scorer ranks for the question (`Memory.ask(q, record_miss=False)` gives them as
`answer.text`), the keys each of those files declares, and one proposed alias line, proved
against the keyword scorer before anyone writes it. Nothing is written: not the log, not
kb-aliases.txt.

The proposal joins the question's words that matched nothing to a key of the nearest file
that is spelled like them (character trigrams, as the suggester measures, plus the words
run together, so `roll back` reaches `rollback`). When no key there is spelled near, the
words the nearest file's text holds are joined to its first key, and the proposal says it
rests on the text rather than on spelling: meaning is the reader's call, never this module's.

`review_misses` is the batch (`kb misses`, the room's misses screen): every entry's
`review_one`, in this one process. A second process for half the log (a fork, or a fresh
interpreter) was tried and removed: at 10,000 entries it was no quicker than one process
(docs/decisions.md, "Issue 27").
"""

from __future__ import annotations

import os
import threading
import weakref
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Iterator

from ..index import collector
from ..notes.aliases import Alias
from ..clean import repaired
from ..rank.gate import verdict_for
from .misses import DAMAGED_SHOWN, MissEntry, load, misses_path
from ..rank.normalize import terms, words
from ..rank.question import cut_question
from ..rank.stemming import stem_all
from ..rank.suggest import trigrams
from .missspelling import UNKNOWN, Budget, file_keys

NEAR_DEFAULT = 3  # files shown beside each question
# Every entry is one more question asked of the text leg. A long log is asked of the resident
# leg (engine/index/resident.py): its build (numpy's import, ~0.1 ms a chunk) is paid once and each
# question after is a few times cheaper than FTS5's. Below this many entries, or fewer than
# one entry per CHUNKS_PER_MISS_FOR_RESIDENT chunks, the build would cost more than it saves.
RESIDENT_FROM_MISSES = 1_000
CHUNKS_PER_MISS_FOR_RESIDENT = 50
# `kb misses` reviews this many entries, most asked first, unless told otherwise: a review
# costs ~0.15 ms an entry, and a log appended to for years (or planted: 36 MB) is not a
# reason to wait minutes for entries asked once. The rest are counted, and stay in the log.
REVIEW_AT_MOST = 10_000
MAX_SPAN = 3  # an alias is a short phrase somebody typed, not a sentence


@dataclass(frozen=True)
class NearFile:
    """A file today's index nearly caught the question with."""

    base: str
    path: str
    text_rank: int | None  # 1-based rank in the text scorer's list; None when offered by spelling
    keys: tuple[str, ...]
    label_line: int | None
    is_entry: bool

    @property
    def id(self) -> str:
        return f"{self.base}/{self.path}"

    def to_json(self) -> dict:
        return {"id": self.id, "base": self.base, "path": self.path, "text_rank": self.text_rank,
                "keys": list(self.keys), "label_line": self.label_line, "is_entry": self.is_entry}


@dataclass(frozen=True)
class Proposal:
    line: str  # "roll back = rollback", ready for kb-aliases.txt
    alias: str
    canonical: str
    file: str  # the file whose key the canonical is
    basis: str  # "spelling" or "text"
    similarity: float  # the trigram Dice the spelling basis rests on (0 for text)
    verdict_with_it: str  # what the question would get with the line in force
    top_with_it: str | None
    score_with_it: float


@dataclass(frozen=True)
class MissReview:
    entry: MissEntry
    verdict_now: str
    top_now: str | None
    near: tuple[NearFile, ...]
    proposal: Proposal | None
    advice: tuple[str, ...] = ()

    def to_json(self) -> dict:
        """As `kb misses --json` writes it (engine/review/missjson.py writes the same text by hand)."""
        e = self.entry
        p = self.proposal
        return {
            "count": e.count,
            "first_seen": e.first_seen,
            "last_seen": e.last_seen,
            "question": e.question,
            "looked_like": [w.strip() for w in e.looked_like.split(",") if w.strip()],
            "now": {"verdict": self.verdict_now, "keyword_top": self.top_now},
            "near": [f.to_json() for f in self.near],
            "proposal": None if p is None else {
                "line": p.line, "alias": p.alias, "canonical": p.canonical, "file": p.file, "basis": p.basis,
                "similarity": round(p.similarity, 4),
                "with_it": {"verdict": p.verdict_with_it, "keyword_top": p.top_with_it,
                            "keyword_score": round(p.score_with_it, 6)},
            },
            "advice": list(self.advice),
        }


@dataclass(frozen=True)
class MissesReport:
    path: Path
    exists: bool
    reviews: tuple[MissReview, ...]
    problems: tuple[str, ...] = field(default_factory=tuple)  # "path:line: what" per unreadable line
    not_reviewed: int = 0  # entries past the limit: the least asked, left in the log unread

    @property
    def total(self) -> int:
        return sum(r.entry.count for r in self.reviews)

    def to_json(self, *, entries: bool = True) -> dict:
        """entries=False leaves the entries' list empty (engine/review/missjson.py writes them)."""
        return {
            "path": str(self.path),
            "exists": self.exists,
            "questions": len(self.reviews),
            "misses": self.total,
            "entries": [r.to_json() for r in self.reviews] if entries else [],
            "problems": list(self.problems[:DAMAGED_SHOWN]),  # the rest counted, as on stderr
            **({"problems_not_shown": len(self.problems) - DAMAGED_SHOWN} if len(self.problems) > DAMAGED_SHOWN else {}),
            **({"not_reviewed": self.not_reviewed} if self.not_reviewed else {}),
        }


@contextmanager
def reviewing(memory, questions: list[str]) -> Iterator:
    """Where a review of these questions is made: against one snapshot (yielded), the
    collector paused, a file's words read once (this thread's), their words stemmed ahead."""
    with memory.one_state() as snap, collector.paused():
        # Each entry brings new words: stemmed here in one Snowball call per language, not one
        # call each as they are met (the text leg and the coverage rule read the stems). The
        # questions are split as one text (the same words: a space separates them anyway).
        stem_all(dict.fromkeys(terms(" ".join([cut_question(repaired(q))[0] for q in questions]))))
        _review.texts, _review.near_files, _review.answers = {}, {}, {}
        try:
            yield snap
        finally:
            _review.texts = _review.near_files = _review.answers = None


def review_misses(memory, *, near: int = NEAR_DEFAULT, path: Path | None = None,
                  limit: int | None = None) -> MissesReport:
    """The log at `path` (default: where this fleet's misses are written), most asked first,
    each question re-asked of today's index without being recorded; the first `limit`
    entries only, when given. Raises OSError when the log exists and cannot be read."""
    path = path or misses_path(memory.fleet.root)
    entries, problems = load(path)
    not_reviewed = max(len(entries) - limit, 0) if limit is not None else 0
    if not_reviewed:
        entries = entries[:limit]
    if len(entries) >= max(RESIDENT_FROM_MISSES, memory.snapshot().chunks // CHUNKS_PER_MISS_FOR_RESIDENT):
        memory.hold_text_in_memory()
    with reviewing(memory, [e.question for e in entries]):
        reviews = tuple(review_one(memory, e, near=near) for e in entries)
    return MissesReport(path=path, exists=path.exists(), reviews=reviews, problems=tuple(problems),
                        not_reviewed=not_reviewed)


def review_one(memory, entry: MissEntry, *, near: int = NEAR_DEFAULT) -> MissReview:
    q = entry.question
    # `near` is how many are shown; the proposal and the advice look at least as far as the default.
    pool = max(near, NEAR_DEFAULT)
    # Asked as `ask(q, record_miss=False, top=0, classify=False)` answers it, cut to what is read
    # here: no classifier (a model call per entry would cost seconds), no owner, no page.
    answer = memory.reask(q, text_top=pool, texts=getattr(_review, "answers", None))
    q = answer.question  # what is proposed and proved is the part a route reads, never past it
    snap = memory.snapshot()
    n = snap.catalogue.n
    top_now = answer.keyword_top

    files: list[NearFile] = []
    for rank, hit in enumerate(answer.text[:pool], start=1):
        files.append(_near(snap, hit.base, hit.path, rank))
    # The files carrying what the suggester offers are near too, text hits or not: with
    # stems in the text leg a stray word ("come" finds "comes") can fill the text's places,
    # and the spelling is what an alias is proposed from. Looked up by the offered keys, in
    # catalogue order: no walk over every key per entry.
    spelled = _entries_by_key(snap.catalogue)
    # By position alone (each is one key of one entry): no entry is hashed.
    found = sorted({pos: e for key in answer.suggestions for pos, e in spelled.get(key, ())}.items())
    by_spelling: list[NearFile] = []
    for _, e in found:
        if len(by_spelling) >= pool:
            break  # the places are taken: the rest of the offered entries add nothing
        if all(f.id != e.id for f in files + by_spelling):
            by_spelling.append(_near(snap, e.base, e.path, None))
    # `near` caps what is shown; when both kinds found something, one place goes to the spelling.
    spelled_places = min(len(by_spelling), max(1, near - len(files))) if near > 0 else 0
    shown = tuple(files[: max(near - spelled_places, 0)] + by_spelling[:spelled_places])
    files += by_spelling

    advice: list[str] = []
    if answer.verdict == "hit":
        advice.append(f"answered today: hit on {top_now}; this entry has done its job and can be deleted")
        return MissReview(entry, answer.verdict, top_now, shown, None, tuple(advice))
    if not files:
        advice.append(
            "nothing in the base is near it, by label, by spelling or by text: if this fleet should answer it, "
            "a note is missing, not an alias"
        )
    for f in files:
        if not f.is_entry:
            advice.append(f"{f.id} holds these words but has no `Search for:` line: the text search finds it, "
                          "but no question can make it a HIT until it has one (kb check: E02)")

    keyword = answer.keyword
    everything = keyword.matched_anywhere() if hasattr(keyword, "matched_anywhere") else {
        m for k in keyword for m in k.matched}
    matched = {t for m in everything for t in _terms_of(m)}
    q_terms = list(answer.words)  # terms(q), computed once by the re-ask
    proposal = _propose(memory, q, q_terms, matched, files, n)
    return MissReview(entry, answer.verdict, top_now, shown, proposal, tuple(advice))


@lru_cache(maxsize=65536)  # what a keyword hit matched is the fleet's own keys and words: few, repeated
def _terms_of(matched: str) -> tuple[str, ...]:
    return tuple(terms(matched))


_BY_KEY: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_review = threading.local()  # a review's own memory, for its thread: a file's words, its NearFiles, text answers


def _entries_by_key(catalogue) -> dict[str, tuple[tuple[int, object], ...]]:
    """Each key as the suggester offers it (spacing collapsed) -> (catalogue position, entry),
    built once per catalogue: `kb misses` looks up thousands of entries against one index."""
    table = _BY_KEY.get(catalogue)
    if table is None:
        acc: dict[str, list[tuple[int, object]]] = {}
        for pos, (key, e) in enumerate(catalogue.vocabulary_keys()):
            acc.setdefault(" ".join(key.split()), []).append((pos, e))
        table = _BY_KEY[catalogue] = {k: tuple(v) for k, v in acc.items()}
    return table


def _near(snap, base: str, path: str, rank: int | None) -> NearFile:
    # A review's entries name the same few files at the same ranks thousands of times: each
    # is made once per review (its snapshot's), and shared (it is frozen).
    made = getattr(_review, "near_files", None)
    got = made.get((base, path, rank)) if made is not None else None
    if got is None:
        rec = snap.records.get(base, {}).get(path)
        keys = tuple(rec.keys) if rec and rec.is_entry else ()
        got = NearFile(base, path, rank, keys, rec.label_line if rec and rec.is_entry else None,
                       bool(rec and rec.is_entry))
        if made is not None:
            made[(base, path, rank)] = got
    return got


def _spans(q_terms: list[str], matched: set[str]) -> list[list[str]]:
    """Contiguous runs of the question's terms that matched nothing, up to MAX_SPAN long:
    an alias matches only whole, contiguous terms of the question."""
    out = []
    for i in range(len(q_terms)):
        for j in range(i + 1, min(i + MAX_SPAN, len(q_terms)) + 1):
            if q_terms[j - 1] in matched:  # the span so far held none; the word it grows by does
                break
            out.append(q_terms[i:j])
    return out




def _propose(memory, question: str, q_terms: list[str], matched: set[str], files: list[NearFile], n: int):
    spans = [tuple(s) for s in _spans(q_terms, matched)]
    if not spans:
        return None
    span_text = ["".join(span) for span in spans]
    span_words = list(dict.fromkeys(w for span in spans for w in span))
    span_grams = None  # made when a file has no key near any one word: the spans' own grams are new
    best = None  # (similarity, span length, -key order) and the pieces
    budget = Budget()
    for f in files:
        if not f.keys:
            continue
        prepared = file_keys(f.keys)
        # Most files have no key any span can reach (no word of the spans is spelled near one of
        # their words, no span run together near one run together): then no span is measured.
        if not prepared.any_word_near(span_words, budget):
            if span_grams is None:
                span_grams = [trigrams(t) for t in span_text]
            if not any(map(prepared.joined_may_reach, span_grams)):
                continue
        # Each span's best key, then the best span: the pair a scan of every (key, span) keeps,
        # ranked by similarity, then span length, then key order; among equals the earliest span.
        known = prepared.best
        for si, span in enumerate(spans):
            got = known.get(span, UNKNOWN)  # most spans were measured against this file before
            if got is UNKNOWN:
                if budget.exhausted:
                    continue  # past the budget: only what was measured before is read
                got = prepared.best_for(span, span_text[si], budget)
            if got is not None:
                sim, order = got
                rank = (sim, len(span), -order)
                if best is None or rank > best[0]:
                    best = (rank, span, f.keys[order], f)
        if best is not None:
            break  # the nearest file with a key spelled like the question wins
    if best is not None:
        (sim, _, _), span, key, f = best
        return _proved(memory, question, " ".join(span), " ".join(words(key)), f, "spelling", sim, n)
    # No key spelled near: join the words the nearest keyed file's text holds to its first key.
    for f in files:
        if not f.keys:
            continue
        held = _words_in_text(memory, f, q_terms)
        run = _longest_run(q_terms, lambda t: t in held and t not in matched)
        if not run:
            continue
        return _proved(memory, question, " ".join(run), " ".join(words(f.keys[0])), f, "text", 0.0, n)
    return None


def _words_in_text(memory, f: NearFile, q_terms: list[str]) -> set[str]:
    texts = getattr(_review, "texts", None)
    have = texts.get((f.base, f.path)) if texts is not None else None
    if have is None:
        text = " ".join(hp + " " + body for hp, body, _line in memory.chunks_of(f.base, f.path))
        have = frozenset(terms(text))
        if texts is not None:
            texts[(f.base, f.path)] = have
    return {t for t in q_terms if t in have}


def _longest_run(q_terms: list[str], ok) -> list[str]:
    best: list[str] = []
    run: list[str] = []
    for t in q_terms:
        run = run + [t] if ok(t) else []
        if len(run) > len(best):
            best = run
    return best[:MAX_SPAN] if len(best) > MAX_SPAN else best


def _proved(memory, question, alias, canonical, f: NearFile, basis, sim, n) -> Proposal:
    extra = Alias(tuple(terms(alias)), tuple(terms(canonical)), 0)
    hits = memory.keyword_only(question, extra_aliases=(extra,))
    # The top hit's score and id, read without building the hit (its arithmetic is not shown).
    score = (hits.score_at(0) if hasattr(hits, "score_at") else hits[0].score) if hits else 0.0
    top = (hits.id_at(0) if hasattr(hits, "id_at") else hits[0].id) if hits else None
    return Proposal(
        line=f"{alias} = {canonical}", alias=alias, canonical=canonical, file=f.id, basis=basis, similarity=sim,
        verdict_with_it=verdict_for(score, n), top_with_it=top, score_with_it=score,
    )
