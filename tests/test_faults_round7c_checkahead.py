"""Round 7c: the stale check's forked child (engine/checkahead.py) is reaped as soon as its
last verdict is read, not left a zombie until the parent exits (20-30 ms of a kb route,
longer under --rerank). Each fork in a fresh interpreter (a test process may hold threads)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.test_listing_cache import _base, plan_kept

REPO = Path(__file__).resolve().parents[1]

# The child's pid is read before its verdict is taken; once taken, waitpid must find no such
# child (ChildProcessError): reaped already. A zombie, or a child still running, is found.
LAST_READ = """
import os, sys
from engine import checkahead, listing_cache
assert listing_cache.check_ahead(["route", "a question", sys.argv[1]]), "no second process"
pid = checkahead._child[0]
assert checkahead.take(sys.argv[1]) is not None, "no verdict"
try:
    print("left", os.waitpid(pid, os.WNOHANG))
except ChildProcessError:
    print("reaped")
"""


def test_the_child_is_reaped_once_its_last_verdict_is_read(tmp_path):
    base = _base(tmp_path.resolve())
    plan_kept(base)
    r = subprocess.run([sys.executable, "-c", LAST_READ, str(base)], cwd=REPO, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "reaped"


# Two bases of a fleet: after the first verdict the child may still owe the second (it is
# not reaped then, nor waited for); after the second it is reaped.
TWO = """
import os
from engine import checkahead
assert checkahead.start(lambda: iter([("a", 1), ("b", 2)]), last_key="b")
pid = checkahead._child[0]
assert checkahead.take("a") == 1
assert checkahead.take("b") == 2
try:
    print("left", os.waitpid(pid, os.WNOHANG))
except ChildProcessError:
    print("reaped")
"""


def test_a_fleet_child_is_reaped_after_its_last_base(tmp_path):
    r = subprocess.run([sys.executable, "-c", TWO], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "reaped"
