"""Links and dates read from real markdown files."""

from __future__ import annotations

from _purpose_fleet import NOTES, NOW_MS, fleet_facts, write_fleet

from engine.stages.purpose.facts import date_line, parse_date_ms
from engine.stages.purpose.links import Link, LinkResolver, extract_links
from engine.stages.purpose.weights import DAY_MS


def test_extract_skips_urls_images_anchors_and_code():
    text = (
        "# A\nSee [b](b.md#part), ![pic](pic.md), [web](https://example.com/x.md), [top](#a),\n"
        "[[Deploy Checklist|the list]] and `[inline](inline.md)`.\n```\n[fenced](fenced.md)\n```\n"
        "[ref]: <./c%20d.md>\n"
    )
    assert extract_links(text) == (
        Link("markdown", "b.md"),
        Link("wiki", "Deploy Checklist"),
        Link("markdown", "./c d.md"),
    )


def test_resolution_prefers_the_own_base_then_the_lowest_id():
    r = LinkResolver(["zed/knowledge/a.md", "zed/x/plan.md", "steve/knowledge/plan.md", "steve/a/plan.md"])
    assert r.resolve("plan", "zed/knowledge/a.md", "wiki") == "zed/x/plan.md"
    assert r.resolve("plan", "steve/z.md", "wiki") == "steve/a/plan.md"
    assert r.resolve("steve/knowledge/plan", "zed/knowledge/a.md", "wiki") == "steve/knowledge/plan.md"
    assert r.resolve("../../steve/knowledge/plan.md", "zed/knowledge/a.md", "markdown") == "steve/knowledge/plan.md"
    assert r.resolve("../../../etc/passwd", "zed/knowledge/a.md", "markdown") is None
    assert r.resolve("missing", "zed/knowledge/a.md") is None


def test_facts_from_disk_build_an_undirected_graph_and_read_dates(tmp_path):
    facts = fleet_facts(write_fleet(tmp_path))
    g = facts.graph
    assert g["zed/knowledge/hub.md"] == ("steve/knowledge/undated.md", "zed/knowledge/one.md")
    assert "zed/knowledge/hub.md" in g["zed/knowledge/one.md"]  # linked-to counts as one hop too
    assert g["zed/knowledge/two.md"] == ("zed/knowledge/one.md", "zed/tools/three.md")
    assert g["zed/tools/three.md"] == ("steve/knowledge/four.md", "zed/knowledge/two.md")
    assert "steve/skills/review.md" not in g  # its only link sits in inline code
    assert facts.dates["zed/knowledge/hub.md"] == parse_date_ms("2026-09-09")
    assert facts.date_source["zed/knowledge/one.md"] == "line"  # an Updated: line
    assert facts.date_source["steve/knowledge/undated.md"] == "mtime"
    assert facts.dates["steve/knowledge/undated.md"] == NOW_MS - 14 * DAY_MS
    assert len(facts.dates) == len(NOTES)


def test_dates_parse_to_utc_ms_and_the_latest_line_wins():
    assert parse_date_ms("1970-01-02") == DAY_MS
    assert parse_date_ms("1970-01-01T00:01:00Z") == 60_000
    assert parse_date_ms("1970-01-01 01:00+01:00") == 0
    assert parse_date_ms("yesterday") is None
    assert date_line("# T\n**Date:** 2026-01-01\n- Updated: 2026-03-01 10:00\n") == "2026-03-01 10:00"


def test_a_base_table_of_contents_is_not_an_edge(tmp_path):
    for nid, text in {
        "zed/index.md": "# Zed\n- [a](knowledge/a.md)\n- [b](knowledge/b.md)\n",
        "zed/knowledge/a.md": "# A\nBack to [index](../index.md). See [b](b.md).\n",
        "zed/knowledge/b.md": "# B\n",
        "zed/knowledge/index.md": "# Not the base's contents\n[[a]]\n",
    }.items():
        p = tmp_path / nid
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    from engine.stages.purpose.facts import facts_from_disk

    g = facts_from_disk({"zed": tmp_path / "zed"}).graph
    assert "zed/index.md" not in g
    assert g["zed/knowledge/a.md"] == ("zed/knowledge/b.md", "zed/knowledge/index.md")
