"""Memory: the contract. The one place an answer is computed.

Every surface (the `kb` command, its JSON, the reading room, the MCP server) gets its answer
from one call here, so no two surfaces can answer differently about one question, and no
surface reassembles the pipeline. Reaching past Memory into the modules is how an alias
ends up reaching one scorer and not the other.

Thread safety: each base's index gives every thread its own SQLite connection, and the
keyword catalogue is an immutable snapshot swapped whole when the notes change, so a
question being scored never sees half of an update.
"""

from __future__ import annotations


import os
import threading
import time
from collections.abc import Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from .rank import gate as gate_mod
from .notes.aliases import Alias, expand, load_aliases
from .answer import (
    AgentChoice,
    Answer,
    Confidence,
    Gate,
    Indexed,
    KeywordHit,
    Miss,
    Passage,
    Result,
    TextHit,
    Timings,
)
from .index import catalogue_cache, collector, fleet_plans
from .rank.catalogue import Catalogue, Ranking, Scored
from .rank.covered import coverage, rule_on as coverage_rule_on
from .rank.excerpt import count_hits, excerpt
from .notes.fleet import FLEET_FILE, Fleet, discover
from .rank.fold import fold
from .rank.lazylist import LazyList
from .clean import repaired
from .notes.nofollow import LinkRefused
from .rank.normalize import terms as normalise
from .stages.purpose import PURPOSE_DEFAULT_ON
from .query import DEFAULT_TOP, Query, QueryError
from .rank.question import cut_question
from dataclasses import dataclass, replace
from .rank.rrf import rrf, rrf_top
from .rank.stemming import stem_question
from .index.indexupdate import IndexReport
from .notes.notefiles import on_base
from .index.notestore import FileRecord
from .index.textindex import TextIndex
from .rank.textpool import TextHits, TextPool
from .index.textsearch import Fts5TextSearch, Matches, TextMatch, TextSearch, read_all

if TYPE_CHECKING:
    from .notes.roster import Roster

# The optional stages (engine/stages/purpose, engine/stages/rerank, the classifier), the resident leg, and
# what only a refusal, a claim or a miss needs, are imported where they run: a one-shot
# `kb route` or `kb boot` runs on every prompt of a hook and pays for every module it
# imports (docs/architecture.md, "The import rule"; tests/test_engine_cli.py checks).

# The pool the fusion is computed over is a constant: a caller's page size chooses how much
# of the ordering it sees, never what the ordering is.
RANK_CANDIDATE_POOL = 50
# A note of more chunks than this is searched for its passages rather than read whole.
PASSAGE_SCAN_CHUNKS = 2_000
# Resident text legs built at once: each build holds a connection (three descriptors with its
# log) while it reads its base. Fifty bases built together ran a process under `ulimit -n 32`
# out of descriptors, and a third build on two cores gains nothing under the GIL.
_RESIDENT_BUILDS = threading.BoundedSemaphore(2)
# Notes whose "does its text hold this word" answers are remembered (the coverage rule);
# past it the memory starts over.
HELD_WORDS_NOTES = 4_096


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Everything routing needs that changes only when notes change; swapped whole."""

    catalogue: Catalogue
    records: dict[str, dict[str, FileRecord]]  # base -> path -> record
    aliases: tuple[Alias, ...]
    alias_problems: tuple[str, ...]
    unreachable: tuple[str, ...]
    skipped: tuple[str, ...]
    chunks: int
    generation: int
    aliases_sig: tuple[int, ...] | None = None  # kb-aliases.txt's stat (_file_sig) when read
    openings: dict | None = None  # base -> catalogue_cache.Opening the snapshot was built from


@dataclass(frozen=True, slots=True)
class Reask:
    """A question asked again for what `kb misses` reads of it, and nothing else: the
    verdict, the keyword ranking, the text leg's best files and the refusal's suggestions,
    each what `ask` would give. No owner, no reading list, no hit built."""

    question: str  # as read: repaired, and cut as a route cuts it (engine/rank/question.py)
    words: tuple[str, ...]  # its normalised words (engine/rank/normalize.terms)
    verdict: str
    keyword: "KeywordHits"
    text: tuple[TextHit, ...]  # the text leg's first `text_top` files, in the answer's order
    suggestions: tuple[str, ...]

    @property
    def keyword_top(self) -> str | None:
        return self.keyword.id_at(0) if self.keyword else None


@dataclass(frozen=True, slots=True)
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
    # The snapshot was built for this question (its stale check compared each opening's key
    # with its index's state just now): the text leg's ceilings need not stat every index again.
    fresh: bool = False


@dataclass(frozen=True, slots=True)
class Reading:
    """What the read step found: the text leg's hits and the page of the reading list."""

    text: TextHits
    results: tuple[Result, ...]
    stages: dict[str, Any]
    text_ms: float
    fuse_ms: float


def _file_sig(path: Path) -> tuple[int, ...] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    # The inode and ctime too: a file replaced keeping its size and mtime (`cp -p`, an atomic
    # rename of a copy) kept the old aliases in a long-lived process for good.
    return (st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns)


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
        self.indexes: dict[str, TextIndex] = {b.name: TextIndex(b) for b in self.fleet.bases}
        # A fleet of many bases reads its bases' openings from one file (engine/index/catalogue_cache.py).
        self._fleet_openings = catalogue_cache.fleet_openings(os.fspath(self.fleet.root), self.indexes)
        # ... and keeps its small bases' stale-check plans in one file (engine/index/fleet_plans.py).
        self._fleet_plans = fleet_plans.for_fleet(
            os.fspath(self.fleet.root), [os.fspath(i.base.root) for i in self.indexes.values()])
        self._snapshot: Snapshot | None = None
        self._swap = threading.Lock()
        self._generation = 0
        self._update_on_load = update
        # False: no refusal is logged whatever a Query asks (`--no-record` on route, boot, serve, the room).
        self.record_misses = record_misses
        self.last_reports: list[IndexReport] = []
        self._pending_reindexed = 0
        self._roster: Roster | None = None
        self._classifier = None  # engine.stages.classifier.Classifier, made on the first question
        # A process that stays up (the reading room, kb serve) answers the text leg from
        # postings in memory (engine/index/resident.py), ranked exactly as FTS5 ranks; a one-shot
        # asks FTS5, which costs nothing to open. Memory alone chooses which.
        self._resident_wanted = resident
        self._resident: dict = {}  # base -> engine.index.resident.ResidentText, built on first use
        self._resident_building: set[str] = set()
        self._resident_failed: set[str] = set()  # builds that raised: FTS5 answers these bases
        self._held = threading.local()  # one_state's snapshot, per thread
        self._held_words: dict[tuple[str, str, str], dict[str, bool]] = {}  # _covered_verdict's
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
        held = getattr(self._held, "snap", None)
        if held is not None:
            return held
        snap = self._snapshot
        if snap is None:
            with self._swap:
                if self._snapshot is None:
                    if self._update_on_load:
                        self._refresh_locked(stale_only=True)
                    else:
                        self._snapshot = self._build_snapshot([])
                    self._held.built = self._snapshot  # by this thread, for the question asking (_routed)
                snap = self._snapshot
        # kb-aliases.txt changes on its own, by hand: one stat per question notices it, so a
        # line added or removed takes effect on the next question in a long-lived Memory too.
        sig = _file_sig(self.fleet.aliases_path)
        if sig != snap.aliases_sig:
            with self._swap:
                snap = self._snapshot
                if sig != snap.aliases_sig:
                    aliases, problems = load_aliases(self.fleet.aliases_path)
                    self._generation += 1
                    snap = replace(
                        snap, aliases=tuple(aliases), alias_problems=tuple(problems), aliases_sig=sig,
                        generation=self._generation,
                    )
                    self._snapshot = snap
        return snap

    @contextmanager
    def one_state(self) -> Iterator[Snapshot]:
        """Within the block, this thread's questions are all answered against one snapshot:
        no stat of kb-aliases.txt per question (`kb misses` asks thousands in one go, and a
        review is of the fleet as it stood when it began). Other threads are not affected."""
        snap = self.snapshot()
        outer = getattr(self._held, "snap", None)
        self._held.snap = snap
        try:
            yield snap
        finally:
            self._held.snap = outer

    def refresh(self, *, force: bool = False) -> list[IndexReport]:
        """Bring every base's index up to date and swap in a new catalogue."""
        with self._swap:
            return self._refresh_locked(stale_only=False, force=force)

    def _refresh_locked(self, *, stale_only: bool, force: bool = False) -> list[IndexReport]:
        reports = []
        checked = {}  # base -> the opening its stale check read, for the snapshot below
        for name, idx in self.indexes.items():
            # From the opening cache when it is current: then no connection is opened.
            if stale_only:
                op, stale = catalogue_cache.stale_check(idx)
                if not stale and not idx.was_rebuilt:
                    if op is not None:
                        checked[name] = op
                    reports.append(None)
                    continue
            reports.append(idx.update(force=force))
        if self._fleet_plans is not None:
            self._fleet_plans.keep()
        for name, leg in self._resident.items():
            # Followed whether this process or another wrote the index: a diff of the files
            # table, and the chunks of changed notes only.
            leg.refresh()
        real = [r for r in reports if r is not None]
        self.last_reports = real
        self._pending_reindexed = sum(r.touched for r in real)
        self._snapshot = self._build_snapshot(real, checked)
        return real

    def _build_snapshot(self, reports: list[IndexReport], checked: dict | None = None) -> Snapshot:
        # Each base's records and catalogue rows come from its opening cache when that is
        # current (engine/index/catalogue_cache.py), decoded as a question needs them; a base whose
        # stale check just read its cache is not looked up again.
        checked = checked or {}
        openings = {
            b.name: checked.get(b.name) or catalogue_cache.opening(self.indexes[b.name]) for b in self.fleet.bases
        }
        if self._fleet_openings is not None:
            self._fleet_openings.keep(openings)
        records = {name: catalogue_cache.Records(op) for name, op in openings.items()}
        unreachable = [f"{name}/{path}" for name, op in openings.items() for path in op.unreachable]
        chunks = sum(op.chunks for op in openings.values())
        skipped = [
            on_base(name, s) for name, op in openings.items() for s in catalogue_cache.shown_skipped(self.indexes[name], op)
        ]
        aliases_sig = _file_sig(self.fleet.aliases_path)  # before the read: a later edit is seen
        aliases, alias_problems = load_aliases(self.fleet.aliases_path)
        self._generation += 1
        snap = Snapshot(
            catalogue=catalogue_cache.FleetCatalogue(openings, fleet_root=os.fspath(self.fleet.root)),
            records=records,
            aliases=tuple(aliases),
            alias_problems=tuple(alias_problems),
            unreachable=tuple(sorted(unreachable)),
            skipped=tuple(skipped),
            chunks=chunks,
            generation=self._generation,
            aliases_sig=aliases_sig,
            openings=openings,
        )
        if chunks >= collector.FREEZE_ABOVE_CHUNKS:
            collector.out_of_sight()  # the one GC policy: engine/index/collector.py
        return snap

    @property
    def index_rebuilt_for_version(self) -> bool:
        """Every rebuild this process made was of an index another version of kb wrote."""
        rebuilt = [i for i in self.indexes.values() if i.was_rebuilt]
        return bool(rebuilt) and all(i.rebuilt_for_version for i in rebuilt)

    @property
    def index_was_rebuilt(self) -> bool:
        return any(i.was_rebuilt for i in self.indexes.values())

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
        routed = self._route(query)
        reading = self._read(query, routed, fusion_options)
        answer = self._answer(query, routed, reading)
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

        texts: the text leg's answers kept across questions asked of one state (a review's),
        by what each depends on (`_held_key`): a log's questions differ by a word or two
        most bases hold none of, and 10,000 of the bench's had 1,180 distinct answers."""
        fixed, _ = cut_question(repaired(question))
        routed = self._routed(fixed, with_agent=False, classify=False)  # no Query: its options are fixed here
        terms = list(routed.terms)
        key = self._held_key(terms, fixed, text_top) if texts is not None else None
        text = texts.get(key) if key is not None else None
        if text is None:
            text = tuple(self._text_leg(terms, fixed, routed.snap.openings, keep=text_top))
            if key is not None:
                texts[key] = text
        suggestions = _did_you_mean(routed) if routed.verdict == "nothing" else ()  # not served, as _answer
        return Reask(fixed, routed.words, routed.verdict, routed.keyword, text, suggestions)

    def _held_key(self, terms: list[str], question: str, keep: int) -> tuple | None:
        """All the text leg's first `keep` hits depend on when every base answers from memory:
        each base's stems its chunks hold (engine/index/resident.held_stems). None otherwise."""
        if not self._resident_wanted:
            return None
        stems = None
        held = []
        for name, idx in self.indexes.items():  # every base, as _bases_to_search asks them
            leg = self._resident.get(name)
            if leg is None or idx.memory_why is not None:
                return None  # FTS5 answers this base
            if stems is None:
                stems = stem_question(question, terms)
            got = leg.held_stems(stems)
            if got is None:
                return None
            held.append(got)
        return keep, tuple(held)

    def _fusion_options(self, query: Query):
        """The purpose stage's checked options, or None when the stage is off."""
        if query.purpose is None and query.near is None and not query.boosts and not PURPOSE_DEFAULT_ON:
            return None
        from .stages.purpose.reading import options_for

        return options_for(query.purpose, query.near, query.boosts, bases=self._base_roots())

    def _base_roots(self) -> dict[str, Path]:
        return {b.name: b.root for b in self.fleet.bases}

    def _route(self, query: Query, *, with_agent: bool = True) -> Routed:
        """Step one, the labels alone: the keyword ranking, the gate's verdict, the owner."""
        return self._routed(query.question, with_agent=with_agent, classify=query.classify)

    def _routed(self, question: str, *, with_agent: bool, classify: bool) -> Routed:
        t0 = time.perf_counter()
        self._held.built = None
        snap = self.snapshot()
        fresh = getattr(self._held, "built", None) is snap
        words = normalise(question)
        segments = expand(words, list(snap.aliases))
        scored = snap.catalogue.score(segments)
        keyword_ms = (time.perf_counter() - t0) * 1000
        keyword = KeywordHits(scored)
        agent = _choose_agent(scored) if with_agent else None
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
        results, stamp = self._reading_list(routed.snap, query, routed.keyword, text, routed.terms, fusion_options)
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
            fused = rrf_top(_ids(keyword), _text_ids(text), query.offset + max(query.top, 0))
        else:
            fused = rrf(_ids(keyword), _text_ids(text))
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
        snap, keyword, text_ids = routed.snap, routed.keyword, _text_ids(reading.text)
        n = snap.catalogue.n
        # The top two scores and the top id read from the ranking: no hit is built for them
        # (kb misses re-asks thousands of questions and shows none of these hits).
        score_at, id_at = (keyword.score_at, keyword.id_at) if isinstance(keyword, KeywordHits) else (
            lambda k: keyword[k].score, lambda k: keyword[k].id)
        top_score = score_at(0) if keyword else 0.0
        gate = Gate(
            served=routed.verdict != "nothing", floor=gate_mod.floor_for(n),
            ranked_by_text_only=not keyword and bool(text_ids), entries=n,
            min_entries_to_route=gate_mod.MIN_ENTRIES_TO_ROUTE,
        )
        margin = top_score / score_at(1) if len(keyword) > 1 and score_at(1) > 0 else None
        agreement = 1 + (id_at(0) in text_ids) if keyword else 0
        suggestions = _did_you_mean(routed) if not gate.served else ()
        return Answer(
            question=query.question, terms=routed.terms, verdict=routed.verdict, gate=gate,
            confidence=Confidence(agreement=agreement, keyword_score=top_score, margin=margin),
            agent=routed.agent, keyword=keyword, text=reading.text, results=reading.results,
            indexed=Indexed(entries=n, agents=len(self.fleet.bases), aliases=len(snap.aliases), chunks=snap.chunks),
            unreachable=snap.unreachable, skipped=snap.skipped, index_was_rebuilt=self.index_was_rebuilt,
            index_rebuilt_for_version=self.index_rebuilt_for_version,
            reindexed=self._pending_reindexed, suggestions=suggestions, miss=None,
            timings=Timings(
                keyword_ms=routed.keyword_ms, text_ms=reading.text_ms, fuse_ms=reading.fuse_ms,
                total_ms=(time.perf_counter() - routed.started) * 1000,
            ),
            stages=reading.stages, query=query,
        )

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
        from .stages.classifier import Classifier, choose
        from .stages.dossier import build_dossier

        if self._classifier is None:
            self._classifier = Classifier(self.roster)
        text = build_dossier(self.roster, question, keyword, fold_choice.totals)
        files: dict[str, int] = {}
        for k in keyword:
            files[k.base] = files.get(k.base, 0) + 1
        return choose(fold_choice, self._classifier.consult(text), files)

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
        from .review.misses import misses_path, record

        path = misses_path(self.fleet.root)
        today = time.strftime("%Y-%m-%d")  # today's local date, as date.today().isoformat() (no datetime import)
        offered = list(answer.suggestions)
        try:
            record(path, answer.question, offered, today)
            recorded, error = True, None
        except OSError as e:
            # A refused link names itself: it may be the lock or the .gitignore, not the log.
            where = e.filename if isinstance(e, LinkRefused) and e.filename else path
            recorded, error = False, f"{where}: {e.strerror or e}"
        return Miss(
            question=answer.question, looked_like=tuple(offered), date=today, path=str(path),
            recorded=recorded, error=error,
        )

    # -- the legs ----------------------------------------------------------------------

    def _covered_verdict(self, top, q_terms: list[str], snap: Snapshot | None = None) -> str:
        """hit, or guess when the top entry holds too few of the question's words (engine/rank/covered.py)."""
        idx = self.indexes.get(top.base)
        label = " ".join((top.title, top.purpose, *top.keys))
        if idx is None:
            return "hit" if coverage(q_terms, label, lambda ts: set()).enough else "guess"
        idx = self._text_search(top.base, idx)  # the resident leg answers from its postings
        # The question's own snapshot: a second one would stat kb-aliases.txt again.
        rec = (snap or self.snapshot()).records.get(top.base, {}).get(top.path)
        if rec is None:
            return "hit" if coverage(q_terms, label, lambda ts: idx.terms_held(top.path, ts)).enough else "guess"
        version = (top.base, top.path, rec.hash)

        def held(ts: list[str]) -> set[str]:
            # Whether a note's text holds a word is fixed by its content: remembered by the
            # note's hash, so a question asked again (the room as one types, kb misses over a
            # log) asks the index only for words not yet asked of this version of the note.
            known = self._held_words.setdefault(version, {})
            new = [t for t in ts if t not in known]
            if new:
                got = idx.terms_held(top.path, new)
                if len(self._held_words) > HELD_WORDS_NOTES:
                    self._held_words.clear()
                    known = self._held_words.setdefault(version, {})
                for t in new:
                    known[t] = t in got
            return {t for t in ts if known.get(t)}

        return "hit" if coverage(q_terms, label, held).enough else "guess"

    def _text_leg(self, terms: list[str], question: str = "", openings: dict | None = None,
                  keep: int = RANK_CANDIDATE_POOL, checked: bool = False) -> TextHits:
        """The text leg's files, best first: the pool's first `keep` (kb misses reads 3).
        checked: the openings' keys were compared with the indexes just now (Routed.fresh).

        Each base ranks its RANK_CANDIDATE_POOL best whatever `keep` is, and hands them in the
        pool's order (score, then path), so no file past a base's `keep`-th can be among the
        pool's first `keep`: only those are pooled, ties and all as the whole pool has them.
        """
        # BM25 values from separate bases are compared as they are: each base's statistics are
        # their own, which is the price of an index per agent (docs/decisions.md, "Several
        # bases, one text leg"). A hit is made for the pool only.
        size = min(keep, RANK_CANDIDATE_POOL)
        pool = TextPool(size)
        for name, idx, ceiling in self._bases_to_search(terms, question, openings, checked):
            if ceiling is not None:
                last = pool.last_if_full()
                if last is not None and ceiling < last:
                    # No file of this base can score as high as the pool's last, and the bases
                    # left are ordered by that ceiling: none of them can place a file either.
                    break
            ms = self._text_search(name, idx).matches(terms, RANK_CANDIDATE_POOL, question)
            # The resident leg's matches are columns: no match is built to be merged and dropped.
            if isinstance(ms, Matches):
                paths, scores = ms.paths, ms.scores
            else:
                paths, scores = [m.path for m in ms], [m.score for m in ms]
            if size < RANK_CANDIDATE_POOL:
                paths, scores = paths[:size], scores[:size]
            if paths:
                pool.add(name, ms, paths, scores)
        return pool.hits()

    def _bases_to_search(self, terms: list[str], question: str, openings: dict | None, checked: bool = False):
        """(name, index, ceiling) of the bases the text leg asks, in the order it asks them.

        A one-shot reads each small base's vocabulary from its opening cache: a base holding
        none of the words is not opened, and the rest are asked best ceiling first (the best
        score any of their files can reach, engine/index/catalogue_cache.text_ceiling), after the
        bases without one, so the leg stops at the first that cannot reach the pool. A
        process that stays up searches every base (its snapshot may be older than an index
        another process just wrote)."""
        if not openings or self._resident_wanted:
            return [(name, idx, None) for name, idx in self.indexes.items()]
        unbounded, bounded = [], []
        for name, idx in self.indexes.items():
            op = openings.get(name)
            ceiling = catalogue_cache.text_ceiling(idx, op, terms, question, checked) if op is not None else None
            if ceiling is None:
                unbounded.append((name, idx, None))
            elif ceiling > 0.0:
                bounded.append((name, idx, ceiling))  # 0.0: none of the words is in this base
        bounded.sort(key=lambda b: -b[2])
        return unbounded + bounded

    def _text_search(self, name: str, idx: TextIndex) -> TextSearch:
        """The base's text leg: FTS5 itself, or for a resident Memory the same ranking in memory.

        The postings are built in a background thread on the first question (seconds at
        60,000 chunks); until they are ready FTS5 answers, with the same ranking, so no
        question waits for the build.
        """
        if not self._resident_wanted or idx.memory_why is not None:
            return Fts5TextSearch(idx)
        leg = self._resident.get(name)
        if leg is None:
            with self._swap:
                if name not in self._resident_building:
                    self._resident_building.add(name)
                    threading.Thread(target=self._build_resident, args=(name, idx), daemon=True,
                                     name=f"kb-resident-{name}").start()
            return Fts5TextSearch(idx)
        return leg

    def _build_resident(self, name: str, idx: TextIndex) -> None:
        from .index.resident import ResidentText

        try:
            with _RESIDENT_BUILDS:
                leg = ResidentText(idx)
            with self._swap:  # an update that landed during the build is followed before it answers
                leg.refresh()
                self._resident[name] = leg
        except Exception:
            # Out of descriptors or memory, the index unreadable meanwhile: FTS5 keeps answering
            # this base with the same ranking, and nothing waits for a leg that will not come
            # (a traceback from the thread, and kb misses waited two minutes for it).
            with self._swap:
                self._resident_failed.add(name)

    def hold_text_in_memory(self, timeout: float = 120.0) -> bool:
        """Answer the text leg from memory from now on, and wait until it can: for a caller
        about to ask thousands of questions in one go (`kb misses` over a long log), where
        the build is paid once and every question after it is cheaper than FTS5's."""
        self._resident_wanted = True
        return self.wait_resident(timeout)

    def wait_resident(self, timeout: float = 60.0) -> bool:
        """Build every base's resident leg now and wait for it (the bench, the tests)."""
        for name, idx in self.indexes.items():
            self._text_search(name, idx)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if all(n in self._resident or n in self._resident_failed
                   for n, i in self.indexes.items() if i.memory_why is None):
                return True
            time.sleep(0.01)
        return False

    # -- the notes, for surfaces that read them (the reader, kb remember, kb misses, kb serve)

    def chunks_of(self, base: str, path: str) -> list[tuple[str, str, int]]:
        """A note's chunks as indexed, in order: (heading path, text, first line); [] if unknown."""
        idx = self.indexes.get(base)
        return idx.chunks_of(path) if idx is not None else []

    def text_matches(self, terms: list[str], limit: int) -> list[tuple[str, str]]:
        """(base, path) of the files the text scorer finds for `terms`, each base's best
        `limit`, base by base: no fusion, no gate (kb remember weighs them itself)."""
        return [(name, row[0]) for name, idx in self.indexes.items() for row in idx.search(terms, limit)[0]]

    def stale(self) -> bool:
        """Whether any base's notes changed since its index was brought up to date."""
        return any(idx.stale() for idx in self.indexes.values())

    def index(self, *, force: bool = False) -> Iterator[tuple[IndexReport, str | None]]:
        """Bring each base's index up to date, one base at a time (what `kb index` prints as
        it goes): its report, and why nothing was saved when the index had to live in memory."""
        for idx in self.indexes.values():
            report = idx.update(force=force)
            yield report, idx.memory_reason

    def passages_for(self, base: str, path: str, terms: list[str], limit: int = 3) -> list[Passage]:
        """A note's chunks that hold the most of the question's words, best first."""
        idx = self.indexes.get(base)
        if idx is None:
            return []
        chunks = idx.passage_candidates(path, terms, PASSAGE_SCAN_CHUNKS)
        ranked = sorted(chunks, key=lambda ic: (-count_hits(ic[1][0] + " " + ic[1][1], terms), ic[0]))
        return [Passage(hp, body, excerpt(hp, body, terms)) for _, (hp, body, _line) in ranked[:limit]]

    def _results(self, snap, fused, keyword, text_hits, terms, top, with_passages) -> list[Result]:
        # A row's text rank is its place in the text leg's hits: only the page's hits are built.
        if with_passages:  # the page's chunks in one read per base (the resident leg reads them late)
            read_all(text_hits[trank - 1].chunk for _, _, (_, trank) in fused[: max(top, 0)] if trank)
        out = []
        for ident, score, (krank, trank) in fused[: max(top, 0)]:
            base, path = ident.split("/", 1)
            rec = snap.records.get(base, {}).get(path)
            # The fusion carries the row's 1-based keyword rank (an id ranks once there), so
            # no map of every ranked id is made for a page of five.
            k = keyword[krank - 1] if krank else None
            t = text_hits[trank - 1] if trank else None
            why = " + ".join(
                p for p in (f"keywords #{krank}" if krank else "", f"text #{trank}" if trank else "") if p
            )
            passages: tuple[Passage, ...] = ()
            if with_passages:
                if t is not None:
                    passages = (Passage(t.heading_path, t.text, excerpt(t.heading_path, t.text, terms)),)
                else:
                    passages = tuple(self.passages_for(base, path, terms, limit=1))
            out.append(
                Result(
                    base=base,
                    path=path,
                    title=rec.title if rec else (k.title if k else ""),
                    purpose=rec.purpose if rec else "",
                    score=score,
                    keyword_score=k.score if k else 0.0,
                    keyword_rank=krank,
                    text_rank=trank,
                    why=why,
                    matched=k.matched if k else (),
                    species=rec.species if rec else (k.species if k else "memory"),
                    passages=passages,
                    content_hash=rec.hash if rec else "",
                )
            )
        return out


def _keyword_hit(s: Scored) -> KeywordHit:
    e = s.entry
    return KeywordHit(
        base=e.base, path=e.path, score=s.score, matched=s.matched, species=e.species,
        title=e.title, purpose=e.purpose, terms=s.terms,
    )


class KeywordHits(LazyList):
    """The keyword ranking as KeywordHits, each built when first read: a question with a
    common word scores a quarter of a large fleet, and a surface shows a handful of them.
    Compares equal to a list or tuple of the same hits."""

    def __init__(self, ranking: Ranking):
        super().__init__(len(ranking))
        self.ranking = ranking

    def _build(self, k: int) -> KeywordHit:
        return _keyword_hit(self.ranking[k])

    def ids(self) -> list[str]:
        return self.ranking.ids()

    def score_at(self, k: int) -> float:
        """hits[k].score, without building the hit."""
        return self.ranking.score_at(k)

    def id_at(self, k: int) -> str:
        """hits[k].id, without building the hit."""
        return self.ranking.entry_at(k).id

    def matched_anywhere(self) -> set[str]:
        """The union of every hit's `matched`, without building the hits."""
        return self.ranking.matched_anywhere()

    def __repr__(self) -> str:
        return f"KeywordHits({list(self)!r})"


def _text_ids(text) -> list[str]:
    """The text hits' ids, without building a hit per row when they are TextHits."""
    return text.ids() if isinstance(text, TextHits) else [h.id for h in text]


def _did_you_mean(routed: Routed) -> tuple[str, ...]:
    """A refusal's suggestions: the fleet's keys spelled like the question's words."""
    return tuple(routed.snap.catalogue.speller().suggest(list(routed.words)))


def _ids(keyword) -> list[str]:
    """The keyword ranking's ids, without building a hit per entry when it is a KeywordHits."""
    return keyword.ids() if isinstance(keyword, KeywordHits) else [k.id for k in keyword]


def _choose_agent(scored: Ranking) -> AgentChoice:
    # The fold keeps each agent's best file per species: in a ranking that is best first, the
    # first of each (agent, species) is that best, so only those are handed to it.
    groups, names = scored.groups(), scored.group_names()  # (base, species) per ranked entry, as numbers
    present = set(groups)
    first_at: dict[int, int] = {}  # group -> its first place, in the order of those places
    for k, g in enumerate(groups):
        if g not in first_at:
            first_at[g] = k
            if len(first_at) == len(present):
                break  # every group met: the rest of the ranking adds nothing to the fold
    score_at = scored.score_at
    totals = fold([(*names[g], score_at(k)) for g, k in first_at.items()])
    if not totals:
        return AgentChoice(name=None, score=0.0, files=0, margin=None, contenders=0, totals=())
    owner = totals[0]
    margin = owner.score / totals[1].score if len(totals) > 1 and totals[1].score > 0 else None
    files = sum(groups.count(g) for g in present if names[g][0] == owner.agent)
    return AgentChoice(
        name=owner.agent, score=owner.score, files=files, margin=margin, contenders=len(totals),
        totals=tuple(totals),
    )
