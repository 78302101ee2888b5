"""`kb serve`: a real MCP server in a subprocess, spoken to with the mcp SDK's own stdio client."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import anyio
import pytest
from _who import GOLD_FIRST, UNCOVERED, configure, example_command
from conftest import REPO

mcp = pytest.importorskip("mcp")
from mcp import Client, StdioServerParameters  # noqa: E402

TOOLS = {"kb_route", "kb_retrieve", "kb_remember", "kb_fleet", "kb_list"}


def _params(*paths) -> StdioServerParameters:
    # The whole environment: the SDK passes only HOME, PATH and a few more, and the server must
    # read the session's KB_STATE_DIR (the person's grants, engine/notes/userstate) as kb route does.
    return StdioServerParameters(command=sys.executable, args=["-m", "engine.cli", "serve", *map(str, paths)],
                                 cwd=str(REPO), env=dict(os.environ))


def _talk(paths, script):
    async def main():
        with anyio.fail_after(120):
            async with Client(_params(*paths)) as client:
                return await script(client)

    return anyio.run(main)


def _json(result):
    assert not result.is_error, result.content[0].text
    return json.loads(result.content[0].text)


def test_lists_the_tools_and_routes_the_first_gold_question(demo):
    async def script(c):
        tools = await c.list_tools()
        route = await c.call_tool("kb_route", {"question": GOLD_FIRST})
        retrieve = await c.call_tool("kb_retrieve", {"question": GOLD_FIRST, "top": 2})
        return tools, route, retrieve

    tools, route, retrieve = _talk([demo], script)
    assert {t.name for t in tools.tools} == TOOLS
    answer = _json(route)
    assert answer["keyword_top"] == "zed/knowledge/deploy-checklist.md"
    assert (answer["agent"]["name"], answer["verdict"]) == ("zed", "hit")
    assert answer["results"][0]["path"] == "knowledge/deploy-checklist.md"
    rows = _json(retrieve)["results"]
    assert [r["id"] for r in rows] == ["zed/knowledge/deploy-checklist.md", "steve/knowledge/hooks-that-hold.md"]


def test_a_path_outside_the_fleet_is_refused_by_name_however_spelled(demo, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("# Secret\n\n**Search for:** `secret`\n\nkeep out\n")
    os.symlink(outside, demo / "zed" / "escape")  # a link inside a base that leads out of it
    spellings = [str(outside), "zed/../../outside", "zed/escape", "zed/escape/secret.md", "/etc/passwd", ".."]

    async def script(c):
        listed = [await c.call_tool("kb_list", {"path": p}) for p in spellings]
        wrote = await c.call_tool("kb_remember", {"claim": "a fact", "path": "zed/escape/new.md", "write": True,
                                                  "keys": ["fact"]})
        inside = await c.call_tool("kb_list", {"path": "zed/knowledge"})
        return listed, wrote, inside

    listed, wrote, inside = _talk([demo], script)
    for spelled, r in zip(spellings, listed):
        assert r.is_error, spelled
        assert f"{spelled}: outside the bases this was started with (steve, yaron, zed); refused" in r.content[0].text
    assert wrote.is_error and "zed/escape/new.md: outside the bases" in wrote.content[0].text
    assert not (outside / "new.md").exists()
    assert [n["id"] for n in _json(inside)["notes"]] == ["zed/knowledge/database-choices.md",
                                                         "zed/knowledge/deploy-checklist.md"]


def test_fleet_remember_and_the_classifier_through_the_same_memory(demo):
    configure(demo, example_command())

    async def script(c):
        fleet = await c.call_tool("kb_fleet", {})
        noop = await c.call_tool("kb_remember", {"claim": "For a 70 kg person that is about 25 to 30 grams per meal"})
        wrote = await c.call_tool("kb_remember", {"claim": "Sleep eight hours before a heavy session",
                                                  "path": "yaron/knowledge/sleep.md", "write": True,
                                                  "keys": ["sleep before training"]})
        found = await c.call_tool("kb_route", {"question": "sleep before training"})
        uncovered = await c.call_tool("kb_route", {"question": UNCOVERED})
        return fleet, noop, wrote, found, uncovered

    fleet, noop, wrote, found, uncovered = _talk([demo], script)
    f = _json(fleet)
    assert [a["agent"] for a in f["agents"]] == ["steve", "yaron", "zed"]
    assert f["agents"][1]["ends"].startswith("Yaron stops at general guidance")
    assert f["classifier"] == example_command()
    assert _json(noop)["proposal"] == "NOOP"
    assert (_json(wrote)["written"], _json(wrote)["indexed"]) == ("yaron/knowledge/sleep.md", True)
    assert _json(found)["keyword_top"] == "yaron/knowledge/sleep.md"  # written, indexed, routable at once
    agent = _json(uncovered)["agent"]
    assert agent["coverage"] == "uncovered" and agent["line"].startswith("VESTA: nothing in this fleet covers")


def test_stdout_carries_nothing_but_protocol(demo):
    # With a classifier in the path too: its stdout is a pipe to kb, never the wire.
    configure(demo, example_command())
    msgs = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "kb_route", "arguments": {"question": GOLD_FIRST}}},
    ]
    proc = subprocess.Popen([sys.executable, "-m", "engine.cli", "serve", str(demo)], cwd=REPO,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        replies = []
        for m in msgs:
            proc.stdin.write(json.dumps(m) + "\n")
            proc.stdin.flush()
            if "id" in m:
                replies.append(json.loads(proc.stdout.readline()))
        proc.stdin.close()
        rest = proc.stdout.read()
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert [r["id"] for r in replies] == [1, 2]
    assert all(r["jsonrpc"] == "2.0" for r in replies)
    assert json.loads(replies[1]["result"]["content"][0]["text"])["agent"]["name"] == "zed"
    assert all(json.loads(line)["jsonrpc"] == "2.0" for line in rest.splitlines() if line.strip())
    assert "kb serve: serving 11 entries across 3 agents (steve, yaron, zed)" in proc.stderr.read()


def test_a_bad_path_is_refused_before_any_protocol(tmp_path):
    p = subprocess.run([sys.executable, "-m", "engine.cli", "serve", str(tmp_path / "nowhere")], cwd=REPO,
                       capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert p.returncode == 2
    assert p.stdout == ""
    assert p.stderr.strip() == f"kb: {tmp_path / 'nowhere'}: no such file or directory"


def test_kb_route_does_not_import_mcp():
    code = "import sys, engine.cli, engine.cli.who, engine.memory; print('mcp' in sys.modules)"
    p = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert p.stdout.strip() == "False", p.stderr


# Each call's arguments are sloppy in one way a lax reading let through ("yes" was true, "5"
# was 5, True was a top of 1, a misspelt argument was dropped) or refused in a
# many-line pydantic dump inside a tool result. Each must come back as JSON-RPC's
# invalid params (-32602), in one line naming the tool and the argument.
SLOPPY = [
    ("kb_remember", {"claim": "Sleep eight hours", "path": "yaron/knowledge/sloppy.md", "write": "yes",
                     "keys": ["sleep"]}, "kb_remember: write must be a boolean (true or false), not a string"),
    ("kb_remember", {"claim": "a fact", "keys": "sleep"}, "kb_remember: keys must be an array of strings or null, not a string"),
    ("kb_remember", {"claim": "a fact", "keys": ["sleep", 3]}, "kb_remember: keys[1] must be a string, not an integer"),
    ("kb_remember", {"claim": "a fact", "wirte": True}, "kb_remember: no argument named wirte (it takes claim, path, write, keys, title, purpose)"),
    ("kb_remember", {"path": "yaron/x.md"}, "kb_remember: claim is required"),
    ("kb_route", {"question": "protein", "top": "5"}, "kb_route: top must be an integer, not a string"),
    ("kb_route", {"question": "protein", "top": True}, "kb_route: top must be an integer, not a boolean"),
    ("kb_route", {"question": "protein", "top": 2.5}, "kb_route: top must be an integer, not a number"),
    ("kb_retrieve", {"question": ["protein"]}, "kb_retrieve: question must be a string, not an array"),
    ("kb_list", {"path": 3}, "kb_list: path must be a string or null, not an integer"),
    ("kb_fleet", {"verbose": True}, "kb_fleet: no argument named verbose (it takes none)"),
]


def test_arguments_are_typed_and_a_wrong_one_is_invalid_params_naming_it(demo):
    from mcp.shared.exceptions import MCPError

    async def script(c):
        out = []
        for name, args, _ in SLOPPY:
            try:
                r = await c.call_tool(name, args)
                out.append(("result", r.is_error, r.content[0].text if r.content else ""))
            except MCPError as e:
                out.append((e.code, e.message))
        out.append(await c.call_tool("kb_route", {"question": GOLD_FIRST, "top": 2}))
        out.append(await c.call_tool("kb_list", {"path": None}))
        return out

    *refused, typed, listed = _talk([demo], script)
    assert refused == [(-32602, f"Invalid params: {why}") for _, _, why in SLOPPY]
    assert not (demo / "yaron" / "knowledge" / "sloppy.md").exists()
    assert len(_json(typed)["results"]) == 2  # well-typed calls are untouched
    assert len(_json(listed)["notes"]) == 11
