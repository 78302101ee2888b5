"""The normalisers: each signal's raw value onto the integer grid [0, SCALE].

No exponentials, logarithms or powers here (a test reads this file's tokens to prove it):
their last bit is not fixed by IEEE-754, so a decay built on them would make a page's order a
property of the machine. Recency gets the same shape from one shift and one division.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from engine.stages.purpose.weights import SCALE

# One hop from an anchor is worth half the range; each further hop halves it again.
HOP1 = SCALE >> 1
# Three, because a matter reaches its subjects through the business: two would leave the
# matter's own notes outside the walk.
MAX_HOPS = 3
# The walk's frontier never holds more than this; when it would, it keeps the lowest ids,
# a deterministic choice rather than whatever order the links were read in.
FRONTIER_CAP = 4096
# The stage reads the wall clock quantised to a minute, so every call inside one tick
# computes the identical ordering and offset paging walks one ordering.
CLOCK_QUANTUM_MS = 60_000
# Past this many half-lives the value is below one grid step; stop shifting.
_MAX_HALVINGS = 40


def text_signal(raw: float, top: float) -> int:
    """The row's RRF score as a fraction of the pool's best, floored onto the grid.

    One correctly rounded division and one multiply on this row's value alone: no reduction,
    so the result is a function of the input bits. The best row gets exactly SCALE.
    """
    if top <= 0.0 or raw <= 0.0:
        return 0
    if raw >= top:
        return SCALE
    return int(raw / top * SCALE)


def hop_signal(hops: int | None) -> int:
    """1 hop -> 500,000, halving per hop; hop 0 (an explicit anchor) -> SCALE; beyond the cap or unreached -> 0."""
    if hops is None or hops < 0 or hops > MAX_HOPS:
        return 0
    return SCALE >> hops


def quantise_clock(now_ms: int) -> int:
    """Floor the clock to the minute the ordering is stamped with."""
    now_ms = int(now_ms)
    return now_ms - now_ms % CLOCK_QUANTUM_MS


def recency_signal(age_ms: int | None, half_life_ms: int) -> int:
    """SCALE at age 0, exactly SCALE/2 at one half-life, SCALE/4 at two, straight lines between.

    With k whole half-lives and r ms into the next one the value is
    SCALE x (2h - r) / (h << (k + 1)): an integer shift and one floor division.
    Unknown dates score 0; a date in the future counts as now.
    """
    if age_ms is None:
        return 0
    h = int(half_life_ms)
    age = max(0, int(age_ms))
    k, r = divmod(age, h)
    if k >= _MAX_HALVINGS:
        return 0
    return SCALE * (2 * h - r) // (h << (k + 1))


@dataclass(frozen=True)
class Walk:
    """Hop distances from the anchors, and how the walk was bounded."""

    distances: dict[str, int]  # node id -> hops (anchors at 0); only nodes reached
    hops_walked: int
    frontier_truncated: bool
    visited: int


def walk(
    anchors: Iterable[str],
    graph: Mapping[str, Iterable[str]],
    pool_ids: Iterable[str],
    *,
    max_hops: int = MAX_HOPS,
    frontier_cap: int = FRONTIER_CAP,
) -> Walk:
    """Breadth-first hop distances from `anchors` over `graph` (walked as given: pass it
    symmetric for undirected links). Bounded three ways: the hop cap, the frontier cap
    (truncating by id ascending), and stopping the moment every pool id has a distance.
    """
    frontier = sorted(set(anchors))
    truncated = False
    if len(frontier) > frontier_cap:
        frontier, truncated = frontier[:frontier_cap], True
    dist = {a: 0 for a in frontier}
    remaining = set(pool_ids).difference(dist)
    hop = 0
    while frontier and remaining and hop < max_hops:
        hop += 1
        nxt: set[str] = set()
        for node in frontier:
            for nb in graph.get(node, ()):
                if nb not in dist:
                    nxt.add(nb)
        # Sorted so the cap keeps the same nodes on every machine and every run.
        level = sorted(nxt)
        if len(level) > frontier_cap:
            level, truncated = level[:frontier_cap], True
        for n in level:
            dist[n] = hop
        remaining.difference_update(level)
        frontier = level
    return Walk(distances=dist, hops_walked=hop, frontier_truncated=truncated, visited=len(dist))


def boost_signal(metadata: Mapping[str, Any], rules: Iterable[Any]) -> tuple[int, int]:
    """(raw, normalized): the grid amounts of every matching rule, summed; normalized is the
    sum clamped to SCALE, so writing more rules never buys more than the boost weight.

    A rule is anything with `field`, `equals` and `grid` (its amount already on the grid).
    """
    raw = 0
    for rule in rules:
        value = metadata.get(rule.field)
        if value is not None and str(value) == rule.equals:
            raw += rule.grid
    return raw, min(raw, SCALE)
