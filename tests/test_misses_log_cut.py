"""A miss log a repository carries is read only so far: a route logs at most
MAX_QUESTION_CHARS of a question, a hand-edited longer one is shown as logged up to
MAX_LOGGED_CHARS, and past that the entry is cut when read. One planted entry of 105 MB cost
`kb misses` 11.3 s and 1.39 GB (docs/hardening.md, round 8)."""

from __future__ import annotations

import json

from engine.review.misses import MAX_LOGGED_CHARS

from conftest import copy_demo, run_kb


def test_a_planted_entry_longer_than_a_question_is_cut_when_read(tmp_path):
    demo = copy_demo(tmp_path / "demo")
    r = run_kb("route", "zzqv nothing here", str(demo))
    assert r.returncode == 0, r.stderr
    log = demo / "kb-misses.txt"
    with open(log, "a", encoding="utf-8") as f:
        f.write("7\t2026-12-01\t2026-12-01\t" + "deploy window " * 150_000 + "\n    looked like: (nothing)\n")
    r = run_kb("misses", "--json", str(demo))
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-2000:]
    entries = json.loads(r.stdout.splitlines()[0])["entries"]
    assert {e["count"] for e in entries} == {1, 7}
    assert all(len(e["question"]) <= MAX_LOGGED_CHARS for e in entries)
