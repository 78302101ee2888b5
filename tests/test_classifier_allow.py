"""A command fleet.txt names runs only after the person allowed it (issue 29 item 7).

A cloned fleet carries its author's `classifier = COMMAND`: kb route, kb boot (a prompt hook
in a cloned folder), kb serve and the room ran it as the person. Now each falls back to the
fold with one line naming the file and `kb allow PATH`, until that exact line was allowed in
that folder; the grant lives in the person's state folder (KB_STATE_DIR, a temp folder here).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from _who import COVERED
from conftest import copy_demo, kb_here, run_kb

from engine import Memory
from engine.notes.userstate import state_dir

ANSWER = "print('SUBJECT: protein\\nREASON: r\\nCOVERAGE: covered\\nOWNER: yaron')"


def _cloned(tmp_path: Path, name: str = "clone") -> tuple[Path, Path, str]:
    """A demo fleet whose fleet.txt names a classifier that leaves a marker when it runs."""
    fleet = copy_demo(tmp_path / name)
    marker = tmp_path / f"{name}-RAN"
    body = tmp_path / f"{name}-classify.py"
    body.write_text(f"import pathlib, sys\nsys.stdin.read()\npathlib.Path({str(marker)!r}).touch()\n{ANSWER}\n")
    command = f"{sys.executable} {body}"
    with open(fleet / "fleet.txt", "a") as f:
        f.write(f"classifier = {command}\n")
    return fleet, marker, command


def test_a_cloned_fleets_classifier_does_not_run_until_allowed(tmp_path):
    fleet, marker, _command = _cloned(tmp_path)
    r = kb_here("route", COVERED, str(fleet))
    assert r.returncode == 0, r.stderr
    assert not marker.exists(), "kb route ran the repository's command"
    line = next(ln for ln in r.stdout.splitlines() if ln.startswith("agent:"))
    assert "fleet.txt: classifier = " in line and "has not been allowed" in line and f"kb allow {fleet}" in line, line

    allowed = kb_here("allow", str(fleet))
    assert allowed.returncode == 0 and "allowed: classifier = " in allowed.stdout, allowed.stderr
    assert (state_dir() / "allowed-classifiers.txt").is_file()
    r = kb_here("route", COVERED, str(fleet), "--json")
    assert marker.exists(), r.stdout
    assert json.loads(r.stdout)["agent"]["chosen_by"] == "classifier"


def test_a_changed_line_asks_again(tmp_path):
    fleet, marker, command = _cloned(tmp_path)
    assert kb_here("allow", str(fleet)).returncode == 0
    manifest = fleet / "fleet.txt"
    manifest.write_text(manifest.read_text().replace(command, command + " --now-evil"))
    r = kb_here("route", COVERED, str(fleet))
    assert not marker.exists() and "has not been allowed" in r.stdout, r.stdout


def test_an_allow_is_for_one_folder(tmp_path):
    first, _m1, _c1 = _cloned(tmp_path, "first")
    second = copy_demo(tmp_path / "second")
    shutil.copy(first / "fleet.txt", second / "fleet.txt")  # the same line, another folder
    assert kb_here("allow", str(first)).returncode == 0
    marker = tmp_path / "first-RAN"
    r = kb_here("route", COVERED, str(second))
    assert not marker.exists() and "has not been allowed" in r.stdout, r.stdout


def test_kb_boot_never_asks_it_falls_back_and_says_so(tmp_path):
    fleet, marker, _command = _cloned(tmp_path)
    envelope = json.dumps({"prompt": COVERED, "cwd": str(fleet)})
    r = run_kb("boot", stdin=envelope, timeout=60)
    assert r.returncode == 0, r.stderr
    assert not marker.exists()
    assert "chosen by the fold" in r.stdout and "kb allow" in r.stdout and "fleet.txt" in r.stdout, r.stdout


def test_serve_and_the_room_obey_it_too(tmp_path):
    # kb serve and the room answer through a resident Memory: the same gate.
    fleet, marker, _command = _cloned(tmp_path)
    a = Memory([fleet], resident=True).ask(COVERED, record_miss=False)
    assert not marker.exists()
    assert a.agent.chosen_by == "fold" and "kb allow" in a.agent.note
    assert run_kb("allow", str(fleet)).returncode == 0
    a = Memory([fleet], resident=True).ask(COVERED, record_miss=False)
    assert marker.exists() and a.agent.chosen_by == "classifier"


def test_kb_allow_on_a_fleet_with_no_classifier_is_one_line(demo):
    r = kb_here("allow", str(demo))
    assert r.returncode == 2 and r.stderr.startswith("kb: ") and "names no classifier" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
