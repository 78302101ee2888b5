"""The normalisers: exact grid values, and no exp/log/pow anywhere in them."""

from __future__ import annotations

import io
import tokenize
from pathlib import Path

import pytest

import engine.stages.purpose.signals as signals
import engine.stages.purpose.stage as stage
from engine.stages.purpose.signals import (
    FRONTIER_CAP,
    HOP1,
    MAX_HOPS,
    hop_signal,
    quantise_clock,
    recency_signal,
    text_signal,
    walk,
)
from engine.stages.purpose.weights import DAY_MS, SCALE

H = 7 * DAY_MS


def test_recency_is_exactly_a_half_and_a_quarter_at_one_and_two_half_lives():
    assert recency_signal(0, H) == SCALE
    assert recency_signal(H, H) == SCALE // 2 == 500_000
    assert recency_signal(2 * H, H) == SCALE // 4 == 250_000
    assert recency_signal(3 * H, H) == SCALE // 8 == 125_000


def test_recency_is_a_straight_line_between_half_lives():
    # Midway between 0 and one half-life: 3/4; midway between one and two: 3/8.
    assert recency_signal(H // 2, H) == 750_000
    assert recency_signal(H + H // 2, H) == 375_000
    # Linear: equal steps in age give equal steps in value within one half-life.
    steps = [recency_signal(H + i * (H // 4), H) for i in range(5)]
    assert steps == [500_000, 437_500, 375_000, 312_500, 250_000]


def test_recency_never_rises_with_age_and_handles_future_and_unknown():
    values = [recency_signal(a, H) for a in range(0, 10 * H, H // 13)]
    assert all(a >= b for a, b in zip(values, values[1:]))
    assert recency_signal(-5 * DAY_MS, H) == SCALE  # a date in the future counts as now
    assert recency_signal(None, H) == 0
    assert recency_signal(100 * 365 * DAY_MS, H) == 0


def test_hops_halve_from_half_the_range_and_stop_at_three():
    assert [hop_signal(h) for h in range(5)] == [SCALE, 500_000, 250_000, 125_000, 0]
    assert HOP1 == 500_000 and MAX_HOPS == 3
    assert hop_signal(None) == 0


def test_text_signal_gives_the_top_row_exactly_the_full_range():
    top = 1 / 61 + 1 / 62
    assert text_signal(top, top) == SCALE
    assert text_signal(top / 2, top) == SCALE // 2
    assert text_signal(0.0, top) == 0
    assert text_signal(0.5, 0.0) == 0


def test_the_clock_is_quantised_to_the_minute():
    assert quantise_clock(1_788_998_459_999) == 1_788_998_400_000
    assert quantise_clock(1_788_998_460_000) == 1_788_998_460_000


def test_walk_caps_the_frontier_by_id_ascending_and_says_so():
    wide = [f"z/n{i:05d}.md" for i in range(FRONTIER_CAP + 100)]
    graph = {"z/anchor.md": wide}
    w = walk(["z/anchor.md"], graph, ["z/n04195.md", "z/n00000.md", "z/nope.md"])
    assert w.frontier_truncated
    assert w.distances["z/n00000.md"] == 1
    assert w.distances[f"z/n{FRONTIER_CAP - 1:05d}.md"] == 1
    assert f"z/n{FRONTIER_CAP:05d}.md" not in w.distances  # the highest ids were the ones cut
    assert "z/n04195.md" not in w.distances


def test_walk_stops_once_every_pool_row_has_a_distance():
    chain = {f"z/{i}.md": [f"z/{i + 1}.md"] for i in range(10)}
    w = walk(["z/0.md"], chain, ["z/1.md"])
    assert w.hops_walked == 1 and "z/2.md" not in w.distances
    w = walk(["z/0.md"], chain, ["z/9.md"])
    assert w.hops_walked == MAX_HOPS and "z/4.md" not in w.distances


_FORBIDDEN = {"exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "pow"}


@pytest.mark.parametrize("module", [signals, stage])
def test_no_exp_log_or_pow_in_the_normalisers(module):
    """Reads the source: an exponential's last bit differs across libms, so none may appear."""
    src = Path(module.__file__).read_text(encoding="utf-8")
    names, ops = set(), set()
    for tok in tokenize.generate_tokens(io.StringIO(src).readline):
        if tok.type == tokenize.NAME:
            names.add(tok.string)
        elif tok.type == tokenize.OP:
            ops.add(tok.string)
    assert not names & _FORBIDDEN, f"{module.__name__} uses {sorted(names & _FORBIDDEN)}"
    assert "**" not in ops and "**=" not in ops, f"{module.__name__} raises to a power"
    # Sanity: the scanner does see names, so an empty intersection means something.
    assert "recency_signal" in names or "order_pool" in names
