"""Memory: the contract. The one place an answer is computed.

Every surface (the `kb` command, its JSON, the reading room, the MCP server) gets its answer
from one call here, so no two surfaces can answer differently about one question, and no
surface reassembles the pipeline. Reaching past Memory into the modules is how an alias
ends up reaching one scorer and not the other.

The indexes, their caches, their threads and the snapshot swapped whole when the notes
change are the fleet's index (engine/index/fleetindex.py): Memory asks it to open, update and
search, and sees no cache, no thread and no fork (tests/test_index_interface.py).
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from .shared.record import record, replace

from .answer import AgentChoice, Answer, KeywordHit, Miss, Passage, Result
from .clean import repaired
from .index import page
from .index.fleetindex import FleetIndex
from .index.indexupdate import IndexReport
from .index.snapshot import Snapshot
from .index.textindex import TextIndex
from .index.textleg import RANK_CANDIDATE_POOL
from .notes.aliases import Alias, expand
from .notes.fleet import FLEET_FILE, Fleet, discover
from .query import DEFAULT_TOP, Query, QueryError
from .rank import gate as gate_mod
from .rank.covered import covered_verdict, rule_on as coverage_rule_on
from .rank.keywordhits import KeywordHits, choose_agent, keyword_ids
from .rank.normalize import terms as normalise
from .rank.question import cut_question
from .rank.rrf import rrf, rrf_top
from .rank.vouch import vouch, voting_keyword
from .rank.steps import Reading, Reask, assemble, did_you_mean, text_ids
from .rank.textpool import TextHits
from .stages.purpose import PURPOSE_DEFAULT_ON

if TYPE_CHECKING:
    from .notes.roster import Roster

# The optional stages (engine/stages/purpose, engine/stages/rerank, the classifier), the resident leg, and
# what only a refusal, a claim or a miss needs, are imported where they run: a one-shot
# `kb route` or `kb boot` runs on every prompt of a hook and pays for every module it
# imports (docs/architecture.md, "The import rule"; tests/test_engine_cli.py checks).


@record
class Routed:
    """What the route step decided from the labels alone."""

    snap: Snapshot
    words: tuple[str, ...]  # the question's normalised words
    terms: tuple[str, ...]  # alias-expanded: what both scorers see
    keyword: Sequence[KeywordHit]  # a KeywordHits: each hit built when read
    verdict: str
    agent: AgentChoice | None  # None when the caller asked for no owner (Memory.reask)
    started: float  # perf_counter() when the question arrived
    keyword_ms: float
    # The snapshot was built for this question (each opening's key compared with its index just
    # now): the text leg's ceilings need not stat every index again.
    fresh: bool = False
    unread: str | None = None  # what engine/rank/vouch.py said of a HIT on unread keys



class Memory:
    """Route, retrieve and remember over a set of bases (or fleet roots)."""

    def __init__(
        self, paths: list[str | os.PathLike[str]] | str | os.PathLike[str], *, update: bool = True,
        resident: bool = False, coverage_rule: bool | None = None, record_misses: bool = True,
    ):
        if isinstance(paths, (str, os.PathLike)):
            paths = [paths]
        self.paths: tuple[str, ...] = tuple(os.fspath(p) for p in paths)  # as given: a second process opens them
        self.fleet: Fleet = discover(list(paths))
        self.store = FleetIndex(self.fleet, update=update, resident=resident)  # open, update, search
        self.indexes: dict[str, TextIndex] = self.store.indexes
        # False: no refusal is logged whatever a Query asks (`--no-record` on route, boot, serve, the room).
        self.record_misses = record_misses
        self._roster: Roster | None = None
        self._classifier = None  # engine.stages.classifier.Classifier, made on the first question
        self._held_words: dict[tuple[str, str, str], dict[str, bool]] = {}  # covered_verdict's memo
        # The coverage rule (engine/rank/covered.py): `coverage_rule` when given (a verb's option),
        # else fleet.txt's `coverage_rule = on`, else off; a typo in fleet.txt is refused here.
        self.coverage_rule: bool = coverage_rule_on(
            self.settings, coverage_rule, os.fspath(self.fleet.root / FLEET_FILE))

    # -- the fleet -------------------------------------------------------------------

    @property
    def settings(self) -> dict[str, str]:
        """fleet.txt, as `key = value` pairs."""
        return self.fleet.settings

    @property
    def bases(self):
        return self.fleet.bases

    def snapshot(self) -> Snapshot:
        """What a question is scored against: built on the first, swapped whole on an update."""
        return self.store.snapshot()

    def one_state(self) -> AbstractContextManager[Snapshot]:
        """Within the block, this thread's questions are all answered against one snapshot:
        no stat of kb-aliases.txt per question (`kb misses` asks thousands in one go, and a
        review is of the fleet as it stood when it began). Other threads are not affected."""
        return self.store.one_state()

    def refresh(self, *, force: bool = False) -> list[IndexReport]:
        """Bring every base's index up to date and swap in a new catalogue."""
        return self.store.refresh(force=force)

    @property
    def last_reports(self) -> list[IndexReport]:
        return self.store.last_reports

    @property
    def index_rebuilt_for_version(self) -> bool:
        """Every rebuild this process made was of an index another version of kb wrote."""
        return self.store.rebuilt_for_version

    @property
    def index_was_rebuilt(self) -> bool:
        return self.store.was_rebuilt

    # -- asking ----------------------------------------------------------------------

    def ask(self, question: str | Query, **options: Any) -> Answer:
        """The whole answer to one question: verdict, owner, keyword ranking, reading list.

        `question` is a Query, or the question's text with the Query's fields as keywords
        (top, offset, purpose, near, boosts, rerank, record_miss, with_passages, classify).
        A purpose re-orders the reading list's pool (engine/stages/purpose) and a rerank re-orders
        the page (engine/stages/rerank); the owner and the verdict never change. The Query is
        carried on the answer, so a later stage reads how the page was asked.
        """
        if isinstance(question, Query):
            if options:
                raise QueryError(f"options are given on the Query, not beside it: {', '.join(options)}")
            query = question
        else:
            query = Query(question, **options)
        # Bytes that arrived undecoded (LC_ALL=C, an argument holding \xff) would make every
        # writer of this answer raise: the question is repaired once, here (engine/clean.py).
        # Then cut (engine/rank/question.py), so the scorers, the rerank and the miss log all see the
        # same question, and the answer says how long it was.
        fixed, question_chars = cut_question(repaired(query.question))
        if fixed != query.question:
            query = replace(query, question=fixed)
        fusion_options = self._fusion_options(query)  # refused before any work
        routed = self._routed(query.question, with_agent=True, classify=query.classify)  # the labels alone
        reading = self._read(query, routed, fusion_options)
        verdict, unread = vouch(routed, reading.text, self._covers(routed))  # keys nobody has read: engine/rank/vouch.py
        answer = self._answer(query, replace(routed, verdict=verdict, unread=unread), reading)
        if question_chars:
            answer = replace(answer, question_chars=question_chars)
        answer = self._miss(query, answer)
        if query.rerank is not None:
            answer = self.rerank(answer, query.rerank)
        return answer

    def reask(self, question: str, *, text_top: int, texts: dict | None = None) -> Reask:
        """`ask(question, record_miss=False, top=0, classify=False)` cut to what the miss
        review reads (engine/review/missreview.py): the same verdict, keyword ranking, suggestions
        and first `text_top` text hits, without the owner's fold, the page or the Answer.

        texts: the text leg's answers kept across questions asked of one state (a review's), by
        what each depends on (`_held_key`): 10,000 of the bench's had 1,180 distinct answers."""
        fixed, _ = cut_question(repaired(question))
        routed = self._routed(fixed, with_agent=False, classify=False)  # no Query: its options are fixed here
        terms = list(routed.terms)
        key = self._held_key(terms, fixed, text_top) if texts is not None else None
        text = texts.get(key) if key is not None else None
        if text is None:
            text = tuple(self._text_leg(terms, fixed, routed.snap.openings, keep=text_top))
            if key is not None:
                texts[key] = text
        suggestions = did_you_mean(routed) if routed.verdict == "nothing" else ()  # not served, as _answer
        verdict = vouch(routed, text, self._covers(routed))[0] if text_top > 0 else routed.verdict  # as ask judges it
        return Reask(fixed, routed.words, verdict, routed.keyword, text, suggestions)

    def _held_key(self, terms: list[str], question: str, keep: int) -> tuple | None:
        """What the text leg's first `keep` hits depend on, when every base answers from memory."""
        return self.store.held_key(terms, question, keep)

    def _fusion_options(self, query: Query):
        """The purpose stage's checked options, or None when the stage is off."""
        if query.purpose is None and query.near is None and not query.boosts and not PURPOSE_DEFAULT_ON:
            return None
        from .stages.purpose.reading import options_for

        return options_for(query.purpose, query.near, query.boosts, bases=self._base_roots())

    def _base_roots(self) -> dict[str, Path]:
        return {b.name: b.root for b in self.fleet.bases}

    def _routed(self, question: str, *, with_agent: bool, classify: bool) -> Routed:
        """Step one, the labels alone: the keyword ranking, the gate's verdict, the owner."""
        t0 = time.perf_counter()
        snap, fresh = self.store.fresh_snapshot()  # fresh: built for this question
        words = normalise(question)
        segments = expand(words, list(snap.aliases))
        scored = snap.catalogue.score(segments)
        keyword_ms = (time.perf_counter() - t0) * 1000
        keyword = KeywordHits(scored)
        agent = choose_agent(scored) if with_agent else None
        if with_agent and classify and self._classifier_named() and question.strip():
            # After the fold and never inside retrieval: it chooses who answers, nothing else.
            agent = self._classified(question, keyword, agent)
        top_score = scored.score_at(0) if scored else 0.0
        verdict = gate_mod.verdict_for(top_score, snap.catalogue.n)
        if verdict == "hit" and self.coverage_rule:
            verdict = self._covered_verdict(scored.entry_at(0), words, snap)
        return Routed(
            snap=snap, words=tuple(words), terms=tuple(dict.fromkeys(t for seg in segments for t in seg)),
            keyword=keyword, verdict=verdict, agent=agent,
            started=t0, keyword_ms=keyword_ms, fresh=fresh,
        )

    def _read(self, query: Query, routed: Routed, fusion_options) -> Reading:
        """Step two, what to read: the text leg, their fusion, the purpose's order, the rows."""
        t0 = time.perf_counter()
        text = self._text_leg(list(routed.terms), query.question, routed.snap.openings, checked=routed.fresh)
        t1 = time.perf_counter()
        keyword = voting_keyword(routed)  # keys nobody has read get no second vote: engine/rank/vouch.py
        results, stamp = self._reading_list(routed.snap, query, keyword, text, routed.terms, fusion_options)
        return Reading(
            text=text, results=tuple(results), stages={"fusion": stamp} if stamp is not None else {},
            text_ms=(t1 - t0) * 1000, fuse_ms=(time.perf_counter() - t1) * 1000,
        )

    def _reading_list(self, snap, query, keyword, text, terms, fusion_options) -> tuple[list[Result], dict | None]:
        """The page of the fused reading list (and the purpose's stamp, when it ran).

        Computed from the two rankings alone, so a wider window of the same ordering (the
        rerank's) costs no second scoring of the question: see `window`.
        """
        if fusion_options is None:
            # The page alone is read: the fused order down to its last row, not every entry's.
            fused = rrf_top(keyword_ids(keyword), text_ids(text), query.offset + max(query.top, 0))
        else:
            fused = rrf(keyword_ids(keyword), text_ids(text))
        fusion = None
        if fusion_options is not None:
            from .stages.purpose.reading import fuse_reading_list

            fusion = fuse_reading_list(
                fused, options=fusion_options, snapshot=snap, records=snap.records, base_roots=self._base_roots(),
                generation=snap.generation, offset=query.offset, limit=query.top,
            )
            fused = fusion.rows
        results = self._results(snap, fused[query.offset:], keyword, text, list(terms), query.top, query.with_passages)
        if fusion is None:
            return results, None
        return [replace(r, fusion=fusion.fusion[r.id]) for r in results], fusion.stamp

    def window(self, answer: Answer, rows: int) -> list[Result]:
        """`answer`'s reading list `rows` long, with passages: the same ordering, re-read from
        the rankings the answer holds, never by asking again (the rerank's wider window)."""
        if answer.query is None:
            raise ValueError("this answer carries no Query; ask Memory for it")
        query = replace(answer.query, top=rows, with_passages=True)
        return self._reading_list(
            self.snapshot(), query, answer.keyword, answer.text, answer.terms, self._fusion_options(query)
        )[0]

    def _answer(self, query: Query, routed: Routed, reading: Reading) -> Answer:
        return assemble(  # engine/rank/steps.py
            query, routed, reading, agents=len(self.fleet.bases), index_was_rebuilt=self.index_was_rebuilt,
            index_rebuilt_for_version=self.index_rebuilt_for_version, reindexed=self.store.pending_reindexed)

    def _miss(self, query: Query, answer: Answer) -> Answer:
        """Step three: a refusal asked for real is a recall loss, logged (see recall_loss)."""
        miss = self.recall_loss(answer) if query.record_miss and self.record_misses else None
        return replace(answer, miss=miss) if miss is not None else answer

    def keyword_only(self, question: str, *, extra_aliases: tuple[Alias, ...] = ()) -> list[KeywordHit]:
        """The keyword ranking alone: what the owner and the verdict are computed from.

        `extra_aliases` asks "what if this line were in kb-aliases.txt" (kb misses proves a
        proposed line before anyone writes it) without touching the file.
        """
        snap = self.snapshot()
        segments = expand(normalise(question), [*snap.aliases, *extra_aliases])
        return KeywordHits(snap.catalogue.score(segments))

    def rerank(self, answer: Answer, request: object = True, *, top: int | None = None) -> Answer:
        """`answer` with its reading list re-ordered by the cross-encoder, stamped in stages["rerank"].

        Apart from `ask` so a surface paints the fused list first and the rerank after. The
        wider window comes from `window` (the rankings the answer already holds), so the
        question is scored once. `top` is the page the rule sizes its window for (default:
        the answer's own). Owner and verdict are never touched. Raises the stage's typed
        refusals; RerankBudgetExceeded carries the un-reranked rows.
        """
        from .stages.rerank.reading import rerank_answer

        return rerank_answer(self, answer, request, top=top)

    def prepare(self) -> None:
        """Build now what the first question would build on its way: the keys' speller a
        refusal suggests from (the first letters typed are refusals). A second at 4,578
        entries the first time after `kb index`, then read from beside each index in
        milliseconds; the room pays it while its status line still says it is indexing."""
        self.snapshot().catalogue.speller()

    def warm_rerank(self, request: object = True) -> dict:
        """Pay the cross-encoder's one-time load now (it is never charged to a rerank's budget)."""
        from .stages.rerank.reading import warm_for

        return warm_for(self, request)

    def route(self, question: str, **kw) -> Answer:
        """The owner and the verdict (the whole answer; callers read `agent` and `verdict`)."""
        return self.ask(question, **kw)

    def retrieve(self, question: str, *, top: int = DEFAULT_TOP) -> list[Result]:
        """The fused reading list alone, recording no miss."""
        return list(self.ask(Query(question, top=top, record_miss=False, classify=False)).results)

    def _classifier_named(self) -> bool:
        """Whether fleet.txt names a classifier (the roster's rule), read from the settings alone:
        the roster reads every base's agent.txt, which a question without a classifier never needs."""
        named = self.settings.get("classifier")
        return bool(named and named.strip()) and bool(self.roster.classifier)

    @property
    def roster(self) -> Roster:
        """Who is in the fleet, what each does and where it stops (fleet.txt + agent.txt)."""
        if self._roster is None:
            from .notes.roster import roster_of

            self._roster = roster_of(self.fleet)
        return self._roster

    def _classified(self, question: str, keyword: Sequence[KeywordHit], fold_choice: AgentChoice) -> AgentChoice:
        from .stages.classifier import Classifier, classified

        if self._classifier is None:
            self._classifier = Classifier(self.roster)
        return classified(self._classifier, self.roster, question, keyword, fold_choice)

    def remember(self, claim: str, path: str | os.PathLike[str] | None = None, *, write: bool = False,
                 keys: list[str] | tuple[str, ...] = (), title: str | None = None, purpose: str | None = None):
        """Measure a claim against the bases: ADD, UPDATE or NOOP, with the passage as evidence.

        With `write` and at least one key, `path` (a new note inside one of the bases) is
        written atomically, never over an existing file, and indexed. See engine/review/remember.py.
        """
        from .review.remember import remember

        return remember(self, claim, path, write=write, keys=keys, title=title, purpose=purpose)

    def recall_loss(self, answer: Answer) -> Miss | None:
        """The one place that decides whether an answer was a recall loss, and records it.

        A guess is not a loss: it was served, with its warning. A question the text scorer
        answered but the gate refused is a loss: nothing was served. The write can fail (a
        read-only fleet); the loss still comes back, with `recorded: false` and the error.
        """
        if answer.gate.served or not answer.question.strip():
            return None
        from .review.misses import recall_loss

        return recall_loss(self.fleet.root, answer)

    # -- the legs ----------------------------------------------------------------------

    def _covers(self, routed: Routed):
        """vouch's test of a note a machine's keys took: holds it half of the question's words?"""
        return lambda entry: self._covered_verdict(entry, list(routed.words), routed.snap) == "hit"

    def _covered_verdict(self, top, q_terms: list[str], snap: Snapshot | None = None) -> str:
        """hit, or guess when the top entry holds too few of the question's words (engine/rank/covered.py)."""
        idx = self.indexes.get(top.base)
        if idx is None:
            return covered_verdict(top, q_terms, None, None, self._held_words)
        search = self.store.search_of(top.base)  # the resident leg answers from its postings
        # The question's own snapshot: a second one would stat kb-aliases.txt again.
        rec = (snap or self.snapshot()).records.get(top.base, {}).get(top.path)
        return covered_verdict(top, q_terms, search, rec, self._held_words)

    def _text_leg(self, terms: list[str], question: str = "", openings: dict | None = None,
                  keep: int = RANK_CANDIDATE_POOL, checked: bool = False) -> TextHits:
        """The text leg's files, best first: the pool's first `keep` (engine/index/textleg.py).
        checked: the openings' keys were compared with the indexes just now (Routed.fresh)."""
        return self.store.text_leg(terms, question, openings, keep, checked)

    @property
    def _resident(self) -> dict:
        """base -> its resident leg, once built (engine/index/resident_legs.py)."""
        return self.store.legs.legs

    def hold_text_in_memory(self, timeout: float = 120.0) -> bool:
        """Answer the text leg from memory from now on, and wait until it can: for thousands of
        questions in one go (`kb misses`), the build paid once, each question cheaper than FTS5's."""
        return self.store.hold_text_in_memory(timeout)

    def wait_resident(self, timeout: float = 60.0) -> bool:
        """Every base's resident leg built now, waited for (the bench, the tests)."""
        return self.store.wait_resident(timeout)

    # -- the notes, for surfaces that read them (the reader, kb remember, kb misses, kb serve)

    def chunks_of(self, base: str, path: str) -> list[tuple[str, str, int]]:
        """A note's chunks as indexed, in order: (heading path, text, first line); [] if unknown."""
        idx = self.indexes.get(base)
        return idx.chunks_of(path) if idx is not None else []

    def text_matches(self, terms: list[str], limit: int) -> list[tuple[str, str]]:
        """(base, path) of each base's best `limit` text files for `terms`, unfused (kb remember's)."""
        return [(name, row[0]) for name, idx in self.indexes.items() for row in idx.search(terms, limit)[0]]

    def stale(self) -> bool:  # any base's notes changed since its index was brought up to date
        return self.store.stale()

    def index(self, *, force: bool = False) -> Iterator[tuple[IndexReport, str | None]]:
        """Each base's index brought up to date, one at a time (`kb index` prints them as they
        go): its report, and why nothing was saved when the index had to live in memory."""
        yield from self.store.update_each(force=force)

    def passages_for(self, base: str, path: str, terms: list[str], limit: int = 3) -> list[Passage]:
        """A note's chunks that hold the most of the question's words, best first."""
        idx = self.indexes.get(base)
        return page.passages(idx, path, terms, limit) if idx is not None else []

    def _results(self, snap, fused, keyword, text_hits, terms, top, with_passages) -> list[Result]:
        return page.results(snap, fused, keyword, text_hits, terms, top, with_passages, self.passages_for)
