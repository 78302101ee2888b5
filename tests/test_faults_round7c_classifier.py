"""Round 7c: a fleet.txt whose classifier command holds a NUL byte (a manifest written by a
tool, a stray \\0) made kb route a Python traceback (subprocess refuses an argument with an
embedded null byte by ValueError, not OSError). Like a command that cannot be split or
started, it is one line saying why the fold chose, and the route answers."""

from __future__ import annotations

from tests.conftest import copy_demo, run_kb


def test_a_classifier_command_with_a_nul_byte_falls_back_to_the_fold(tmp_path):
    demo = copy_demo(tmp_path / "demo")
    (demo / "fleet.txt").write_bytes(b"name = Atrium\nclassifier = python3\x00 -c pass\n")
    assert run_kb("index", str(demo)).returncode == 0
    assert run_kb("allow", str(demo)).returncode == 0  # the person allowed it: now it is tried (issue 29 item 7)
    r = run_kb("route", "xyzzy plugh", str(demo))
    assert "Traceback" not in r.stderr, r.stderr
    assert r.returncode == 0, r.stderr
    agent = [line for line in r.stdout.splitlines() if line.startswith("agent:")]
    assert agent and "chosen by the fold" in agent[0] and "fleet.txt: classifier" in agent[0], r.stdout
    assert "null byte" in agent[0], agent
