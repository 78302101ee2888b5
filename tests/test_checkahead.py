"""The stale check's plan run ahead in a forked second process (engine/checkahead.py), while a
fresh `kb route` / `kb boot` imports the engine: it sees every change the check sees, its
verdict is the one used, and a child that fails, or a parent that dies, leaves nothing behind.

Each fork runs in a fresh interpreter of its own (a real subprocess): a test process may hold
threads, and a process with threads is never forked."""

from __future__ import annotations

from engine.sealedfile import encode
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine import indexupdate, listing_cache
from engine.notefiles import list_notes
from tests.conftest import copy_demo, run_kb
from tests.test_listing_cache import NOTES, PLAN_CHANGES, _base, _keep_listing_now, plan_kept

REPO = Path(__file__).resolve().parents[1]


def _python(script: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", script, *args], cwd=REPO, capture_output=True, text=True,
                          timeout=60)


# The plan run by the child, and unchanged() answered from its verdict: the plan run in this
# process would raise.
AHEAD = """
import sys
from engine import listing_cache
from engine.sealedfile import decode
assert listing_cache.check_ahead(["route", "a question", sys.argv[1], "--json"]), "no second process"
def in_this_process(plan):
    raise AssertionError("the plan ran in this process")
listing_cache.plan_holds = in_this_process
stamp = decode(bytes.fromhex(sys.argv[2]))
print(listing_cache.unchanged(sys.argv[1], stamp))
listing_cache.plan_holds = lambda plan: "in process"
assert listing_cache.unchanged(sys.argv[1], stamp) in ("in process", False)  # a verdict serves one check
"""


def _ahead(base: Path, stamp: tuple) -> str:
    r = _python(AHEAD, str(base), encode(stamp).hex())
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


@pytest.mark.parametrize("change", PLAN_CHANGES, ids=[c.__name__.lstrip("_") for c in PLAN_CHANGES])
def test_every_change_the_check_sees_fails_the_plan_run_ahead(tmp_path, change):
    base = _base(tmp_path.resolve())  # resolved: the child keys its verdicts by real path
    known, young_from, stamp = plan_kept(base)
    assert _ahead(base, stamp) == "True"
    assert _ahead(base, ("another index state", 2)) == "False"  # a verdict for another state is not used
    time.sleep(0.02)
    change(base)
    assert _ahead(base, stamp) == "False"
    assert indexupdate.notes_changed(base, known, {}, [], young_from, stamp) is True


BOOT_HERE = """
import os
from engine import checkahead, listing_cache
assert listing_cache.check_ahead(["boot", "--text"]), "no second process"
print(checkahead.take(os.getcwd()) is not None)
"""


def test_a_boot_without_a_path_checks_its_working_folder_ahead(tmp_path):
    base = _base(tmp_path.resolve())
    _keep_listing_now(base)
    found, _ = list_notes(base)
    known = {rel: f"{st.st_mtime_ns}:{st.st_size}" for rel, st in found.items()}
    assert indexupdate.notes_changed(base, known, {}, [], time.time_ns(), ("a state",)) is False
    r = subprocess.run([sys.executable, "-c", BOOT_HERE], cwd=base, capture_output=True, text=True, timeout=60,
                       env={**os.environ, "PYTHONPATH": str(REPO)})
    assert r.returncode == 0 and r.stdout.strip() == "True", r.stderr


FAILURES = """
import os, signal
from engine import checkahead
def killed():
    yield ("sent", 1)
    os.kill(os.getpid(), signal.SIGKILL)
    yield ("never", 2)
def raises():
    yield ("sent", 1)
    raise RuntimeError("a failure in the child")
def not_marshalled():
    yield ("sent", 1)
    yield ("never", object())
def not_a_pair():
    yield ("sent", 1)
    yield [1, 2]
    yield ([1], 2)
    yield ("never", 2, 3)
for work in (killed, raises, not_marshalled, not_a_pair):
    assert checkahead.start(work), work.__name__
    pid = checkahead._child[0]
    assert checkahead.take("sent") == 1, work.__name__  # a whole frame before the failure counts
    assert checkahead.take("never") is None, work.__name__
    assert checkahead.take("sent") is None  # taken once
    try:
        os.waitpid(pid, os.WNOHANG)
        raise AssertionError(f"{work.__name__}: child not reaped")
    except ChildProcessError:
        pass
assert checkahead.start(lambda: iter([("a base", (("a state",), True))]))
pid = checkahead._child[0]
assert checkahead.take("a base") == (("a state",), True)
import time
time.sleep(0.2)  # the child has sent everything and ended
checkahead._finish()  # what runs at exit: the ended child is reaped, not left a zombie
try:
    os.waitpid(pid, os.WNOHANG)
    raise AssertionError("the child that ended was not reaped at exit")
except ChildProcessError:
    pass
print("ok")
"""


def test_a_child_that_fails_is_no_answer_and_is_reaped():
    r = _python(FAILURES)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


THREADED = """
import threading, time
from engine import checkahead
t = threading.Thread(target=time.sleep, args=(0.5,))
t.start()
print(checkahead.start(lambda: iter(())))
"""


def test_a_process_with_a_thread_is_never_forked():
    r = _python(THREADED)
    assert r.returncode == 0 and r.stdout.strip() == "False", r.stderr


ORPHANED = """
import os, time
from engine import checkahead
def slow():
    time.sleep(0.5)
    yield ("a", (1, True))
assert checkahead.start(slow)
print(checkahead._child[0], flush=True)
os._exit(0)  # the parent gone before it reads: the child's write fails and it ends
"""


def test_a_parent_that_dies_first_leaves_no_child_running():
    r = _python(ORPHANED)
    assert r.returncode == 0, r.stderr
    pid = int(r.stdout)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return  # gone (reaped by whoever adopted it)
        if state == "Z":
            return  # ended; reaping an orphan is its new parent's part
        time.sleep(0.05)
    raise AssertionError(f"the child {pid} still runs 10 s after its parent died")


def test_kb_route_with_the_check_run_ahead_sees_an_edit(tmp_path):
    """End to end: a fresh `kb route` whose check runs ahead answers as one whose check does
    not, and after an edit answers from the edited note."""
    demo = copy_demo(tmp_path / "demo")
    base = demo / "yaron"
    for i in range(NOTES):  # enough notes for the base to keep a listing, and so a plan
        (base / "knowledge" / f"filler{i}.md").write_text(f"# Filler {i}\n\nSearch for: `filler{i}`\n")
    then = time.time() - 120
    for note in demo.rglob("*.md"):
        os.utime(note, (then, then))
    assert run_kb("index", str(demo)).returncode == 0
    time.sleep(listing_cache.RACY_NS / 1e9 + 0.2)  # the folders (.kb made in each) old enough to keep a listing
    for f in demo.glob("*/.kb/index.db*"):  # old enough for the opening cache, which stamps the plan
        os.utime(f, (then, then))

    def route(question: str, ahead: str) -> str:
        r = run_kb("route", question, str(demo), "--json", env={"KB_CHECK_AHEAD": ahead})
        assert r.returncode == 0, r.stderr
        return r.stdout.split('"timings"')[0]

    route("protein", "0")  # keeps the opening cache and the listing
    plain = route("protein", "0")  # keeps the plan, stamped with the opening's index state
    assert (base / ".kb" / listing_cache.CACHE_NAME).is_file()
    assert listing_cache.kept_plan(str(base.resolve())) is not None
    assert route("protein", "1") == plain
    note = base / "knowledge" / "protein-basics.md"
    note.write_text(note.read_text().replace("`whey`,", "`whey`, `quinoa`,"))
    assert '"keyword_top": "yaron/knowledge/protein-basics.md"' in route("quinoa", "1")
