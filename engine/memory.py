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

import datetime as _dt
import gc
import os
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path

from . import gate as gate_mod
from .aliases import Alias, expand, load_aliases
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
from .catalogue import Catalogue, Scored, make_entry
from .covered import COVERAGE_RULE_ON, coverage
from .excerpt import count_hits, excerpt
from .fleet import Fleet, discover
from .fold import fold
from .misses import misses_path, record
from .normalize import terms as normalise
from .roster import Roster, roster_of
from .purpose.weights import PURPOSE_DEFAULT_ON
from .rrf import rrf
from .suggest import suggest
from .textindex import FileRecord, IndexReport, TextIndex

# The pool the fusion is computed over is a constant: a caller's page size chooses how much
# of the ordering it sees, never what the ordering is.
RANK_CANDIDATE_POOL = 50
DEFAULT_TOP = 5
# A note of more chunks than this is searched for its passages rather than read whole.
PASSAGE_SCAN_CHUNKS = 2_000
# The cycle collector's full passes walk every live container. At 60,000 chunks a snapshot
# and the caches filled while building it are ~60,000 of them, and a heavy question
# allocates enough to set a pass off every few dozen asks: ~50 ms each (measured), most of
# the fused answer's worst times. A snapshot is immutable and acyclic, so once a large one
# is built it is moved out of the collector's sight (gc.freeze); small fleets never pay.
FREEZE_ABOVE_CHUNKS = 10_000
_frozen = False


def _out_of_collectors_sight() -> None:
    """gc.freeze() what is alive now; a previous freeze is lifted and collected first, so
    anything frozen with an old snapshot that has since become garbage is still reclaimed."""
    global _frozen
    if _frozen:
        gc.unfreeze()
        gc.collect()
    gc.freeze()
    _frozen = True


@dataclass(frozen=True)
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
    aliases_sig: tuple[int, int] | None = None  # kb-aliases.txt (mtime_ns, size) when read


def _file_sig(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


class Memory:
    """Route, retrieve and remember over a set of bases (or fleet roots)."""

    def __init__(self, paths: list[str | os.PathLike[str]] | str | os.PathLike[str], *, update: bool = True):
        if isinstance(paths, (str, os.PathLike)):
            paths = [paths]
        self.fleet: Fleet = discover(list(paths))
        self.indexes: dict[str, TextIndex] = {b.name: TextIndex(b) for b in self.fleet.bases}
        self._snapshot: Snapshot | None = None
        self._swap = threading.Lock()
        self._generation = 0
        self._update_on_load = update
        self.last_reports: list[IndexReport] = []
        self._pending_reindexed = 0
        self._roster: Roster | None = None
        self._classifier = None  # engine.classifier.Classifier, made on the first question

    # -- the fleet -------------------------------------------------------------------

    @property
    def settings(self) -> dict[str, str]:
        """fleet.txt, as `key = value` pairs."""
        return self.fleet.settings

    @property
    def bases(self):
        return self.fleet.bases

    def snapshot(self) -> Snapshot:
        snap = self._snapshot
        if snap is None:
            with self._swap:
                if self._snapshot is None:
                    if self._update_on_load:
                        self._refresh_locked(stale_only=True)
                    else:
                        self._snapshot = self._build_snapshot([])
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

    def refresh(self, *, force: bool = False) -> list[IndexReport]:
        """Bring every base's index up to date and swap in a new catalogue."""
        with self._swap:
            return self._refresh_locked(stale_only=False, force=force)

    def _refresh_locked(self, *, stale_only: bool, force: bool = False) -> list[IndexReport]:
        reports = []
        for name, idx in self.indexes.items():
            if stale_only and not idx.stale() and not idx.was_rebuilt:
                reports.append(None)
                continue
            reports.append(idx.update(force=force))
        real = [r for r in reports if r is not None]
        self.last_reports = real
        self._pending_reindexed = sum(r.touched for r in real)
        self._snapshot = self._build_snapshot(real)
        return real

    def _build_snapshot(self, reports: list[IndexReport]) -> Snapshot:
        entries = []
        records: dict[str, dict[str, FileRecord]] = {}
        unreachable = []
        chunks = 0
        for base in self.fleet.bases:
            recs = self.indexes[base.name].records()
            records[base.name] = {r.path: r for r in recs}
            for r in recs:
                chunks += r.chunks
                if r.is_entry:
                    entries.append(make_entry(base.name, r.path, r.title, r.purpose, r.species, r.keys))
                else:
                    unreachable.append(f"{base.name}/{r.path}")
        skipped = [f"{b.name}/{s}" for b in self.fleet.bases for s in self.indexes[b.name].skipped()]
        aliases_sig = _file_sig(self.fleet.aliases_path)  # before the read: a later edit is seen
        aliases, alias_problems = load_aliases(self.fleet.aliases_path)
        self._generation += 1
        snap = Snapshot(
            catalogue=Catalogue(entries),
            records=records,
            aliases=tuple(aliases),
            alias_problems=tuple(alias_problems),
            unreachable=tuple(sorted(unreachable)),
            skipped=tuple(skipped),
            chunks=chunks,
            generation=self._generation,
            aliases_sig=aliases_sig,
        )
        if chunks >= FREEZE_ABOVE_CHUNKS:
            _out_of_collectors_sight()
        return snap

    @property
    def index_was_rebuilt(self) -> bool:
        return any(i.was_rebuilt for i in self.indexes.values())

    # -- asking ----------------------------------------------------------------------

    def ask(
        self,
        question: str,
        *,
        top: int = DEFAULT_TOP,
        record_miss: bool = True,
        with_passages: bool = True,
        purpose: str | bool | None = None,
        near: list[str] | None = None,
        boosts: list | None = None,
        offset: int = 0,
        rerank: object = False,
        classify: bool = True,
    ) -> Answer:
        """The whole answer to one question: verdict, owner, keyword ranking, reading list.

        `purpose` (documents | conversation | workspace) re-orders the reading list's pool by
        the purpose fusion (engine/purpose), with `near` anchors and `boosts` rules; the
        owner and the verdict never change. `offset` pages into the one ordering.
        """
        if rerank is not False and rerank is not None:
            # The cross-encoder re-orders the page this same call serves (engine/rerank); True
            # or a RerankRequest(model, precision, use_summary). Its refusals propagate, typed.
            from .rerank.reading import RerankRequest

            request = RerankRequest.of(rerank)  # refused before any work
            opts = {"purpose": purpose, "near": near, "boosts": boosts, "offset": offset}
            plain = self.ask(question, top=top, record_miss=record_miss, with_passages=with_passages, **opts)
            return self.rerank(plain, request, top=top, with_passages=with_passages, **opts)
        # Refused before any work: a bad purpose, near or boost is one line, not a ranking.
        base_roots = {b.name: b.root for b in self.fleet.bases}
        fusion_opts = None
        if purpose is not None or near is not None or boosts or PURPOSE_DEFAULT_ON:
            # Imported on use: a plain route (the common case) does not pay for the stage.
            from .purpose import reading as fusion_stage

            fusion_opts = fusion_stage.options_for(purpose, near, boosts, bases=base_roots)
        t0 = time.perf_counter()
        snap = self.snapshot()
        cat = snap.catalogue
        q_terms = normalise(question)
        segments = expand(q_terms, list(snap.aliases))
        all_terms = list(dict.fromkeys(t for seg in segments for t in seg))

        scored = cat.score(segments)
        t1 = time.perf_counter()
        text_hits = self._text_leg(all_terms)
        t2 = time.perf_counter()

        keyword = tuple(_keyword_hit(s) for s in scored)
        n = cat.n
        top_score = scored[0].score if scored else 0.0
        verdict = gate_mod.verdict_for(top_score, n)
        if verdict == "hit" and COVERAGE_RULE_ON:
            verdict = self._covered_verdict(scored[0].entry, q_terms)
        served = verdict != "nothing"
        gate = Gate(
            served=served,
            floor=gate_mod.floor_for(n),
            ranked_by_text_only=not scored and bool(text_hits),
            entries=n,
            min_entries_to_route=gate_mod.MIN_ENTRIES_TO_ROUTE,
        )
        kw_margin = None
        if len(scored) > 1 and scored[1].score > 0:
            kw_margin = scored[0].score / scored[1].score
        text_ids = [h.id for h in text_hits]
        agreement = 0
        if keyword:
            agreement = 1 + (keyword[0].id in text_ids)
        confidence = Confidence(agreement=agreement, keyword_score=top_score, margin=kw_margin)
        agent = _choose_agent(scored)
        if classify and self.roster.classifier and question.strip():
            # After the fold and never inside retrieval: it chooses who answers, nothing else.
            agent = self._classified(question, keyword, agent)

        fused = rrf([k.id for k in keyword], text_ids)
        fusion = None
        if fusion_opts is not None:
            fusion = fusion_stage.fuse_reading_list(
                fused, options=fusion_opts, snapshot=snap, records=snap.records, base_roots=base_roots,
                generation=snap.generation, offset=max(offset, 0), limit=top,
            )
            fused = fusion.rows
        results = self._results(snap, fused[max(offset, 0):], keyword, text_hits, all_terms, top, with_passages)
        if fusion is not None:
            results = [replace(r, fusion=fusion.fusion[r.id]) for r in results]
        t3 = time.perf_counter()

        suggestions: tuple[str, ...] = ()
        miss = None
        if not served:
            suggestions = tuple(suggest(q_terms, cat.keys_as_written()))
        answer = Answer(
            question=question,
            terms=tuple(all_terms),
            verdict=verdict,
            gate=gate,
            confidence=confidence,
            agent=agent,
            keyword=keyword,
            text=tuple(text_hits),
            results=tuple(results),
            indexed=Indexed(entries=n, agents=len(self.fleet.bases), aliases=len(snap.aliases), chunks=snap.chunks),
            unreachable=snap.unreachable,
            skipped=snap.skipped,
            index_was_rebuilt=self.index_was_rebuilt,
            reindexed=self._pending_reindexed,
            suggestions=suggestions,
            miss=None,
            timings=Timings(
                keyword_ms=(t1 - t0) * 1000, text_ms=(t2 - t1) * 1000, fuse_ms=(t3 - t2) * 1000,
                total_ms=(time.perf_counter() - t0) * 1000,
            ),
            stages={"fusion": fusion.stamp} if fusion is not None else {},
        )
        if record_miss:
            miss = self.recall_loss(answer)
            if miss is not None:
                answer = replace(answer, miss=miss)
        return answer

    def keyword_only(self, question: str, *, extra_aliases: tuple[Alias, ...] = ()) -> list[KeywordHit]:
        """The keyword ranking alone: what the owner and the verdict are computed from.

        `extra_aliases` asks "what if this line were in kb-aliases.txt" (kb misses proves a
        proposed line before anyone writes it) without touching the file.
        """
        snap = self.snapshot()
        segments = expand(normalise(question), [*snap.aliases, *extra_aliases])
        return [_keyword_hit(s) for s in snap.catalogue.score(segments)]

    def rerank(
        self, answer: Answer, request: object = True, *, top: int | None = None, with_passages: bool = True, **ask_options
    ) -> Answer:
        """`answer` with its reading list re-ordered by the cross-encoder, stamped in stages["rerank"].

        Apart from `ask` so a surface paints the fused list first and the rerank after. Pass the
        options the answer was asked with (purpose, near, boosts, offset): the stage re-asks for
        the rule's window of that same ordering. Owner and verdict are never touched. Raises the
        stage's typed refusals; RerankBudgetExceeded carries the un-reranked rows.
        """
        from .rerank.reading import rerank_answer

        return rerank_answer(self, answer, request, top=top, with_passages=with_passages, **ask_options)

    def warm_rerank(self, request: object = True) -> dict:
        """Pay the cross-encoder's one-time load now (it is never charged to a rerank's budget)."""
        from .rerank.reading import warm_for

        return warm_for(self, request)

    def route(self, question: str, **kw) -> Answer:
        """The owner and the verdict (the whole answer; callers read `agent` and `verdict`)."""
        return self.ask(question, **kw)

    def retrieve(self, question: str, *, top: int = DEFAULT_TOP) -> list[Result]:
        """The fused reading list alone, recording no miss."""
        return list(self.ask(question, top=top, record_miss=False, classify=False).results)

    @property
    def roster(self) -> Roster:
        """Who is in the fleet, what each does and where it stops (fleet.txt + agent.txt)."""
        if self._roster is None:
            self._roster = roster_of(self.fleet)
        return self._roster

    def _classified(self, question: str, keyword: tuple[KeywordHit, ...], fold_choice: AgentChoice) -> AgentChoice:
        # Imported here: subprocess and tempfile cost `kb route` milliseconds it should not pay
        # on a fleet with no classifier.
        from .classifier import Classifier, choose
        from .dossier import build_dossier

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
        written atomically, never over an existing file, and indexed. See engine/remember.py.
        """
        from .remember import remember

        return remember(self, claim, path, write=write, keys=keys, title=title, purpose=purpose)

    def recall_loss(self, answer: Answer) -> Miss | None:
        """The one place that decides whether an answer was a recall loss, and records it.

        A guess is not a loss: it was served, with its warning. A question the text scorer
        answered but the gate refused is a loss: nothing was served. The write can fail (a
        read-only fleet); the loss still comes back, with `recorded: false` and the error.
        """
        if answer.gate.served or not answer.question.strip():
            return None
        path = misses_path(self.fleet.root)
        today = _dt.date.today().isoformat()
        offered = list(answer.suggestions)
        try:
            record(path, answer.question, offered, today)
            recorded, error = True, None
        except OSError as e:
            recorded, error = False, f"{path}: {e.strerror or e}"
        return Miss(
            question=answer.question, looked_like=tuple(offered), date=today, path=str(path),
            recorded=recorded, error=error,
        )

    # -- the legs ----------------------------------------------------------------------

    def _covered_verdict(self, top, q_terms: list[str]) -> str:
        """hit, or guess when the top entry holds too few of the question's words (engine/covered.py)."""
        idx = self.indexes.get(top.base)
        label = " ".join((top.title, top.purpose, *top.keys))
        held = (lambda ts: idx.terms_held(top.path, ts)) if idx is not None else (lambda ts: set())
        return "hit" if coverage(q_terms, label, held).enough else "guess"

    def _text_leg(self, terms: list[str]) -> list[TextHit]:
        hits: list[TextHit] = []
        for name, idx in self.indexes.items():
            rows, _sent = idx.search(terms, RANK_CANDIDATE_POOL)
            hits.extend(TextHit(name, path, score, hp, body) for path, score, hp, body, _line in rows)
        # BM25 values from separate bases are compared as they are: each base's statistics
        # are its own, which is the price of an index per agent (docs/decisions.md, "Several
        # bases, one text leg").
        hits.sort(key=lambda h: (h.bm25, h.id))
        return hits[:RANK_CANDIDATE_POOL]

    def passages_for(self, base: str, path: str, terms: list[str], limit: int = 3) -> list[Passage]:
        """A note's chunks that hold the most of the question's words, best first."""
        idx = self.indexes.get(base)
        if idx is None:
            return []
        chunks = idx.passage_candidates(path, terms, PASSAGE_SCAN_CHUNKS)
        ranked = sorted(chunks, key=lambda ic: (-count_hits(ic[1][0] + " " + ic[1][1], terms), ic[0]))
        return [Passage(hp, body, excerpt(hp, body, terms)) for _, (hp, body, _line) in ranked[:limit]]

    def _results(self, snap, fused, keyword, text_hits, terms, top, with_passages) -> list[Result]:
        kw_by_id = {k.id: k for k in keyword}
        text_by_id = {h.id: h for h in text_hits}
        out = []
        for ident, score, (krank, trank) in fused[: max(top, 0)]:
            base, path = ident.split("/", 1)
            rec = snap.records.get(base, {}).get(path)
            k = kw_by_id.get(ident)
            t = text_by_id.get(ident)
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


def _choose_agent(scored: list[Scored]) -> AgentChoice:
    totals = fold([(s.entry.base, s.entry.species, s.score) for s in scored])
    if not totals:
        return AgentChoice(name=None, score=0.0, files=0, margin=None, contenders=0, totals=())
    owner = totals[0]
    margin = owner.score / totals[1].score if len(totals) > 1 and totals[1].score > 0 else None
    files = sum(1 for s in scored if s.entry.base == owner.agent)
    return AgentChoice(
        name=owner.agent, score=owner.score, files=files, margin=margin, contenders=len(totals),
        totals=tuple(totals),
    )
