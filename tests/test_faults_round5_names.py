"""Round 5 faults in names over MCP: a base or fleet folder whose name is not UTF-8 (bytes
from another system's encoding, an unpacked archive). The CLI's JSON escapes such a name as
the lone surrogate it is to Python, which reads back to the same bytes
(tests/test_faults_hardening_input.py); MCP's replies must be UTF-8 text, and one such
folder killed `kb serve` at its greeting (the instructions list the bases) and failed every
tool after it. kb serve spells it escaped, as every text surface shows it (`st\\xe9ve`), and
takes that spelling back as a path.

Real parts: the demo fleet copied to tmp and renamed by bytes, the real `kb serve` over stdio."""

from __future__ import annotations

import os

import pytest

from _faults import NOTHING_Q

pytest.importorskip("mcp")
from test_serve import _json, _talk  # noqa: E402

STEVE_Q = "hooks"


def test_kb_serve_answers_over_a_base_folder_not_utf8(demo):
    os.rename(demo / "steve", os.path.join(os.fsencode(demo), b"st\xe9ve"))
    name = "st\\xe9ve"

    async def script(c):
        return [_json(await c.call_tool(tool, args)) for tool, args in
                (("kb_route", {"question": STEVE_Q}), ("kb_fleet", {}), ("kb_list", {"path": name}))]

    route, fleet, listed = _talk([demo], script)
    assert route["agent"]["name"] == name
    assert name in {a["agent"] for a in fleet["agents"]}
    assert listed["notes"] and all(n["agent"] == name for n in listed["notes"])


def test_kb_serve_answers_a_miss_under_a_fleet_folder_not_utf8(tmp_path, demo):
    root = os.path.join(os.fsencode(tmp_path), b"fl\xe9et")
    os.rename(demo, root)

    async def script(c):
        return [_json(await c.call_tool(tool, args)) for tool, args in
                (("kb_route", {"question": NOTHING_Q}), ("kb_fleet", {}))]

    route, roster = _talk([os.fsdecode(root)], script)
    assert route["verdict"] == "nothing" and route["miss"]["recorded"]
    assert route["miss"]["path"].endswith("fl\\xe9et/kb-misses.txt"), route["miss"]
    assert roster["agents"]
