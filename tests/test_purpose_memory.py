"""The fusion stage through Memory.ask, over a real fleet indexed on disk."""

from __future__ import annotations

import json
import os
import time

import pytest
from _purpose_fleet import QUESTION, write_memory_fleet

from engine import Memory
from engine.stages.purpose import FusionOptionError, FusionStampMismatch
from engine.stages.purpose.stamp import restamp, stamp_path
from engine.stages.purpose.weights import DAY_MS


@pytest.fixture()
def fleet(tmp_path):
    return write_memory_fleet(tmp_path)


def _ask(mem, **kw):
    return mem.ask(QUESTION, record_miss=False, with_passages=False, **kw)


def test_a_purpose_reorders_the_reading_list_and_never_the_owner_or_verdict(fleet):
    mem = Memory(fleet)
    plain = _ask(mem, top=20)
    assert len(plain.results) >= 9
    for p in ("documents", "conversation", "workspace"):
        a = _ask(mem, top=20, purpose=p)
        assert (a.verdict, a.agent.name, a.keyword) == (plain.verdict, plain.agent.name, plain.keyword)
        assert sorted(r.id for r in a.results) == sorted(r.id for r in plain.results)
        assert a.stages["fusion"]["purpose"] == p and a.stages["fusion"]["pool"] == len(plain.results)
        for r in a.results:
            f = r.fusion
            assert sum(c["contribution"] for c in f["contributions"].values()) == f["fusedScore"]
            assert f["contributions"]["text"]["raw"] == r.score  # the row's own RRF score
        scores = [(-r.fusion["fusedScore"], r.id) for r in a.results]
        assert scores == sorted(scores)
        # The wire form carries the contributions and the stamp.
        j = a.to_json()
        assert j["results"][0]["fusion"]["purpose"] == p and j["stages"]["fusion"]["nowMs"] % 60_000 == 0
    assert all(r.fusion is None for r in plain.results) and "fusion" not in plain.stages


def test_graph_and_dates_come_from_the_notes_links_and_date_lines(fleet):
    mem = Memory(fleet)
    a = _ask(mem, top=20, purpose="workspace", near=["zed/knowledge/pricing.md"])
    rows = {r.id: r.fusion["contributions"] for r in a.results}
    assert rows["zed/knowledge/pricing.md"]["graph"]["normalized"] == 1_000_000  # explicit: hop 0
    assert rows["zed/knowledge/launch.md"]["graph"]["raw"] == 1  # a relative link
    assert rows["zed/knowledge/discounts.md"]["graph"]["raw"] == 1  # a wiki link
    assert rows["steve/knowledge/launch-retro.md"]["graph"]["raw"] == 2  # links *to* launch, from another base
    assert rows["zed/skills/review.md"]["graph"]["raw"] == 2
    assert rows["steve/knowledge/decisions.md"]["graph"]["raw"] == 3
    assert rows["steve/knowledge/meeting-notes.md"]["graph"]["raw"] is None  # four hops: past the cap
    now = a.stages["fusion"]["nowMs"]
    from engine.stages.purpose.facts import parse_date_ms

    assert rows["zed/knowledge/old-decision.md"]["recency"]["raw"] == now - parse_date_ms("2019-03-03")
    mtime = os.stat(fleet / "zed/skills/review.md").st_mtime_ns // 1_000_000
    assert rows["zed/skills/review.md"]["recency"]["raw"] == now - mtime  # no date line: mtime


def test_a_near_given_as_a_file_path_is_the_same_anchor_as_its_id(fleet):
    mem = Memory(fleet)
    by_id = _ask(mem, top=20, purpose="workspace", near=["zed/knowledge/pricing.md"])
    by_path = _ask(mem, top=20, purpose="workspace", near=[str(fleet / "zed/knowledge/pricing.md")])
    assert by_path.stages["fusion"]["anchors"] == ["zed/knowledge/pricing.md"]
    assert [r.id for r in by_path.results] == [r.id for r in by_id.results]


def test_paging_at_limit_3_concatenates_to_the_limit_9_call(fleet):
    mem = Memory(fleet)
    for p in ("documents", "conversation", "workspace"):
        for _attempt in range(3):  # the clock is quantised to a minute; retry if one tick passed
            wide = _ask(mem, top=9, purpose=p)
            pages = [_ask(mem, top=3, offset=off, purpose=p) for off in (0, 3, 6)]
            clocks = {wide.stages["fusion"]["nowMs"], *(pg.stages["fusion"]["nowMs"] for pg in pages)}
            if len(clocks) == 1:
                break
        assert len(clocks) == 1
        assert [r.id for pg in pages for r in pg.results] == [r.id for r in wide.results]
        assert len(wide.results) == 9
        assert {pg.stages["fusion"]["pool"] for pg in pages} == {wide.stages["fusion"]["pool"]}
        assert [pg.stages["fusion"]["offset"] for pg in pages] == [0, 3, 6]


def test_refusals_come_before_any_work(fleet):
    mem = Memory(fleet)
    with pytest.raises(FusionOptionError, match="unknown purpose 'chat'"):
        _ask(mem, purpose="chat")
    with pytest.raises(FusionOptionError, match="need|name one"):
        _ask(mem, near=["zed/knowledge/pricing.md"])
    with pytest.raises(FusionOptionError, match="is not a note in this fleet"):
        _ask(mem, purpose="workspace", near=["zed/knowledge/nope.md"])
    with pytest.raises(FusionOptionError, match=r"outside \[0, 1\]"):
        _ask(mem, purpose="documents", boosts=["agent=zed:2"])
    # No stamp was written by a refused call: the refusals happen before the stage runs.
    assert not stamp_path(fleet / "zed").exists()


def test_the_stamp_is_written_once_checked_after_and_cured_by_restamp(fleet):
    mem = Memory(fleet)
    _ask(mem, purpose="conversation")
    for b in ("zed", "steve"):
        assert stamp_path(fleet / b).is_file()
    path = stamp_path(fleet / "steve")
    stored = json.loads(path.read_text())
    stored["conversation"]["weights"]["recency"] = 2000
    path.write_text(json.dumps(stored))
    with pytest.raises(FusionStampMismatch) as e:
        _ask(mem, purpose="documents")
    assert e.value.fields == ("conversation.weights.recency",)
    assert _ask(mem).verdict  # the plain reading list does not consult the stamp
    restamp(fleet / "steve")
    assert _ask(mem, purpose="documents").stages["fusion"]["purpose"] == "documents"


def test_the_facts_are_rebuilt_when_the_notes_change(fleet):
    mem = Memory(fleet)
    a = _ask(mem, top=20, purpose="workspace", near=["zed/knowledge/pricing.md"])
    assert {r.id: r.fusion for r in a.results}["zed/tools/calculator.md"]["contributions"]["graph"]["raw"] is None
    p = fleet / "zed/tools/calculator.md"
    p.write_text(p.read_text() + "Built from [[pricing]].\n")
    t = time.time() + 5
    os.utime(p, (t, t))
    mem.refresh()
    b = _ask(mem, top=20, purpose="workspace", near=["zed/knowledge/pricing.md"])
    assert {r.id: r.fusion for r in b.results}["zed/tools/calculator.md"]["contributions"]["graph"]["raw"] == 1


def test_conversation_prefers_this_week_at_equal_relevance(fleet):
    mem = Memory(fleet)
    a = _ask(mem, top=20, purpose="conversation")
    rows = {r.id: r.fusion["contributions"] for r in a.results}
    half = rows["steve/knowledge/meeting-notes.md"]["recency"]
    assert half["weight"] == 2500 and half["normalized"] > rows["steve/knowledge/competitors.md"]["recency"]["normalized"]
    assert a.stages["fusion"]["halfLifeMs"] == 7 * DAY_MS


def test_memory_gives_one_order_from_any_number_of_threads(fleet):
    from concurrent.futures import ThreadPoolExecutor

    mem = Memory(fleet)
    for _attempt in range(3):  # retry if a minute tick falls between the runs
        want = _ask(mem, top=20, purpose="conversation")
        with ThreadPoolExecutor(max_workers=4) as ex:
            got = list(ex.map(lambda _: _ask(mem, top=20, purpose="conversation"), range(12)))
        if {g.stages["fusion"]["nowMs"] for g in got} == {want.stages["fusion"]["nowMs"]}:
            break
    for g in got:
        assert [(r.id, r.fusion["fusedScore"]) for r in g.results] == [
            (r.id, r.fusion["fusedScore"]) for r in want.results
        ]


def test_a_base_that_cannot_be_stamped_still_answers_and_says_so(fleet):
    mem = Memory(fleet)
    _ask(mem)  # index first, so .kb exists
    kb = fleet / "zed" / ".kb"
    os.chmod(kb, 0o555)
    try:
        if os.access(kb, os.W_OK):
            pytest.skip("running as a user who can write anywhere")
        a = _ask(mem, purpose="documents")
    finally:
        os.chmod(kb, 0o755)
    assert a.stages["fusion"]["stampErrors"][0].startswith("zed: ")
    assert not stamp_path(fleet / "zed").exists() and stamp_path(fleet / "steve").exists()
