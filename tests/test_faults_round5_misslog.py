"""Round 5 faults in the miss log's surroundings (engine/review/misses.py): files another program
can plant in the fleet's git work tree, which the log's ignore rule reads.

Real parts: the demo fleet copied to tmp, `git init`, FIFOs made with mkfifo, the real `kb`."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from _faults import NOTHING_Q, kb, kb_json

HANG_SECONDS = 30


def _miss(fleet: Path) -> dict:
    try:
        return kb_json(NOTHING_Q, fleet, timeout=HANG_SECONDS)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"kb route hung for {HANG_SECONDS} s") from None


@pytest.mark.parametrize("planted", [".gitignore", ".git"])
def test_a_fifo_in_the_work_tree_does_not_hang_a_miss(demo, planted):
    if planted == ".git":
        os.mkfifo(demo / ".git")  # a work tree whose .git is neither a folder nor a gitdir file
    else:
        subprocess.run(["git", "init", "-q", str(demo)], check=True)
        (demo / ".gitignore").unlink(missing_ok=True)
        os.mkfifo(demo / ".gitignore")
    answer = _miss(demo)
    assert answer["verdict"] == "nothing"
    log = demo / "kb-misses.txt"
    assert NOTHING_Q in log.read_text(encoding="utf-8"), answer.get("miss")


def test_a_git_file_that_is_not_utf8_does_not_break_a_miss(demo):
    (demo / ".git").write_bytes(b"gitdir: \xff\xfe\n")  # a linked work tree's .git file, damaged
    answer = _miss(demo)
    assert answer["verdict"] == "nothing"
    assert NOTHING_Q in (demo / "kb-misses.txt").read_text(encoding="utf-8"), answer.get("miss")
