"""A fleet.txt or agent.txt a repository carries is read only so far: a manifest is a few
`key = value` lines. A 98 MB fleet.txt of five million lines cost every `kb route` 14.6 s and
1.3 GB (a 200 MB line, 2.4 s and 805 MB); past MAX_MANIFEST_BYTES it is refused in one line
naming the file, before it is held whole (docs/hardening.md, round 8)."""

from __future__ import annotations

from conftest import copy_demo, run_kb
from engine.notes.fleet import MAX_MANIFEST_BYTES


def _grown(path, extra: int) -> None:
    with open(path, "a", encoding="utf-8") as f:
        line = "padding = " + "x" * 990 + "\n"
        for _ in range(extra // len(line) + 1):
            f.write(line)


def test_a_huge_fleet_txt_is_refused_by_name(tmp_path):
    demo = copy_demo(tmp_path / "demo")
    _grown(demo / "fleet.txt", MAX_MANIFEST_BYTES)
    r = run_kb("route", "deploy checklist", str(demo))
    assert r.returncode != 0 and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert r.stderr.count("\n") == 1 and "fleet.txt" in r.stderr and "bytes" in r.stderr, r.stderr


def test_a_huge_agent_txt_is_refused_by_name(tmp_path):
    demo = copy_demo(tmp_path / "demo")
    _grown(demo / "zed" / "agent.txt", MAX_MANIFEST_BYTES)
    r = run_kb("fleet", str(demo))  # the verb that reads every card
    assert r.returncode != 0 and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert r.stderr.count("\n") == 1 and "agent.txt" in r.stderr and "bytes" in r.stderr, r.stderr


def test_a_manifest_under_the_bound_is_read(tmp_path):
    demo = copy_demo(tmp_path / "demo")
    _grown(demo / "fleet.txt", MAX_MANIFEST_BYTES // 2)
    r = run_kb("route", "deploy checklist", str(demo))
    assert r.returncode == 0, r.stderr
