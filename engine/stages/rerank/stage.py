"""The rerank stage ("The rerank stage"): re-score the head of the fused reading list with a cross-encoder.

It re-orders the passages a reader is handed and nothing else: never the owner, never the
verdict, never which rows are on the page. Every rule here is the seed's:
- the fixed rule picks topK and the budget from the request alone (rule.py);
- the window is scored longest first, one pair then four at a time, and after each sub-batch
  the rest is projected from the rate just measured; a projection over budget refuses before
  the next pair is paid for, carrying the un-reranked candidates;
- a per-process memo refuses at once on a host already measured too slow for a store;
- the one-time load is not charged to the budget (`warm` pays it up front);
- the stamp at <base>/.kb/rerank-stamp.json refuses a different model until restamped;
- an LRU cache of 8,192 pair scores, keyed by the normalised question, the row id, the row's
  version and the text rule, cannot change an answer: a cached score is the score;
- logits within 1e-3 are a tie and keep the fused order; rows past topK are untouched.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from dataclasses import replace
from .errors import RerankBudgetExceeded, RerankCallerError, RerankUnavailable
from .model import CrossEncoder
from .rule import RERANK_TEXT_CAP_TOKENS, RERANK_TIE_BAND, RerankParams, default_rerank_params, explicit_rerank_params
from .stamp import check_stamp, stamp_path, write_stamp

log = logging.getLogger("engine.stages.rerank")

# One call inserts at most 128 scores, so this holds the last ~64 full-width questions.
CACHE_ENTRIES = 8192
# The first sub-batch is one pair, so the worst a refusal can cost is one pair; then four at a time.
FIRST_SUB_BATCH = 1
SUB_BATCH = 4
MODEL_ENV = "KB_RERANK_MODEL"


@dataclass(frozen=True)
class Candidate:
    """One row as the stage sees it: what it is scored on and what version of it that was."""

    id: str
    text: str  # the passage text (the row's indexed chunks, best first)
    summary: str = ""  # the note's `Exists to:` line
    version: str = ""  # the row's content hash; empty means never cached


def candidates_from_results(results: Iterable[Any]) -> list[Candidate]:
    """Candidates from `engine.answer.Result` rows (fields base, path, purpose, passages, content_hash)."""
    out = []
    for r in results:
        text = "\n\n".join(p.text for p in (r.passages or ()) if p.text and p.text.strip())
        out.append(Candidate(id=f"{r.base}/{r.path}", text=text, summary=(r.purpose or "").strip(), version=r.content_hash or ""))
    return out


@dataclass(frozen=True)
class RerankPage:
    """The stage's answer over candidate ids: the new order, the scores, the page stamp."""

    order: tuple[int, ...]  # indexes into the candidates given, the whole page
    scores: dict[str, float]  # row id -> logit, reranked rows only
    stamp: dict[str, Any]


@dataclass(frozen=True)
class RerankOutcome:
    """`rerank_results`' answer: the page re-ordered, each reranked row carrying rerank_score."""

    results: tuple[Any, ...]
    stamp: dict[str, Any]
    scores: dict[str, float] = field(default_factory=dict)


def normalise_question(q: str) -> str:
    """Trimmed and whitespace runs collapsed, nothing more: case and punctuation change the tokens."""
    return re.sub(r"\s+", " ", q).strip()


def order_with_ties(scores: Sequence[float], band: float = RERANK_TIE_BAND) -> list[int]:
    """Indexes by score descending; rows whose scores chain within `band` keep their given order.

    A tie band that is not transitive cannot be a sort key, so ties are groups: sort by score,
    cut the sorted list wherever two neighbours differ by more than the band, and inside each
    group restore the given order. f32 blocking noise (~1e-6) can then never reshuffle rows.
    """
    by_score = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    out: list[int] = []
    group: list[int] = []
    for i in by_score:
        if group and scores[group[-1]] - scores[i] > band:
            out.extend(sorted(group))
            group = []
        group.append(i)
    out.extend(sorted(group))
    return out


class _LRU:
    def __init__(self, size: int) -> None:
        self.size = size
        self._d: OrderedDict[tuple[str, ...], float] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[str, ...]) -> float | None:
        with self._lock:
            v = self._d.get(key)
            if v is not None:
                self._d.move_to_end(key)
            return v

    def put(self, key: tuple[str, ...], value: float) -> None:
        with self._lock:
            self._d[key] = value
            self._d.move_to_end(key)
            while len(self._d) > self.size:
                self._d.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._d.clear()

    def __len__(self) -> int:
        return len(self._d)


# The slow-host memo: (weights digest, precision, store) -> the last per-pair ms measured there.
# It decides whether the stage runs on this host under this load, never what it returns.
_SLOW_HOST: dict[tuple[str, str, tuple[str, ...]], float] = {}
_SLOW_NARRATED: set[tuple[str, str, tuple[str, ...]]] = set()
_MEMO_LOCK = threading.Lock()


def forget_slow_host() -> None:
    """Drop every per-pair rate remembered in this process (a host that is no longer busy)."""
    with _MEMO_LOCK:
        _SLOW_HOST.clear()
        _SLOW_NARRATED.clear()


class RerankStage:
    """One loaded cross-encoder with its score cache; shared per process via `get_stage`."""

    def __init__(
        self, model_dir: str | os.PathLike[str], precision: str = "fp32", threads: int | None = None, *, spin: bool | None = None
    ) -> None:
        self.model = CrossEncoder(model_dir, precision, threads, spin=spin)
        self.cache = _LRU(CACHE_ENTRIES)

    def warm(self) -> dict[str, Any]:
        """Pay the one-time load up front; a serving process under a latency law calls this at start."""
        was_loaded = self.model.loaded
        info = self.model.load()
        return {
            "model": info.model_id, "dir": info.dir, "precision": info.precision,
            "weights_sha256": info.weights_sha256, "load_ms": round(info.load_ms, 1), "paid_now": not was_loaded,
        }

    def restamp(self, base_dir: str | os.PathLike[str]) -> dict[str, Any]:
        """Rewrite the base's stamp to the loaded model and drop the score cache. The one cure."""
        info = self.model.load()
        self.cache.clear()
        stamp = write_stamp(stamp_path(base_dir), info)
        with _MEMO_LOCK:  # a new model's rate is not the old one's
            for k in [k for k in _SLOW_HOST if k[0] != info.weights_sha256]:
                _SLOW_HOST.pop(k, None)
        return stamp

    def rerank(
        self,
        question: str,
        candidates: Sequence[Candidate],
        limit: int,
        stamp_dirs: Iterable[str | os.PathLike[str]],
        *,
        use_summary: bool = False,
        top_k: int | None = None,
        budget_ms: float | None = None,
        page: tuple[Any, ...] | None = None,
    ) -> RerankPage:
        """The window's new order: check, load and gate; take what the cache holds; score the
        rest within the budget; order with ties; stamp what was done."""
        params = _checked_params(question, limit, len(candidates), top_k, budget_ms)
        k = params.top_k
        dirs = sorted({str(Path(d)) for d in stamp_dirs})
        if k and not dirs:
            raise RerankCallerError("rerank needs the base directories its rows come from (their stamps live there)")
        window = list(candidates[:k])
        run = _Run(k=k, page=page if page is not None else tuple(candidates), budget_ms=params.budget_ms)

        was_loaded = self.model.loaded
        info = self.model.load() if k else None  # not charged to the budget
        # The gate: after the load, before the first pair, so a mismatch pays one read and no forward pass.
        for d in dirs if k else ():
            check_stamp(stamp_path(d), info)  # type: ignore[arg-type]

        texts = [c.summary if use_summary and c.summary else c.text for c in window]
        run.summaries = sum(1 for c in window if use_summary and c.summary)
        scorable = [i for i, t in enumerate(texts) if t.strip()]
        unscorable = [i for i, t in enumerate(texts) if not t.strip()]

        qn = normalise_question(question)
        qkey = hashlib.sha256(qn.encode("utf-8")).hexdigest()
        model_key = f"{info.weights_sha256}:{info.precision}" if info else ""

        def cache_key(c: Candidate) -> tuple[str, ...]:
            # The text rule is in the key: one row scored on its summary and on its passage is two pairs.
            return (model_key, qkey, c.id, c.version, "summary" if use_summary and c.summary else "passage")

        scores, misses = self._from_cache(window, scorable, cache_key)
        run.hits, run.misses = len(scores), len(misses)

        store = tuple(dirs)
        run.memo_key = (info.weights_sha256, info.precision, store) if info else ("", "", store)
        _refuse_on_a_known_slow_host(run, store)

        ms = self._score_misses(qn, texts, window, misses, scores, run, cache_key)

        ranked = order_with_ties([scores[i] for i in scorable])
        order = [scorable[j] for j in ranked] + unscorable + list(range(k, len(candidates)))
        stamp = self._stamp(info, params, run, ms, len(unscorable), "summary-then-passage" if use_summary else "passage", dirs)
        if info is not None and not was_loaded:
            stamp["load_ms"] = round(info.load_ms, 1)  # paid by this call, outside the budget
        stamp["summary"] = _summary_line(stamp, run, params, len(unscorable))
        return RerankPage(order=tuple(order), scores={window[i].id: scores[i] for i in scorable}, stamp=stamp)

    def _from_cache(self, window: list[Candidate], scorable: list[int], cache_key) -> tuple[dict[int, float], list[int]]:
        """The scores the cache holds, by place in the window, and the places it does not hold."""
        scores: dict[int, float] = {}
        misses: list[int] = []
        for i in scorable:
            c = window[i]
            v = self.cache.get(cache_key(c)) if c.version else None
            if v is None:
                misses.append(i)
            else:
                scores[i] = v
        return scores, misses

    def _score_misses(self, qn: str, texts: list[str], window: list[Candidate], misses: list[int],
                      scores: dict[int, float], run: _Run, cache_key) -> float:
        """Score the pairs the cache did not hold into `scores` and cache them; the wall's ms."""
        # The scoring wall starts here: tokenising is part of what a pair costs.
        t0 = time.perf_counter()
        if misses:
            self._score_within_budget(qn, [texts[i] for i in misses], misses, scores, run, t0)
            for i in misses:
                if window[i].version:  # a row with no version is never cached: one slot for every revision would lie
                    self.cache.put(cache_key(window[i]), scores[i])
        return (time.perf_counter() - t0) * 1000.0

    def _score_within_budget(
        self, qn: str, texts: list[str], misses: list[int], scores: dict[int, float], run: _Run, t0: float
    ) -> None:
        """Score the pairs the cache did not hold into `scores`, dearest first, a sub-batch at a
        time; refuse as soon as the measured rate projects past the budget."""
        q_enc = self.model.question_ids(qn)
        pairs = self.model.pairs(q_enc, texts)
        run.capped = sum(p.capped for p in pairs)
        # Longest first: the probe pair is the dearest, so the projection is the worst case.
        todo = sorted(range(len(misses)), key=lambda j: (-len(pairs[j]), j))
        pos = 0
        while pos < len(todo):
            size = FIRST_SUB_BATCH if pos == 0 else SUB_BATCH
            chunk = todo[pos : pos + size]
            for j, s in zip(chunk, self.model.score([pairs[j] for j in chunk])):
                scores[misses[j]] = s
            pos += len(chunk)
            run.scored += len(chunk)
            run.sub_batches += 1
            elapsed = (time.perf_counter() - t0) * 1000.0
            per_pair = elapsed / run.scored
            remaining = len(todo) - pos
            projected = per_pair * remaining
            if elapsed + projected > run.budget_ms:
                with _MEMO_LOCK:
                    _SLOW_HOST[run.memo_key] = per_pair
                raise RerankBudgetExceeded(
                    k=run.k, pairs_scored=run.scored, per_pair_ms=per_pair, projected_ms=projected,
                    elapsed_ms=elapsed, budget_ms=run.budget_ms, candidates=run.page,
                )
        with _MEMO_LOCK:
            _SLOW_HOST[run.memo_key] = (time.perf_counter() - t0) * 1000.0 / run.scored

    def _stamp(
        self, info: Any, params: RerankParams, run: _Run, ms: float, unscorable: int, text_rule: str, dirs: list[str]
    ) -> dict[str, Any]:
        """What this call did, as the answer's `stages.rerank` carries it."""
        return {
            "model": info.model_id if info else None,
            "precision": info.precision if info else self.model.precision,
            "weights_sha256": info.weights_sha256 if info else None,
            "k": run.k,
            "ms": round(ms, 2),
            "budget_ms": params.budget_ms,
            "applied": params.applied,
            "pairs_scored": run.scored,
            "per_pair_ms": round(ms / run.scored, 3) if run.scored else 0.0,
            "projected_ms": 0.0,
            "sub_batches": run.sub_batches,
            "unscorable": unscorable,
            "text_rule": text_rule,
            "summaries": run.summaries,
            "capped": run.capped,
            "text_cap_tokens": RERANK_TEXT_CAP_TOKENS,
            "cache_hits": run.hits,
            "cache_misses": run.misses,
            "threads": info.threads if info else self.model.threads,
            "spin": self.model.spin,
            "stamps": [str(stamp_path(d)) for d in dirs] if run.k else [],
        }


@dataclass
class _Run:
    """One rerank call's counts, as its steps add to them."""

    k: int
    page: tuple[Any, ...]
    budget_ms: float
    memo_key: tuple[str, str, tuple[str, ...]] = ("", "", ())
    summaries: int = 0
    hits: int = 0
    misses: int = 0
    scored: int = 0
    sub_batches: int = 0
    capped: int = 0


def _refuse_on_a_known_slow_host(run: _Run, store: tuple[str, ...]) -> None:
    """Refuse before any pair when the rate last measured here already projects past the budget."""
    with _MEMO_LOCK:
        rate = _SLOW_HOST.get(run.memo_key)
    if rate is not None and run.misses and run.misses * rate > run.budget_ms:
        with _MEMO_LOCK:
            first = run.memo_key not in _SLOW_NARRATED
            _SLOW_NARRATED.add(run.memo_key)
        if first:
            log.warning("rerank: %s measured %.1f ms per pair here; refusing at once while that holds", ", ".join(store), rate)
        raise RerankBudgetExceeded(
            k=run.k, pairs_scored=0, per_pair_ms=rate, projected_ms=run.misses * rate, elapsed_ms=0.0,
            budget_ms=run.budget_ms, candidates=run.page, memo=True,
        )


def _summary_line(stamp: dict[str, Any], run: _Run, params: RerankParams, unscorable: int) -> str:
    """One line for text surfaces (engine/render.py prints a stage's "summary")."""
    if not run.k:
        return "no rows to re-score"
    return (
        f"{stamp['model']} {stamp['precision']}: top {run.k} re-scored in {stamp['ms']:.0f} ms of {params.budget_ms:.0f} "
        f"({run.scored} scored at {stamp['per_pair_ms']:.1f} ms/pair, {run.hits} cached"
        + (f", {unscorable} without text" if unscorable else "") + ")"
    )

_STAGES: dict[tuple[str, str, int | None], RerankStage] = {}
_STAGES_LOCK = threading.Lock()


def get_stage(model_dir: str | os.PathLike[str], precision: str = "fp32", threads: int | None = None) -> RerankStage:
    """The process's one stage for a model directory and precision: one load, one cache."""
    key = (str(Path(model_dir).resolve()), precision, threads)
    with _STAGES_LOCK:
        stage = _STAGES.get(key)
        if stage is None:
            stage = _STAGES[key] = RerankStage(model_dir, precision, threads)
        return stage


def clear_caches() -> None:
    """Drop every stage's score cache (a restamp anywhere in the process calls this)."""
    with _STAGES_LOCK:
        for s in _STAGES.values():
            s.cache.clear()


def resolve_model_dir(explicit: str | os.PathLike[str] | None, settings: Mapping[str, str] | None = None) -> Path:
    """The model directory: an explicit argument, else $KB_RERANK_MODEL, else `rerank_model =` in fleet.txt."""
    for value, where in ((explicit, "--rerank-model"), (os.environ.get(MODEL_ENV), MODEL_ENV), ((settings or {}).get("rerank_model"), "fleet.txt rerank_model")):
        if value:
            return Path(os.path.expanduser(str(value)))
    raise RerankUnavailable(
        "model-dir-unset", "rerank", "no cross-encoder named",
        f"pass --rerank-model DIR, set {MODEL_ENV}, or add `rerank_model = DIR` to fleet.txt",
    )


def _checked_params(question: object, limit: int, n: int, top_k: int | None, budget_ms: float | None) -> RerankParams:
    """The window and budget a rerank of `n` candidates runs with; a question that is no text is refused."""
    if not isinstance(question, str) or not question.strip():
        raise RerankCallerError("rerank needs a text question: a cross-encoder scores (question, row) pairs")
    if top_k is None and budget_ms is None:
        return default_rerank_params(limit, n)
    return explicit_rerank_params(top_k, budget_ms, n)


def rerank_results(
    question: str,
    results: Sequence[Any],
    limit: int,
    model_dir: str | os.PathLike[str],
    base_dirs: Mapping[str, str | os.PathLike[str]],
    use_summary: bool = False,
    *,
    precision: str = "fp32",
    top_k: int | None = None,
    budget_ms: float | None = None,
) -> RerankOutcome:
    """Re-order the fused reading list (`engine.answer.Result` rows). The lead's one call.

    `base_dirs` maps each row's `base` to its directory (the stamp is `<dir>/.kb/rerank-stamp.json`).
    Raises RerankBudgetExceeded (with `.candidates` = `results`, unchanged), RerankStampMismatch,
    RerankUnavailable or RerankCallerError; never serves a partial order.
    """
    results = tuple(results)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise RerankCallerError(f"limit must be a positive integer, got {limit!r}")
    params_k = (default_rerank_params(limit, len(results)).top_k if top_k is None and budget_ms is None
                else explicit_rerank_params(top_k, budget_ms, len(results)).top_k)
    missing = sorted({r.base for r in results[:params_k] if r.base not in base_dirs})
    if missing:
        raise RerankCallerError(f"no base directory given for {', '.join(missing)} (needed for the rerank stamp)")
    dirs = {str(base_dirs[r.base]) for r in results[:params_k]}
    stage = get_stage(model_dir, precision)
    page = stage.rerank(
        question, candidates_from_results(results), limit, dirs,
        use_summary=use_summary, top_k=top_k, budget_ms=budget_ms, page=results,
    )
    out = []
    for i in page.order:
        r = results[i]
        s = page.scores.get(r.id)
        out.append(replace(r, rerank_score=s) if s is not None else r)
    return RerankOutcome(results=tuple(out), stamp=page.stamp, scores=page.scores)


def warm(model_dir: str | os.PathLike[str], precision: str = "fp32") -> dict[str, Any]:
    """Pay the model load up front (not charged to any budget)."""
    return get_stage(model_dir, precision).warm()


def restamp(base_dir: str | os.PathLike[str], model_dir: str | os.PathLike[str], precision: str = "fp32") -> dict[str, Any]:
    """`kb rerank restamp BASE`: stamp the base with this model and clear every score cache."""
    stamp = get_stage(model_dir, precision).restamp(base_dir)
    clear_caches()
    return stamp
