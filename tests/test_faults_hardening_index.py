"""Faults found from outside (issue 13), the index's share: bounded connections whatever the
number of threads, a listing error that is never taken for a deletion, one snapshot per
search, one base per real directory, and `kb serve` answering a malformed line with the
JSON-RPC error instead of silence. Real SQLite files, real subprocesses, a real server."""

from __future__ import annotations

import json
import os
import resource
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from _faults import DEPLOY_Q, kb, kb_json, modes_bind, run_kb_obeying_modes
from conftest import REPO, copy_demo
from engine.index import fts5search, indexpool
from engine.notes.fleet import Base
from engine.memory import Memory
from engine.index.textindex import TextIndex

BASES = ("steve", "yaron", "zed")


def _index_db_fds() -> int:
    """Open descriptors of this process on an index file itself (one per SQLite connection)."""
    n = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}").endswith("/.kb/index.db"):
                n += 1
        except OSError:
            pass
    return n


# -- bounded connections ---------------------------------------------------------------


def test_forty_threads_keep_a_bounded_number_of_connections(tmp_path):
    """`kb serve`'s library runs tools on up to 40 threads: a connection per thread per base
    was 120 open index files for the demo's 3 bases (and EMFILE for 16 bases under
    ulimit -n 1024). The pool keeps at most READERS_PER_BASE per base, whatever the threads."""
    fleet = copy_demo(tmp_path / "demo")
    mem = Memory(fleet)
    truth = [r.id for r in mem.ask(DEPLOY_Q, record_miss=False).results]
    before = _index_db_fds()
    parked = threading.Barrier(41)
    released = threading.Event()
    answers: list = []
    errors: list = []

    def worker():
        try:
            answers.append([r.id for r in mem.ask(DEPLOY_Q, record_miss=False).results])
        except Exception as e:  # noqa: BLE001 - any exception is the failure looked for
            errors.append(repr(e))
        parked.wait(timeout=60)
        released.wait(timeout=60)  # alive: a thread's own connection would still be open

    threads = [threading.Thread(target=worker) for _ in range(40)]
    for t in threads:
        t.start()
    parked.wait(timeout=60)
    try:
        opened = _index_db_fds() - before
    finally:
        released.set()
        for t in threads:
            t.join(timeout=60)
    assert errors == []
    assert answers == [truth] * 40
    assert opened <= len(BASES) * indexpool.READERS_PER_BASE, f"{opened} index connections open for 40 threads"


def _four_hundred_bases(root: Path) -> Path:
    root.mkdir()
    for i in range(400):
        b = root / f"a{i:03d}"
        b.mkdir()
        (b / "index.md").write_text(f"# Agent {i}\n\nSearch for: topic{i}, shared\n\nNotes about topic{i}.\n")
    return root


def _low_fd_limit() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))


@pytest.mark.slow
def test_kb_index_over_400_bases_under_ulimit_1024(tmp_path):
    """Before: 61 of 400 bases "cannot be written (unable to open database file)", the true
    cause (too many open files) unnamed. Idle connections are capped for the whole process."""
    fleet = _four_hundred_bases(tmp_path / "fleet")
    r = subprocess.run(
        [sys.executable, "-m", "engine.cli", "index", str(fleet)], cwd=REPO, capture_output=True, text=True,
        timeout=300, preexec_fn=_low_fd_limit,
    )
    out = r.stdout + r.stderr
    assert "Traceback" not in out, out[-3000:]
    assert r.returncode == 0, out[-3000:]
    assert "cannot be written" not in out and "unable to open" not in out, out[-3000:]
    for i in (0, 199, 399):  # each base's index on disk holds its note
        con = sqlite3.connect(fleet / f"a{i:03d}" / ".kb" / "index.db")
        assert con.execute("SELECT path FROM files").fetchall() == [("index.md",)]
        con.close()


def test_out_of_descriptors_anyway_the_true_cause_is_named(tmp_path):
    """A process that has its descriptors used up by something else (here descriptors 3-55 taken
    of a limit of 64) still answers, in memory, and says why in its own words: not SQLite's
    "unable to open database file"."""
    fleet = tmp_path / "fleet"
    fleet.mkdir()
    for i in range(16):
        (fleet / f"a{i:02d}").mkdir()
        (fleet / f"a{i:02d}" / "index.md").write_text(f"# Agent {i}\n\nSearch for: topic{i}\n\nNotes.\n")

    # The crowding happens in the child itself, before kb runs: a preexec_fn that dup2()s over
    # low descriptors can clobber subprocess's own error pipe, whose number varies by host.
    crowd = (
        "import os, resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))\n"
        "null = os.open(os.devnull, os.O_RDONLY)\n"
        "for n in range(3, 56):\n"
        "    if n != null:\n"
        "        os.dup2(null, n)\n"
        "from engine.cli import main\n"
        f"sys.exit(main(['index', {str(fleet)!r}]))\n"
    )
    r = subprocess.run([sys.executable, "-c", crowd], cwd=REPO, capture_output=True, text=True, timeout=120)
    out = r.stdout + r.stderr
    assert "Traceback" not in out, out[-3000:]
    refused = [line for line in r.stderr.splitlines() if "cannot be written" in line]
    assert refused, f"the test must run out of descriptors to mean anything: exit {r.returncode} {out[-600:]}"
    assert all("too many open files: " in line and "limit of 64" in line for line in refused), refused[:3]


# -- listing errors are not deletions -----------------------------------------------------


def _indexed_paths(base: Path) -> list[str]:
    con = sqlite3.connect(base / ".kb" / "index.db")
    try:
        return sorted(r[0] for r in con.execute("SELECT path FROM files"))
    finally:
        con.close()


@pytest.mark.skipif(modes_bind() is not None, reason=modes_bind() or "")
def test_a_folder_that_cannot_be_listed_keeps_its_notes_indexed(tmp_path):
    """A listing that fails (no permission here; out of descriptors under `kb serve`) was
    taken as "every note below was deleted": the index dropped them and the answer went to
    "nothing". Now the notes stay as indexed, and the answer names the folder and why."""
    fleet = copy_demo(tmp_path / "demo")
    kb("index", str(fleet))
    zed = fleet / "zed"
    indexed = _indexed_paths(zed)
    assert "knowledge/deploy-checklist.md" in indexed
    truth = kb_json(DEPLOY_Q, fleet)
    (zed / "knowledge").chmod(0)
    try:
        r = run_kb_obeying_modes("route", DEPLOY_Q, str(fleet), "--json")
        assert r.returncode == 0, r.stderr[-2000:]
        a = json.loads(r.stdout)
        assert _indexed_paths(zed) == indexed
        assert "zed/knowledge: cannot list (Permission denied)" in a["skipped"]
        assert [x["path"] for x in a["results"]] == [x["path"] for x in truth["results"]]
        assert a["verdict"] == truth["verdict"]
    finally:
        (zed / "knowledge").chmod(0o755)
    # Listed again, the folder's notes are simply there: nothing was lost on the way.
    again = kb_json(DEPLOY_Q, fleet)
    assert again["results"] == truth["results"]
    assert not [s for s in again["skipped"] if "cannot list" in s]


# -- one snapshot per search ----------------------------------------------------------------


class _CommitsBetweenSelects:
    """A real connection whose search is interrupted, between reading the best files and
    reading their chunks, by a real `kb index` commit from another connection: the moment a
    concurrent re-index hit 6 times in 14,553 searches, here made to happen every time."""

    def __init__(self, con: sqlite3.Connection, commit):
        self._con, self._commit, self.fired = con, commit, False

    def execute(self, sql: str, *args):
        if "FROM chunks WHERE rowid IN" in sql and not self.fired:
            self.fired = True
            self._commit()
        return self._con.execute(sql, *args)

    def __getattr__(self, name):
        return getattr(self._con, name)


def test_a_search_reads_one_snapshot_while_kb_index_commits(tmp_path):
    fleet = copy_demo(tmp_path / "demo")
    kb("index", str(fleet))
    zed = fleet / "zed"
    con = sqlite3.connect(zed / ".kb" / "index.db", isolation_level=None, check_same_thread=False)
    terms = ["deploy", "producao"]
    before = fts5search.search(con, terms, 10)
    assert before[0], "the question must find notes for the test to mean anything"

    def reindex_every_note():
        for note in zed.rglob("*.md"):
            note.write_text(note.read_text() + "\nEdited while a search was reading.\n")
        writer = TextIndex(Base(name="zed", root=zed))
        report = writer.update()
        writer.close()
        assert report.changed >= 1

    proxy = _CommitsBetweenSelects(con, reindex_every_note)
    during = fts5search.search(proxy, terms, 10)
    assert proxy.fired
    assert during == before  # the state the search started on, whole
    assert not con.in_transaction
    after = fts5search.search(con, terms, 10)
    assert sorted(r[0] for r in after[0]) == sorted(r[0] for r in before[0])  # then the new state
    con.close()


# -- one base per real directory -------------------------------------------------------------


def test_a_base_reached_twice_through_a_link_counts_once_and_check_says_so(tmp_path):
    """`ln -s zed fleet/zed2` made a fourth agent: zed's notes twice in every score, the floor
    and the margins moved, and `kb check` said clean. One base per real directory."""
    fleet = copy_demo(tmp_path / "demo")
    truth = kb_json(DEPLOY_Q, fleet)
    (fleet / "zed2").symlink_to("zed")  # named after zed, so sorted after it...
    (fleet / "a-zed").symlink_to("zed")  # ...and before it: the folder is kept either way
    a = kb_json(DEPLOY_Q, fleet)
    assert a["indexed"] == truth["indexed"]
    assert [(r["base"], r["path"], r["score"]) for r in a["results"]] == [
        (r["base"], r["path"], r["score"]) for r in truth["results"]
    ]
    assert a["confidence"] == truth["confidence"] and a["verdict"] == truth["verdict"]
    r = kb("check", str(fleet), "--json", ok=False)
    found = [f for f in json.loads(r.stdout)["findings"] if f["code"] == "W08"]
    assert sorted((f["base"], f["message"]) for f in found) == [
        ("a-zed", "the same folder as base zed (reached through a link): counted once, as zed"),
        ("zed2", "the same folder as base zed (reached through a link): counted once, as zed"),
    ]


# -- kb serve: a line it cannot read gets the JSON-RPC error reply ------------------------------


class _RawServer:
    """`kb serve` in a subprocess, spoken to line by line (an SDK client would never send
    what these tests send)."""

    def __init__(self, fleet: Path):
        self.p = subprocess.Popen(
            [sys.executable, "-m", "engine.cli", "serve", str(fleet)], cwd=REPO,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )

    def send(self, line: bytes) -> None:
        self.p.stdin.write(line + b"\n")
        self.p.stdin.flush()

    def reply(self, timeout: float = 60) -> dict:
        import select

        ready, _, _ = select.select([self.p.stdout], [], [], timeout)
        assert ready, "no reply: a client waiting on this id would wait forever"
        return json.loads(self.p.stdout.readline())

    def call(self, msg: dict) -> dict:
        self.send(json.dumps(msg).encode())
        return self.reply()

    def initialize(self) -> dict:
        return self.call({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}})

    def end(self) -> str:
        self.p.stdin.close()
        self.p.wait(timeout=60)
        err = self.p.stderr.read().decode("utf-8", "replace")
        self.p.stdout.close()
        self.p.stderr.close()
        return err


@pytest.mark.parametrize(
    "line, code, answered_id",
    [
        (b"not json at all", -32700, None),
        (b'{"jsonrpc": "2.0", "id": 7', -32700, None),  # cut short
        (b'{"jsonrpc": "2.0", "id": 7}', -32600, 7),  # no method
        (b"[]", -32600, None),
        (b'"a string"', -32600, None),
        (b'{"jsonrpc": "2.0", "id": "q8", "method": "tools/call", "params": {"name": "kb_route",'
         b' "arguments": {"question": "\\ud800 deploy"}}}', -32600, "q8"),  # a lone surrogate
        (b'{"jsonrpc": "2.0", "id": 9, "method": "ping", "x": "caf\xe9"}', -32700, None),  # not UTF-8
        (b'{"jsonrpc": "2.0", "id": [1], "method": "ping"}', -32600, None),  # an id of the wrong type
        # Nested deeper than the library's parser goes: it dropped the line without a reply.
        pytest.param(b'{"jsonrpc": "2.0", "id": "d3", "method": "tools/call", "params": {"name": "kb_route",'
                     b' "arguments": {"question": "x", "x": ' + b"[" * 300 + b"]" * 300 + b"}}}", -32600, "d3",
                     id="nested-300"),
        pytest.param(b"[" * 100_000 + b"]" * 100_000, -32700, None, id="nested-100000"),  # it killed the relay
        # An integer too long for Python, then text that is not JSON, or nesting Python cannot read.
        pytest.param(b'{"id": ' + b"9" * 5_000 + b", oops", -32700, None, id="long-number-then-not-json"),
        pytest.param(b"[" + b"9" * 5_000 + b"," + b"[" * 100_000 + b"]" * 100_001, -32700, None,
                     id="long-number-then-nested-100000"),
    ],
)
def test_kb_serve_answers_a_line_it_cannot_read_and_stays_up(tmp_path, line, code, answered_id):
    fleet = copy_demo(tmp_path / "demo")
    s = _RawServer(fleet)
    try:
        init = s.initialize()
        assert init["id"] == 1 and "result" in init
        s.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        s.send(line)
        bad = s.reply()
        assert bad["jsonrpc"] == "2.0" and bad["id"] == answered_id
        assert bad["error"]["code"] == code and bad["error"]["message"]
        # Still up, and still right: the next request is answered in full.
        routed = s.call({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                         "params": {"name": "kb_route", "arguments": {"question": DEPLOY_Q}}})
        assert routed["id"] == 2
        answer = json.loads(routed["result"]["content"][0]["text"])
        assert answer["keyword_top"] == "zed/knowledge/deploy-checklist.md"
    finally:
        err = s.end()
    assert "Traceback" not in err, err[-3000:]
    assert f"refused a line ({code})" in err  # and the server's log says what it refused


@pytest.mark.parametrize("big, digits", [(b"9" * 5_000, "5,000"), (b"-" + b"9" * 4_300, "4,300")],
                         ids=["5000-digits", "minus-4300-digits"])
@pytest.mark.parametrize("where, answered_id", [("argument", "n5"), ("id", None)])
def test_kb_serve_says_in_its_own_words_that_a_number_is_too_long(tmp_path, where, answered_id, big, digits):
    # 5,000 digits: Python's int() refuses past 4,300, and the refusal used to carry its
    # advice about sys.set_int_max_str_digits to a client that cannot act on it. A minus and
    # 4,300 digits: Python reads it (its limit counts digits), the library's parser does not
    # (its limit counts the sign), and the refusal came in the library's words.
    msg_id = b'"n5"' if where == "argument" else big
    top = big if where == "argument" else b"3"
    line = (b'{"jsonrpc": "2.0", "id": ' + msg_id + b', "method": "tools/call", "params": {"name": "kb_route",'
            b' "arguments": {"question": "deploy", "top": ' + top + b"}}}")
    s = _RawServer(copy_demo(tmp_path / "demo"))
    try:
        init = s.initialize()
        assert "result" in init
        s.send(line)
        bad = s.reply()
        assert bad["id"] == answered_id and bad["error"]["code"] == -32600
        message = bad["error"]["message"]
        assert f"{digits} digits" in message and "at most 4,300" in message, message
        assert "out of range" not in message and "Invalid JSON" not in message, message
        assert "set_int_max_str_digits" not in message and "sys." not in message, message
        assert s.call({"jsonrpc": "2.0", "id": 2, "method": "ping"})["id"] == 2  # still up
    finally:
        err = s.end()
    assert "Traceback" not in err, err[-3000:]
