"""The CLI pieces: route options into Memory.ask, `kb fusion restamp`, and the why-this-row lines."""

from __future__ import annotations

import argparse
import json

import pytest
from _purpose_fleet import QUESTION, write_memory_fleet

from engine import Memory
from engine.cli.purpose import add_fusion, add_route_options, explain, route_kwargs
from engine.stages.purpose.errors import FusionOptionError, FusionStampMismatch
from engine.stages.purpose.stamp import stamp_path


@pytest.fixture()
def fleet(tmp_path):
    return write_memory_fleet(tmp_path)


def _parser():
    ap = argparse.ArgumentParser(prog="kb")
    sub = ap.add_subparsers(dest="command", required=True)
    route = sub.add_parser("route")
    route.add_argument("question")
    route.add_argument("path")
    add_route_options(route)
    add_fusion(sub)
    return ap


def test_route_options_reach_memory_ask(fleet):
    near = str(fleet / "zed/knowledge/pricing.md")
    args = _parser().parse_args(
        ["route", QUESTION, str(fleet), "--purpose", "workspace", "--near", near, "--boost", "agent=steve:0.5",
         "--boost", "species=skills:1"]
    )
    kw = route_kwargs(args)
    assert kw == {"purpose": "workspace", "near": [near], "boosts": ["agent=steve:0.5", "species=skills:1"]}
    a = Memory(args.path).ask(args.question, record_miss=False, top=20, **kw)
    st = a.stages["fusion"]
    assert st["anchors"] == ["zed/knowledge/pricing.md"]
    assert st["boosts"] == [
        {"field": "agent", "equals": "steve", "amount": 0.5},
        {"field": "species", "equals": "skills", "amount": 1.0},
    ]
    review = next(r for r in a.results if r.id == "zed/skills/review.md")
    assert review.fusion["contributions"]["boost"]["normalized"] == 1_000_000
    assert route_kwargs(_parser().parse_args(["route", QUESTION, str(fleet)])) == {}


def test_a_bad_boost_from_the_command_line_is_one_line(fleet):
    args = _parser().parse_args(["route", QUESTION, str(fleet), "--purpose", "documents", "--boost", "agent=zed:3"])
    with pytest.raises(FusionOptionError) as e:
        Memory(args.path).ask(args.question, record_miss=False, **route_kwargs(args))
    assert str(e.value) == "boost agent=zed: amount 3.0 is outside [0, 1]"


def test_kb_fusion_restamp_cures_a_mismatch_and_prints_a_receipt(fleet, capsys):
    mem = Memory(fleet)
    mem.ask(QUESTION, record_miss=False, purpose="conversation")
    p = stamp_path(fleet / "zed")
    stored = json.loads(p.read_text())
    stored["workspace"]["weights"]["graph"] = 5000
    p.write_text(json.dumps(stored))
    with pytest.raises(FusionStampMismatch, match="workspace.weights.graph"):
        mem.ask(QUESTION, record_miss=False, purpose="conversation")
    args = _parser().parse_args(["fusion", "restamp", str(fleet), "--json"])
    assert args.func(args) == 0
    receipts = json.loads(capsys.readouterr().out)
    assert set(receipts) == {"zed", "steve"} and receipts["zed"]["workspace"]["weights"]["graph"] == 6000
    assert mem.ask(QUESTION, record_miss=False, purpose="conversation").stages["fusion"]["purpose"] == "conversation"
    args = _parser().parse_args(["fusion", "restamp", str(fleet / "zed")])
    assert args.func(args) == 0
    assert capsys.readouterr().out.startswith(f"restamped {stamp_path(fleet / 'zed')}")


def test_explain_shows_the_four_contributions_adding_up(fleet):
    a = Memory(fleet).ask(QUESTION, record_miss=False, purpose="conversation")
    f = a.results[0].fusion
    lines = explain(f)
    assert lines[0].startswith("purpose conversation")
    assert [l.split()[0] for l in lines[1:]] == ["text", "graph", "recency", "boost", "fused"]
    assert lines[-1].split()[-1] == f"{f['fusedScore']:,}"
