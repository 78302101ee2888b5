"""The stage over a real fleet on disk: exact sums, the purposes' inequalities, determinism, paging, refusals."""

from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor

import pytest
from _purpose_fleet import NOTES, NOW_MS, fleet_facts, pool_of, write_fleet

from engine.stages.purpose import PURPOSE_NAMES, FusionOptionError, PoolRow, order_pool
from engine.stages.purpose.stage import INFERRED_ANCHORS
from engine.stages.purpose.weights import DAY_MS, PURPOSE_DEFAULT_ON, PURPOSES, SCALE, WEIGHT_TOTAL

RANKED = [
    "zed/knowledge/pricing.md",
    "zed/knowledge/old-pricing.md",
    "steve/knowledge/fresh.md",
    "zed/knowledge/two.md",
    "steve/skills/review.md",
    "zed/knowledge/one.md",
    "steve/knowledge/undated.md",
    "zed/tools/three.md",
    "steve/knowledge/four.md",
    "zed/knowledge/hub.md",
]


@pytest.fixture()
def fleet(tmp_path):
    root = write_fleet(tmp_path)
    facts = fleet_facts(root)
    return facts, pool_of(facts, RANKED)


def _order(fused):
    return [(r.id, r.fused_score) for r in fused.rows]


def test_the_purposes_are_a_closed_set_with_exact_totals_and_reasons():
    # The specification's three, first and in its order; a purpose declared after them is
    # checked by the same laws below (weights.py is the one place a purpose is added).
    assert PURPOSE_NAMES[:3] == ("documents", "conversation", "workspace")
    assert PURPOSE_DEFAULT_ON is False
    for p in PURPOSES.values():
        assert sum(p.weights.as_dict().values()) == WEIGHT_TOTAL
        assert p.reason and "\n" not in p.reason
    d, c, w = PURPOSES["documents"].weights, PURPOSES["conversation"].weights, PURPOSES["workspace"].weights
    assert d.recency == 0 and d.text == max(d.as_dict().values()) and d.graph > 0
    assert c.text == 6000 and c.recency == 2500 and PURPOSES["conversation"].half_life_ms == 7 * DAY_MS
    assert c.text > c.graph + c.recency + c.boost
    assert w.graph > 2 * w.text


@pytest.mark.parametrize("purpose", PURPOSE_NAMES)
@pytest.mark.parametrize(
    "near,boosts",
    [
        (None, ()),
        (["zed/knowledge/hub.md"], ()),
        ([], [{"field": "species", "equals": "skills", "amount": 0.7}, "agent=steve:0.6", "path=knowledge/one.md:1"]),
    ],
)
def test_contributions_sum_exactly_to_the_fused_score_on_every_row(fleet, purpose, near, boosts):
    facts, pool = fleet
    fused = order_pool(pool, purpose=purpose, near=near, boosts=boosts, graph=facts.graph, now_ms=NOW_MS)
    assert len(fused.rows) == len(pool)
    for row in fused.rows:
        cs = row.contributions
        assert set(cs) == {"text", "graph", "recency", "boost"}
        for c in cs.values():
            assert 0 <= c.normalized <= SCALE
            assert c.contribution == c.weight * c.normalized
        assert sum(c.contribution for c in cs.values()) == row.fused_score
        j = row.to_json()
        assert sum(v["contribution"] for v in j["contributions"].values()) == j["fusedScore"]
    scores = [(-r.fused_score, r.id) for r in fused.rows]
    assert scores == sorted(scores)  # descending score, ties by id ascending


def test_documents_reads_the_age_but_gives_it_no_weight(fleet):
    facts, pool = fleet
    fused = order_pool(pool, purpose="documents", graph=facts.graph, now_ms=NOW_MS)
    old = next(r for r in fused.rows if r.id == "zed/knowledge/old-pricing.md").contributions["recency"]
    assert old.raw > 3000 * DAY_MS and old.weight == 0 and old.contribution == 0


def test_conversation_recency_never_overturns_an_exact_match_against_nothing(tmp_path):
    """Row A: the exact text match, a decade old, no links. Row B: no text match at all but
    written this minute, an explicit anchor and fully boosted. A still comes first."""
    root = write_fleet(tmp_path)
    facts = fleet_facts(root)
    old = facts.date_of("zed/knowledge/old-pricing.md")
    pool = [
        PoolRow("zed/knowledge/old-pricing.md", 1 / 61, old, {"agent": "zed"}),
        PoolRow("steve/knowledge/fresh.md", 0.0, NOW_MS, {"agent": "steve"}),
    ]
    fused = order_pool(
        pool, purpose="conversation", near=["steve/knowledge/fresh.md"], boosts=["agent=steve:1"],
        graph=facts.graph, now_ms=NOW_MS,
    )
    a, b = fused.rows
    assert a.id == "zed/knowledge/old-pricing.md"
    assert b.contributions["recency"].normalized == SCALE and b.contributions["graph"].normalized == SCALE
    assert a.fused_score == 6000 * SCALE and b.fused_score == 4000 * SCALE


def test_conversation_recency_overturns_at_most_a_text_gap_of_2500_over_6000(tmp_path):
    facts = fleet_facts(write_fleet(tmp_path))
    old = facts.date_of("zed/knowledge/old-pricing.md")
    top = 1 / 61
    # B trails A on text by (1 - frac); recency (at most 2500/6000 = 0.4167 of the text range) closes only a smaller gap.
    for frac, fresh_wins in [(0.9, True), (0.59, True), (0.58, False), (0.3, False)]:
        pool = [PoolRow("a/old.md", top, old), PoolRow("b/fresh.md", top * frac, NOW_MS)]
        first = order_pool(pool, purpose="conversation", near=[], now_ms=NOW_MS).rows[0].id
        assert (first == "b/fresh.md") is fresh_wins, frac


def test_workspace_one_hop_from_an_explicit_anchor_beats_a_perfect_text_match(fleet):
    facts, _ = fleet
    day = NOW_MS - DAY_MS
    pool = [
        PoolRow("zed/knowledge/pricing.md", 1 / 61, day),  # perfect text, no path to the hub
        PoolRow("zed/knowledge/one.md", 0.0, day),  # no text, one hop from the hub
    ]
    fused = order_pool(pool, purpose="workspace", near=["zed/knowledge/hub.md"], graph=facts.graph, now_ms=NOW_MS)
    assert [r.id for r in fused.rows] == ["zed/knowledge/one.md", "zed/knowledge/pricing.md"]
    one = fused.rows[0].contributions["graph"]
    assert (one.raw, one.normalized, one.contribution) == (1, 500_000, 3_000_000_000)
    assert fused.rows[1].contributions["text"].contribution == 2_500_000_000


def test_workspace_at_two_hops_text_wins_again(fleet):
    facts, _ = fleet
    day = NOW_MS - DAY_MS
    pool = [PoolRow("zed/knowledge/pricing.md", 1 / 61, day), PoolRow("zed/knowledge/two.md", 0.0, day)]
    fused = order_pool(pool, purpose="workspace", near=["zed/knowledge/hub.md"], graph=facts.graph, now_ms=NOW_MS)
    assert [r.id for r in fused.rows] == ["zed/knowledge/pricing.md", "zed/knowledge/two.md"]
    assert fused.rows[1].contributions["graph"].normalized == 250_000
    # Three hops still count; four do not (the cap).
    pool += [PoolRow("zed/tools/three.md", 0.0, day), PoolRow("steve/knowledge/four.md", 0.0, day)]
    rows = {r.id: r for r in order_pool(pool, purpose="workspace", near=["zed/knowledge/hub.md"], graph=facts.graph, now_ms=NOW_MS).rows}
    assert rows["zed/tools/three.md"].contributions["graph"].normalized == 125_000
    assert rows["steve/knowledge/four.md"].contributions["graph"].raw is None
    assert rows["steve/knowledge/four.md"].contributions["graph"].normalized == 0


def test_an_explicit_anchor_sits_at_hop_0_and_an_inferred_one_scores_0(fleet):
    facts, pool = fleet
    explicit = order_pool(pool, purpose="workspace", near=["zed/knowledge/hub.md"], graph=facts.graph, now_ms=NOW_MS)
    hub = next(r for r in explicit.rows if r.id == "zed/knowledge/hub.md")
    assert hub.anchor == "explicit" and hub.contributions["graph"].normalized == SCALE
    assert explicit.stamp.anchors == ("zed/knowledge/hub.md",) and not explicit.stamp.anchors_inferred

    inferred = order_pool(pool, purpose="workspace", graph=facts.graph, now_ms=NOW_MS)
    assert inferred.stamp.anchors_inferred and inferred.stamp.anchors == tuple(RANKED[:INFERRED_ANCHORS])
    rows = {r.id: r for r in inferred.rows}
    for a in RANKED[:INFERRED_ANCHORS]:
        assert rows[a].anchor == "inferred"
        assert rows[a].contributions["graph"].normalized == 0 and rows[a].contributions["graph"].raw == 0
    # None of the inferred anchors links anywhere, so nobody else gains graph either.
    assert all(r.contributions["graph"].normalized == 0 for r in inferred.rows)
    # `near=[]` is a statement: no anchors, no walk.
    empty = order_pool(pool, purpose="workspace", near=[], graph=facts.graph, now_ms=NOW_MS)
    assert empty.stamp.anchors == () and all(r.anchor is None for r in empty.rows)


def test_inferred_anchors_pull_their_neighbours(tmp_path):
    facts = fleet_facts(write_fleet(tmp_path))
    ranked = ["zed/knowledge/two.md", "zed/knowledge/pricing.md", "zed/knowledge/old-pricing.md",
              "steve/knowledge/fresh.md", "zed/tools/three.md", "zed/knowledge/one.md"]
    rows = {r.id: r for r in order_pool(pool_of(facts, ranked), purpose="documents", graph=facts.graph, now_ms=NOW_MS).rows}
    assert rows["zed/tools/three.md"].contributions["graph"].normalized == 500_000
    assert rows["zed/knowledge/one.md"].contributions["graph"].normalized == 500_000
    assert rows["steve/knowledge/fresh.md"].contributions["graph"].normalized == 0


def test_boosts_sum_and_clamp(fleet):
    facts, pool = fleet
    rules = ["species=skills:0.7", {"field": "agent", "equals": "steve", "amount": 0.6}]
    rows = {r.id: r for r in order_pool(pool, boosts=rules, graph=facts.graph, now_ms=NOW_MS).rows}
    review = rows["steve/skills/review.md"].contributions["boost"]
    assert review.raw == pytest.approx(1.3) and review.normalized == SCALE  # summed, then clamped
    assert rows["steve/knowledge/fresh.md"].contributions["boost"].normalized == 600_000
    assert rows["zed/knowledge/hub.md"].contributions["boost"].normalized == 0


def test_order_is_identical_across_thread_counts_runs_and_input_order(fleet):
    facts, pool = fleet
    want = {p: _order(order_pool(pool, purpose=p, graph=facts.graph, now_ms=NOW_MS)) for p in PURPOSE_NAMES}

    def job(i):
        shuffled = pool[:]
        random.Random(i).shuffle(shuffled)  # the order rows arrive in is not part of the question
        p = PURPOSE_NAMES[i % 3]
        return p, _order(order_pool(shuffled, purpose=p, graph=facts.graph, now_ms=NOW_MS + (i % 60) * 1000))

    for workers in (1, 2, 4, 8):
        with ThreadPoolExecutor(max_workers=workers) as ex:
            for p, got in ex.map(job, range(48)):
                assert got == want[p]


def test_paging_at_limit_3_concatenates_to_the_limit_9_call(fleet):
    facts, pool = fleet
    for p in PURPOSE_NAMES:
        wide = order_pool(pool, purpose=p, graph=facts.graph, now_ms=NOW_MS).page(0, 9)
        pages = []
        for off in (0, 3, 6):
            # A separate call per page, later in the same minute: the same ordering.
            page = order_pool(pool, purpose=p, graph=facts.graph, now_ms=NOW_MS + off * 1000).page(off, 3)
            assert page.stamp.pool == len(pool) and page.stamp.now_ms == NOW_MS
            assert (page.stamp.offset, page.stamp.limit) == (off, 3)
            pages.extend(page.rows)
        assert [r.id for r in pages] == [r.id for r in wide.rows]
        assert [r.fused_score for r in pages] == [r.fused_score for r in wide.rows]


class _Untouchable(list):
    def __iter__(self):
        raise AssertionError("the pool was read before the options were checked")


@pytest.mark.parametrize(
    "kwargs,says",
    [
        ({"purpose": "recall"}, "unknown purpose 'recall': use one of documents, conversation, workspace"),
        ({"purpose": None}, "unknown purpose None"),
        ({"near": "zed/knowledge/hub.md"}, "near must be a list of note ids"),
        ({"near": [3]}, "near id 3 is malformed"),
        ({"near": ["hub.md"]}, "near id 'hub.md' is malformed"),
        ({"near": ["/abs/hub.md"]}, "is malformed"),
        ({"near": ["zed/../etc/passwd"]}, "is malformed"),
        ({"boosts": ["species=skills:1.5"]}, "amount 1.5 is outside [0, 1]"),
        ({"boosts": [{"field": "agent", "equals": "zed", "amount": -0.1}]}, "amount -0.1 is outside [0, 1]"),
        ({"boosts": [{"field": "agent", "equals": "zed", "amount": float("nan")}]}, "outside [0, 1]"),
        ({"boosts": ["species=skills"]}, "write FIELD=VALUE:AMOUNT"),
        ({"boosts": ["colour=red:0.5"]}, "boost field 'colour' is unknown"),
        ({"boosts": [{"field": "agent", "amount": 0.5}]}, "lacks equals"),
    ],
)
def test_each_refusal_is_one_line_naming_the_cure_before_any_work(kwargs, says):
    with pytest.raises(FusionOptionError) as e:
        order_pool(_Untouchable([PoolRow("zed/a.md", 0.1)]), now_ms=NOW_MS, **kwargs)
    msg = str(e.value)
    assert says in msg and "\n" not in msg
    assert isinstance(e.value, ValueError)


def test_the_fleet_fixture_is_what_the_tests_think_it_is(tmp_path):
    facts = fleet_facts(write_fleet(tmp_path))
    assert set(RANKED) == set(NOTES)
    assert facts.dates["steve/knowledge/fresh.md"] == NOW_MS
