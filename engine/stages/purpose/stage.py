"""The fusion stage: order a constant-width candidate pool by integer multiply-add.

    fusedScore = w_text x text + w_graph x graph + w_recency x recency + w_boost x boost

Each signal is an integer on [0, SCALE], each weight an integer, the four weights summing to
WEIGHT_TOTAL. Integer addition is associative, so no thread count or evaluation order can
change a score; ties break by row id ascending. Every row carries its four contributions,
which add up to its fusedScore to the digit.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from engine.stages.purpose.errors import FusionOptionError
from engine.stages.purpose.signals import (
    CLOCK_QUANTUM_MS,
    FRONTIER_CAP,
    MAX_HOPS,
    boost_signal,
    hop_signal,
    quantise_clock,
    recency_signal,
    text_signal,
    walk,
)
from engine.stages.purpose.weights import DEFAULT_PURPOSE, SCALE, Purpose, Weights, get_purpose

# With no `near`, the walk is seeded by the head of the text ordering: the rows this question
# names. They seed the walk but score 0 on graph (no credit for being themselves).
INFERRED_ANCHORS = 3
# The metadata a boost rule may test; a closed set so a typo is refused, not silently inert.
BOOST_FIELDS = ("agent", "base", "species", "path", "title", "id")

SIGNALS = ("text", "graph", "recency", "boost")


@dataclass(frozen=True)
class PoolRow:
    """One candidate: `id` is "base/path", `text` the row's RRF score (the raw text signal),
    `date_ms` the note's date (its `Date:`/`Updated:` line, else mtime) or None."""

    id: str
    text: float
    date_ms: int | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Boost:
    """`{field, equals, amount}`: rows whose metadata[field] == equals gain amount x SCALE on boost."""

    field: str
    equals: str
    amount: float  # a fraction of the boost range, in [0, 1]
    grid: int  # amount on the integer grid, fixed once so sums are integer sums

    def to_json(self) -> dict[str, Any]:
        return {"field": self.field, "equals": self.equals, "amount": self.amount}


@dataclass(frozen=True)
class FusionOptions:
    purpose: Purpose
    near: tuple[str, ...] | None  # None: anchors inferred; () is a statement ("no anchors")
    boosts: tuple[Boost, ...]


@dataclass(frozen=True)
class Contribution:
    raw: Any  # the signal before the grid: RRF score, hops, age ms, summed boost amount
    normalized: int
    weight: int
    contribution: int  # weight x normalized, and nothing else

    def to_json(self) -> dict[str, Any]:
        return {"raw": self.raw, "normalized": self.normalized, "weight": self.weight, "contribution": self.contribution}


@dataclass(frozen=True)
class FusedRow:
    """One ordered row. `raw` and `normalized` are the four signals in SIGNALS order; the
    contributions are derived from them and the purpose's weights on first read, so the
    stage's hot loop builds one object per row rather than five."""

    row: PoolRow
    fused_score: int
    anchor: str | None  # "explicit", "inferred" or None
    purpose: str
    weights: Weights
    raw: tuple[Any, Any, Any, Any]  # RRF score, hops (None: unreached), age ms (None: undated), boost sum
    normalized: tuple[int, int, int, int]

    @property
    def id(self) -> str:
        return self.row.id

    @cached_property
    def contributions(self) -> dict[str, Contribution]:
        w = self.weights
        return {
            name: Contribution(raw, norm, weight, weight * norm)
            for name, raw, norm, weight in zip(SIGNALS, self.raw, self.normalized, (w.text, w.graph, w.recency, w.boost))
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "fusedScore": self.fused_score,
            "purpose": self.purpose,
            "anchor": self.anchor,
            "contributions": {k: c.to_json() for k, c in self.contributions.items()},
        }


@dataclass(frozen=True)
class PageStamp:
    """What one ordering was built against: with the question and the index generation,
    (purpose, pool, now_ms) name the ordering a page was cut from."""

    purpose: str
    pool: int
    now_ms: int
    weights: dict[str, int]
    half_life_ms: int
    anchors: tuple[str, ...]
    anchors_inferred: bool
    boosts: tuple[Boost, ...]
    hops_walked: int
    frontier_truncated: bool
    offset: int = 0
    limit: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "purpose": self.purpose,
            "pool": self.pool,
            "nowMs": self.now_ms,
            "clockQuantumMs": CLOCK_QUANTUM_MS,
            "weights": dict(self.weights),
            "halfLifeMs": self.half_life_ms,
            "anchors": list(self.anchors),
            "anchorsInferred": self.anchors_inferred,
            "boosts": [b.to_json() for b in self.boosts],
            "hopsWalked": self.hops_walked,
            "maxHops": MAX_HOPS,
            "frontierCap": FRONTIER_CAP,
            "frontierTruncated": self.frontier_truncated,
            "offset": self.offset,
            "limit": self.limit,
        }


@dataclass(frozen=True)
class Fused:
    """The whole ordered pool; a page is a slice of it, never a re-computation."""

    rows: tuple[FusedRow, ...]
    stamp: PageStamp

    def page(self, offset: int = 0, limit: int | None = None) -> Fused:
        if offset < 0 or (limit is not None and limit < 0):
            raise FusionOptionError(f"page offset/limit must be >= 0, got offset={offset} limit={limit}")
        end = None if limit is None else offset + limit
        stamp = replace(self.stamp, offset=offset, limit=limit)
        return Fused(rows=self.rows[offset:end], stamp=stamp)


def parse_boost(rule: Any) -> Boost:
    """A boost from a Boost, a mapping {field, equals, amount}, or the CLI's "FIELD=VALUE:AMOUNT"."""
    if isinstance(rule, Boost):
        fld, equals, amount = rule.field, rule.equals, rule.amount
    elif isinstance(rule, str):
        head, sep, amt = rule.rpartition(":")
        fld, eq, equals = head.partition("=")
        if not sep or not eq or not fld:
            raise FusionOptionError(f"boost {rule!r} is malformed: write FIELD=VALUE:AMOUNT, e.g. species=skills:0.5")
        try:
            amount = float(amt)
        except ValueError:
            raise FusionOptionError(f"boost {rule!r}: amount {amt!r} is not a number in [0, 1]") from None
    elif isinstance(rule, Mapping):
        missing = [k for k in ("field", "equals", "amount") if k not in rule]
        if missing:
            raise FusionOptionError(f"boost {dict(rule)!r} lacks {', '.join(missing)}: a boost is {{field, equals, amount}}")
        fld, equals, amount = rule["field"], rule["equals"], rule["amount"]
    else:
        raise FusionOptionError(f"boost {rule!r} is not a {{field, equals, amount}} rule")
    if fld not in BOOST_FIELDS:
        raise FusionOptionError(f"boost field {fld!r} is unknown: use one of {', '.join(BOOST_FIELDS)}")
    if not isinstance(equals, str):
        raise FusionOptionError(f"boost {fld}: equals must be a string, got {equals!r}")
    if isinstance(amount, bool) or not isinstance(amount, (int, float)) or math.isnan(amount) or not 0 <= amount <= 1:
        raise FusionOptionError(f"boost {fld}={equals}: amount {amount!r} is outside [0, 1]")
    return Boost(field=fld, equals=equals, amount=float(amount), grid=int(round(float(amount) * SCALE)))


def parse_near(near: Any) -> tuple[str, ...] | None:
    """None (infer anchors) or a tuple of "base/path" ids, deduplicated in order."""
    if near is None:
        return None
    if isinstance(near, (str, bytes)) or not isinstance(near, (list, tuple)):
        raise FusionOptionError(f"near must be a list of note ids like 'zed/knowledge/x.md', got {near!r}")
    out: list[str] = []
    for n in near:
        if (
            not isinstance(n, str)
            or not n.strip()
            or n.startswith("/")
            or "\\" in n
            or "/" not in n.strip("/")
            or ".." in n.split("/")
        ):
            raise FusionOptionError(f"near id {n!r} is malformed: give a note as base/path, e.g. zed/knowledge/x.md")
        if n not in out:
            out.append(n)
    return tuple(out)


def parse_options(purpose: Any = DEFAULT_PURPOSE, near: Any = None, boosts: Any = ()) -> FusionOptions:
    """Validate every option; the stage refuses here, before any work."""
    p = purpose if isinstance(purpose, Purpose) else get_purpose(purpose)
    anchors = parse_near(near)
    if boosts is None:
        boosts = ()
    if isinstance(boosts, (str, Mapping)) or not isinstance(boosts, (list, tuple)):
        boosts = (boosts,)
    return FusionOptions(purpose=p, near=anchors, boosts=tuple(parse_boost(b) for b in boosts))


def _fused_rows(pool: Sequence[PoolRow], p, rules, top: float, dist: Mapping[str, int], anchor_set: set,
                anchor_kind: str, clock: int) -> list[FusedRow]:
    """Each pool row scored by `p`'s weights over its four signals, best first, ties by id."""
    w = p.weights
    wt, wg, wr, wb = w.text, w.graph, w.recency, w.boost
    half_life = p.half_life_ms
    out: list[FusedRow] = []
    for r in pool:
        rid = r.id
        t = text_signal(r.text, top)
        d = dist.get(rid)
        anchor = anchor_kind if rid in anchor_set else None
        # An inferred anchor seeds the walk but scores 0: crediting it at hop 0 would hand
        # the rows that already won on text the whole graph term as well.
        g = 0 if anchor == "inferred" else hop_signal(d)
        age = None if r.date_ms is None else clock - int(r.date_ms)
        rc = recency_signal(age, half_life)
        b_raw, b = boost_signal(r.metadata, rules) if rules else (0, 0)
        score = wt * t + wg * g + wr * rc + wb * b
        out.append(FusedRow(r, score, anchor, p.name, w, (r.text, d, age, b_raw / SCALE), (t, g, rc, b)))
    out.sort(key=lambda fr: (-fr.fused_score, fr.row.id))
    return out


def order_pool(
    pool: Sequence[PoolRow],
    *,
    purpose: Any = DEFAULT_PURPOSE,
    near: Any = None,
    boosts: Any = (),
    graph: Mapping[str, Iterable[str]] | None = None,
    now_ms: int | None = None,
) -> Fused:
    """Order `pool` for `purpose`.

    The pool's width must not depend on the page size (Memory's RANK_CANDIDATE_POOL governs
    it), so a page is a slice of one ordering: `Fused.page`. `graph` maps an id to the ids it
    links to and is walked as given (pass it symmetric for undirected links); `now_ms` is
    quantised to the minute. Raises FusionOptionError for a bad option before touching the pool.
    """
    opts = parse_options(purpose, near, boosts)
    p = opts.purpose
    w = p.weights
    clock = quantise_clock(time.time() * 1000 if now_ms is None else now_ms)
    ids = [r.id for r in pool]
    if len(set(ids)) != len(ids):
        raise ValueError("pool has duplicate row ids; each note appears once in the pool")

    top = max((r.text for r in pool), default=0.0)
    if opts.near is None:
        head = sorted(pool, key=lambda r: (-r.text, r.id))[:INFERRED_ANCHORS]
        anchors, inferred = tuple(r.id for r in head), True
    else:
        anchors, inferred = opts.near, False
    hops = walk(anchors, graph or {}, ids) if anchors else None
    dist = hops.distances if hops else {}

    out = _fused_rows(pool, p, opts.boosts, top, dist, set(anchors), "inferred" if inferred else "explicit", clock)

    stamp = PageStamp(
        purpose=p.name,
        pool=len(pool),
        now_ms=clock,
        weights=w.as_dict(),
        half_life_ms=p.half_life_ms,
        anchors=anchors,
        anchors_inferred=inferred,
        boosts=opts.boosts,
        hops_walked=hops.hops_walked if hops else 0,
        frontier_truncated=hops.frontier_truncated if hops else False,
    )
    return Fused(rows=tuple(out), stamp=stamp)
