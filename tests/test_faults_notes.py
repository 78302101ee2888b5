"""Faults, category 1: hostile notes. Each is reported in one line naming the file and the
problem, or indexed as text; the rest of the base is indexed; answers keep coming; no
traceback reaches the user; not one byte of markdown changes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import unicodedata
from pathlib import Path

import pytest

from _faults import DEPLOY_Q, assert_terminal_safe, kb, kb_json, modes_bind, run_kb_obeying_modes, tree_hash
from conftest import REPO, copy_demo
from engine.notes import bignote, notefiles
from engine.index import indexupdate
from engine.memory import Memory
from engine.index.textindex import TextIndex

MB = 1024 * 1024


def _write(p: Path, data: str | bytes) -> Path:
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        p.write_text(data, encoding="utf-8")
    else:
        p.write_bytes(data)
    return p


def _deploy_still_answers(fleet: Path) -> dict:
    a = kb_json(DEPLOY_Q, fleet)
    assert a["verdict"] == "hit" and a["keyword_top"] == "zed/knowledge/deploy-checklist.md"
    return a


# -- encodings, binaries, emptiness ----------------------------------------------------


def test_notes_that_are_not_utf8_are_skipped_by_name_and_the_rest_is_indexed(tmp_path):
    fleet = copy_demo(tmp_path / "demo")
    k = fleet / "zed" / "knowledge"
    _write(k / "latin1.md", "# Café\n\nSearch for: café, padaria\n".encode("latin-1"))
    _write(k / "utf16.md", "# Chá\n\nSearch for: chá\n".encode("utf-16"))
    _write(k / "late-bad.md", b"# Fine start\n\nSearch for: fine\n\n" + b"ok " * 5000 + b"\xc3\x28 broken")
    before = tree_hash(fleet)
    r = kb("index", str(fleet))
    assert "knowledge/latin1.md: not UTF-8 (byte 0xe9 at offset 5)" in r.stdout
    assert "knowledge/utf16.md: binary, not markdown (NUL byte)" in r.stdout  # UTF-16 carries NULs
    assert "knowledge/late-bad.md: not UTF-8 (byte 0xc3 at offset 15032)" in r.stdout
    assert "zed: 4 files" in r.stdout  # the four good notes of zed, and nothing else
    a = _deploy_still_answers(fleet)
    assert "zed/knowledge/latin1.md: not UTF-8 (byte 0xe9 at offset 5)" in a["skipped"]
    assert kb_json("padaria", fleet)["verdict"] == "nothing"  # its keys never reached the catalogue
    assert tree_hash(fleet) == before


def test_a_binary_file_named_md(tmp_path):
    fleet = copy_demo(tmp_path / "demo")
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 40
    _write(fleet / "steve" / "knowledge" / "logo.md", png)
    _write(fleet / "steve" / "knowledge" / "random.md", os.urandom(50_000).replace(b"\x00", b"\x01"))
    before = tree_hash(fleet)
    r = kb("index", str(fleet))
    assert "knowledge/logo.md: binary, not markdown (NUL byte)" in r.stdout
    assert "knowledge/random.md: not UTF-8 (byte 0x" in r.stdout
    assert_terminal_safe(r.stdout + r.stderr)
    _deploy_still_answers(fleet)
    assert tree_hash(fleet) == before


def test_empty_and_blank_notes(tmp_path):
    fleet = copy_demo(tmp_path / "demo")
    k = fleet / "yaron" / "knowledge"
    _write(k / "empty.md", b"")
    _write(k / "blank.md", b" \n\t\r\n   \n")
    _write(k / "bom-only.md", b"\xef\xbb\xbf")
    _write(k / "title-only.md", "# Just a title\n")
    _write(k / "no-keys.md", "# No keys\n\n**Search for:**\n\nProse about kettles.\n")
    before = tree_hash(fleet)
    r = kb("index", str(fleet))
    assert "knowledge/empty.md: empty file" in r.stdout
    assert "knowledge/blank.md: empty file" in r.stdout
    assert "knowledge/no-keys.md: the Search for: line has no keys" in r.stdout
    a = _deploy_still_answers(fleet)
    # A BOM alone and a bare title are notes with nothing to say: indexed, unreachable, harmless.
    assert {"yaron/knowledge/title-only.md", "yaron/knowledge/no-keys.md"} <= set(a["unreachable"])
    assert tree_hash(fleet) == before


# -- size ------------------------------------------------------------------------------

_RSS_SCRIPT = r"""
import json, resource, sys
from engine.memory import Memory
peak = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
mem = Memory(sys.argv[1], update=False)
mem.indexes["big"].records()          # the database open, every engine module imported
before = peak()
report = mem.indexes["big"].update()
after_index = peak()
mem.refresh()
answer = mem.ask("colossal archive", record_miss=False)
after_ask = peak()
print(json.dumps({"before": before, "after_index": after_index, "after_ask": after_ask,
                  "chunks": report.chunks, "skipped": report.skipped, "verdict": answer.verdict,
                  "top": answer.keyword_top, "passages": len(answer.results[0].passages)}))
"""


def _fifty_megabytes(path: Path, size: int) -> None:
    para = (
        "The archive keeps every delivery manifest, its route and its signature, so an audit can"
        " replay any day of the warehouse. Pallets move in waves; a wave closes when the last scan"
        " lands.\n"
    )
    with open(path, "w", encoding="utf-8") as f:
        f.write("# Colossal archive\n\nSearch for: colossal archive, warehouse ledger\n\nExists to: be large.\n\n")
        n, i = 0, 0
        while n < size:
            block = f"## Day {i}\n\n" + para * 12 + "\n"
            f.write(block)
            n += len(block)
            i += 1


@pytest.mark.slow
def test_a_50mb_note_is_indexed_in_windows_with_memory_bounded_below_its_size(tmp_path):
    base = tmp_path / "fleet" / "big"
    _write(base / "agent.txt", "name = big\n")
    _write(base / "index.md", "# Big\n\nSearch for: big base\n")
    note = base / "archive.md"
    _fifty_megabytes(note, 50 * MB)
    size = note.stat().st_size
    assert size > bignote.STREAM_ABOVE_BYTES and size < notefiles.MAX_NOTE_BYTES
    before_hash = tree_hash(base)
    r = subprocess.run(
        [sys.executable, "-c", _RSS_SCRIPT, str(base)], cwd=REPO, capture_output=True, text=True, timeout=300,
    )
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-3000:]
    m = json.loads(r.stdout)
    grew_index = m["after_index"] - m["before"]
    grew_total = m["after_ask"] - m["before"]
    # Read whole, the note would cost its own size several times (270 MB peak measured before
    # the streaming reader); in windows the growth stays under the note's size.
    assert grew_index < size * 0.6, f"indexing grew RSS by {grew_index / MB:.0f} MB for a {size / MB:.0f} MB note"
    assert grew_total < size * 0.6, f"index + ask grew RSS by {grew_total / MB:.0f} MB"
    assert m["skipped"] == [] and m["chunks"] > 30_000
    assert m["verdict"] == "hit" and m["top"] == "big/archive.md" and m["passages"] == 1
    assert tree_hash(base) == before_hash


def test_a_note_over_the_size_limit_is_skipped_unread(tmp_path, monkeypatch):
    base = tmp_path / "b"
    _write(base / "index.md", "# B\n\nSearch for: bee\n")
    _write(base / "huge.md", "# Huge\n\nSearch for: huge\n\n" + "x" * 5000)
    monkeypatch.setattr(notefiles, "MAX_NOTE_BYTES", 4096)
    rep = TextIndex(Memory(base, update=False).fleet.bases[0]).update()
    assert any(s.startswith("huge.md: too large to index (5,") for s in rep.skipped)
    assert rep.files == 1


def test_megabyte_lines_with_no_breaks_index_in_linear_time(tmp_path):
    """A megabyte on one line, in the shapes that make a careless regular expression take
    hours (measured: 100 KB of '[' took over a minute before the patterns were fixed)."""
    fleet = copy_demo(tmp_path / "demo")
    k = fleet / "zed" / "knowledge"
    shapes = {
        "letters": "word" * (MB // 4),
        "spaces-then-x": " " * MB + "x",
        "tabs-then-x": "\t" * MB + "x",
        "brackets": "[" * MB,
        "wiki-opens": "[[" * (MB // 2),
        "wiki-anchors": "[[a#" * (MB // 4),
        "link-opens": "[a](" * (MB // 4),
        "heading-tail": "# a" + " " * MB + "#" * 10 + " x",
        "bullet-spaces": "-" + " " * MB + "x",
        "label-spaces": "Search for" + " " * MB + "x",
        "fences": "```" * (MB // 3),
    }
    for name, line in shapes.items():
        _write(k / f"line-{name}.md", f"# Line {name}\n\nSearch for: line {name}\n\n{line}\n")
    before = tree_hash(fleet)
    t0 = time.monotonic()
    r = kb("index", str(fleet), timeout=120)
    took = time.monotonic() - t0
    assert took < 60, f"kb index took {took:.0f} s over eleven 1 MB lines"
    assert "skipped" not in r.stdout
    a = kb_json("line brackets", fleet)
    assert a["keyword_top"] == "zed/knowledge/line-brackets.md"
    h = kb("route", "line heading tail", str(fleet), "--hybrid", "--top", "20")
    assert "line-heading-tail.md" in h.stdout and len(h.stdout) < 20_000  # excerpts, not the line
    assert tree_hash(fleet) == before


def test_a_search_for_line_of_10000_keys(tmp_path):
    fleet = copy_demo(tmp_path / "demo")
    keys = ", ".join(f"gadget{i} model" for i in range(10_000))
    _write(fleet / "zed" / "knowledge" / "catalog.md", f"# Parts catalog\n\nSearch for: {keys}\n\nA list of parts.\n")
    before = tree_hash(fleet)
    kb("index", str(fleet))
    t0 = time.monotonic()
    a = kb_json("where is the gadget9999 model", fleet)
    assert time.monotonic() - t0 < 30
    assert a["verdict"] == "hit" and a["keyword_top"] == "zed/knowledge/catalog.md"
    assert "gadget9999 model" in a["results"][0]["matched"]
    assert a["results"][0]["why"] == "keywords #1"  # the label never reaches the text index
    _deploy_still_answers(fleet)
    assert tree_hash(fleet) == before


# -- what reaches the terminal ---------------------------------------------------------

HOSTILE_TITLE = "Evil \x1b[31mred\x1b[0m title \x07\x1b]0;pwned\x07 \x9b2J \u202eevil\u202c"


def test_control_characters_and_escapes_never_reach_the_terminal_raw(tmp_path):
    fleet = copy_demo(tmp_path / "demo")
    k = fleet / "zed" / "knowledge"
    _write(
        k / "escapes.md",
        f"# {HOSTILE_TITLE}\n\nSearch for: evil title, terminal \x1b[2J escape\n\n"
        "Exists to: show \x1b]8;;http://x\x07links\x1b]8;;\x07 and \x08 backspaces.\n\n"
        "## Body \x1b[1mbold\x1b[0m\n\nThe evil body clears \x1b[2J\x1b[H the screen, rings \x07, "
        "moves \r back, and \x9b31m C1 CSI and a DEL \x7f; a NUL comes after 8 KB.\n"
        + "padding line\n" * 800 + "evil NUL here \x00 end\n",
    )
    # A file whose very name carries an escape, and one that is skipped by that name.
    _write(k / "name-\x1b[2J-evil.md", "# Named evil\n\nSearch for: named evil\n\nevil prose\n")
    _write(k / "skip-\x1b[31m.md", b"\xff\xfe bad")
    gold = fleet / "gold-evil.tsv"
    _write(gold, "the evil title\tzed/knowledge/escapes.md\nnamed evil\tzed/knowledge/name-\x1b[2J-evil.md\n")
    before = tree_hash(fleet)

    outs = [
        kb("index", str(fleet)),
        kb("route", "evil title", str(fleet)),
        kb("route", "evil title named", str(fleet), "--hybrid", "--top", "10"),
        kb("route", "evil \x1b[2J title", str(fleet), "--hybrid"),  # the question itself too
        kb("route", "a question nobody covers \x1b[2J", str(fleet)),
        kb("eval", str(gold), str(fleet), "--no-speed"),
    ]
    for r in outs:
        assert_terminal_safe(r.stdout)
        assert_terminal_safe(r.stderr)
    assert "\\x1b[31m" in outs[1].stdout or "\\x1b" in outs[2].stdout  # made visible, not dropped
    j = kb("route", "evil title", str(fleet), "--json")
    assert_terminal_safe(j.stdout)  # C0 escaped by JSON, C1 and bidi by the CLI
    a = json.loads(j.stdout)
    assert a["results"][0]["title"] == HOSTILE_TITLE  # and the data itself is untouched
    assert tree_hash(fleet) == before


def test_right_to_left_and_combining_characters(tmp_path):
    fleet = copy_demo(tmp_path / "demo")
    k = fleet / "yaron" / "knowledge"
    _write(
        k / "rtl.md",
        "# שלום עולם\n\nSearch for: שלום עולם, مرحبا بالعالم, école de cuisine\n\n"
        "Zalgo z\u0336\u0337\u0338a\u0336l\u0334g\u0337o text, e\u0301\u0301\u0301 stacked marks, \u200f\u200e marks.\n",
    )
    before = tree_hash(fleet)
    kb("index", str(fleet))
    for q in ("שלום עולם", "مرحبا بالعالم", "école de cuisine"):
        for form in ("NFC", "NFD"):
            a = kb_json(unicodedata.normalize(form, q), fleet)
            assert a["keyword_top"] == "yaron/knowledge/rtl.md", (q, form)
            assert a["verdict"] == "hit"
    h = kb("route", "zalgo stacked", str(fleet), "--hybrid")
    assert "rtl.md" in h.stdout
    assert_terminal_safe(h.stdout)
    assert tree_hash(fleet) == before


# -- the filesystem under the notes ----------------------------------------------------


def test_a_file_that_vanishes_between_listing_and_reading(tmp_path, monkeypatch):
    fleet = copy_demo(tmp_path / "demo")
    doomed = fleet / "zed" / "knowledge" / "doomed.md"
    _write(doomed, "# Doomed\n\nSearch for: doomed note\n")
    real_list = indexupdate.list_notes

    def list_then_delete(root):
        found, problems = real_list(root)
        if doomed.exists() and Path(root) == doomed.parents[1]:
            doomed.unlink()  # listed, stat taken, gone before the read
        return found, problems

    monkeypatch.setattr(indexupdate, "list_notes", list_then_delete)
    mem = Memory(fleet, update=False)
    rep = mem.indexes["zed"].update()
    assert "knowledge/doomed.md: vanished before it could be read" in rep.skipped
    assert rep.files == 4
    monkeypatch.setattr(indexupdate, "list_notes", real_list)
    mem.refresh()
    assert mem.ask(DEPLOY_Q, record_miss=False).verdict == "hit"


def test_a_large_note_that_vanishes_between_its_two_passes(tmp_path, monkeypatch):
    base = tmp_path / "b"
    _write(base / "index.md", "# B\n\nSearch for: bee\n")
    big = _write(base / "big.md", "# Big\n\nSearch for: big\n\n" + "words and more words\n" * 300)
    monkeypatch.setattr(bignote, "STREAM_ABOVE_BYTES", 1024)
    real_scan = bignote.scan

    def scan_then_delete(*a, **kw):
        s = real_scan(*a, **kw)
        big.unlink()
        return s

    monkeypatch.setattr(bignote, "scan", scan_then_delete)
    idx = TextIndex(Memory(base, update=False).fleet.bases[0])
    idx.update()  # pass two finds nothing: no crash, and the next update drops the note
    monkeypatch.setattr(bignote, "scan", real_scan)
    assert idx.stale()
    rep = idx.update()
    assert rep.removed == 1 and [r.path for r in idx.records()] == ["index.md"]


def test_a_note_without_read_permission(tmp_path):
    why = modes_bind()
    if why:
        pytest.skip(why)
    fleet = copy_demo(tmp_path / "demo")
    secret = _write(fleet / "steve" / "knowledge" / "secret.md", "# Secret\n\nSearch for: secret plan\n")
    locked_dir = fleet / "steve" / "private"
    _write(locked_dir / "hidden.md", "# Hidden\n\nSearch for: hidden\n")
    secret.chmod(0o000)
    locked_dir.chmod(0o000)
    try:
        before = tree_hash(fleet)
        r = run_kb_obeying_modes("index", str(fleet))
        assert r.returncode == 0, r.stderr
        assert "knowledge/secret.md: cannot read (permission denied)" in r.stdout
        assert "private: cannot list (Permission denied)" in r.stdout
        a = json.loads(run_kb_obeying_modes("route", DEPLOY_Q, str(fleet), "--json").stdout)
        assert a["verdict"] == "hit"
        assert "steve/knowledge/secret.md: cannot read (permission denied)" in a["skipped"]
        assert tree_hash(fleet) == before
    finally:
        secret.chmod(0o644)
        locked_dir.chmod(0o755)
    # Given back its permission, the note is read on the next answer.
    assert kb_json("secret plan", fleet)["keyword_top"] == "steve/knowledge/secret.md"


def test_symlink_loops_and_odd_links(tmp_path):
    fleet = copy_demo(tmp_path / "demo")
    k = fleet / "zed" / "knowledge"
    os.symlink("self.md", k / "self.md")
    os.symlink("pong.md", k / "ping.md")
    os.symlink("ping.md", k / "pong.md")
    os.symlink("nowhere.md", k / "dangling.md")
    os.symlink("..", k / "parent-loop")  # a directory loop: never followed
    os.symlink("../../steve", fleet / "zed" / "steve-again")
    outside = _write(tmp_path / "outside.md", "# Outside\n\nSearch for: outside note\n")
    os.symlink(outside, k / "outside-link.md")  # a link to a file is read through
    before = tree_hash(fleet)
    r = kb("index", str(fleet), timeout=60)
    for name in ("self", "ping", "pong"):
        assert f"knowledge/{name}.md: cannot read (Too many levels of symbolic links)" in r.stdout
    assert "knowledge/dangling.md: cannot read (No such file or directory)" in r.stdout
    assert "zed: 5 files" in r.stdout  # the four notes and the linked one; no loop walked
    assert kb_json("outside note", fleet)["keyword_top"] == "zed/knowledge/outside-link.md"
    _deploy_still_answers(fleet)
    assert tree_hash(fleet) == before


def test_a_directory_named_md_and_other_non_files(tmp_path):
    fleet = copy_demo(tmp_path / "demo")
    k = fleet / "yaron" / "knowledge"
    _write(k / "topic.md" / "inside.md", "# Inside a folder named topic.md\n\nSearch for: inside folder\n")
    _write(k / ".md" / "hidden.md", "# Hidden\n\nSearch for: hidden folder\n")
    (k / "empty-dir.md").mkdir()
    os.mkfifo(k / "pipe.md")  # reading it would block forever
    before = tree_hash(fleet)
    r = kb("index", str(fleet), timeout=60)
    assert "yaron: 5 files" in r.stdout  # the four notes and topic.md/inside.md
    assert "skipped" not in r.stdout
    assert kb_json("inside folder", fleet)["keyword_top"] == "yaron/knowledge/topic.md/inside.md"
    hidden = kb_json("hidden", fleet)  # hidden folders are not read
    assert hidden["verdict"] == "nothing" and not any("hidden.md" in r["path"] for r in hidden["results"])
    _deploy_still_answers(fleet)
    assert tree_hash(fleet) == before


def test_the_fleets_own_small_files_as_fifos(tmp_path):
    """agent.txt, fleet.txt and kb-aliases.txt as named pipes: each read would block forever
    (kb route hung on all three); they are treated as absent and the rest answers."""
    fleet = copy_demo(tmp_path / "demo")
    for f in (fleet / "zed" / "agent.txt", fleet / "fleet.txt", fleet / "kb-aliases.txt"):
        f.unlink(missing_ok=True)
        os.mkfifo(f)
    before = tree_hash(fleet)
    kb("index", str(fleet), timeout=30)
    a = kb_json(DEPLOY_Q, fleet, timeout=30)
    assert a["verdict"] == "hit" and a["agent"]["name"] == "zed"
    assert tree_hash(fleet) == before


def test_the_other_verbs_keep_a_hostile_fleet_off_the_terminal(tmp_path):
    """kb check, fleet, list and misses over notes and agent files holding escapes and bidi
    overrides: no raw control character in their text or their --json, no traceback."""
    fleet = copy_demo(tmp_path / "demo")
    _write(fleet / "zed" / "knowledge" / "hostile.md",
           f"# {HOSTILE_TITLE}\n\nSearch for: hostile \x1b[2J key, [[x\x1b]]\n\n"
           "Exists to: \x1b]0;pwned\x07 \u202eevil\u202c\n\nSee [l\x1b[2J](../nowhere\x07.md) and [[wiki\u202e]].\n")
    _write(fleet / "steve" / "agent.txt", "name = Steve \x1b[31m\u202e\nrole = growth \x9b2J\nends = \x07here\n")
    kb("route", "satelite \x1b[2J \u202e", str(fleet))  # a miss, so `kb misses` has a hostile line
    before = tree_hash(fleet)
    for verb in (["check"], ["fleet"], ["list"], ["misses"]):
        for extra in ([], ["--json"]):
            r = kb(*verb, str(fleet), *extra, ok=False, timeout=60)
            assert r.returncode in (0, 1), r.stderr  # check exits 1 when it has findings
            assert_terminal_safe(r.stdout)
            assert_terminal_safe(r.stderr)
            if extra:
                json.loads(r.stdout)
    assert tree_hash(fleet) == before


def test_a_fleet_path_this_user_may_not_enter_is_one_line(tmp_path):
    why = modes_bind()
    if why:
        pytest.skip(why)
    locked = tmp_path / "locked"
    fleet = copy_demo(locked / "demo")
    locked.chmod(0o000)
    try:
        for verb in (["route", DEPLOY_Q], ["index"], ["route", DEPLOY_Q, "--json"]):
            r = run_kb_obeying_modes(*verb[:2], str(fleet), *verb[2:])
            assert r.returncode == 2
            assert r.stderr.strip().splitlines() == [f"kb: {fleet}: cannot read (Permission denied)"]
    finally:
        locked.chmod(0o755)
    # A base that can be listed but not entered (mode 600 on a folder): named as a path, one
    # line; inside a fleet root, left out, and the rest of the fleet answers.
    steve = fleet / "steve"
    steve.chmod(0o600)
    try:
        r = run_kb_obeying_modes("route", DEPLOY_Q, str(steve))
        assert r.returncode == 2 and r.stderr.strip().splitlines() == [f"kb: {steve}: cannot read (Permission denied)"]
        r = run_kb_obeying_modes("route", DEPLOY_Q, str(fleet), "--json")
        assert r.returncode == 0 and json.loads(r.stdout)["keyword_top"] == "zed/knowledge/deploy-checklist.md"
        for verb in ("fleet", "check", "list"):
            r = run_kb_obeying_modes(verb, str(fleet))
            assert r.returncode in (0, 1)
    finally:
        steve.chmod(0o755)


def test_a_fifo_as_agent_txt_or_as_the_miss_log_never_blocks(tmp_path):
    """kb boot reads agent.txt and index.md; kb misses reads the log: a FIFO in either place
    must be skipped or refused in one line, never read (the read would wait forever)."""
    import os
    import subprocess
    import sys

    from conftest import REPO, copy_demo

    fleet = copy_demo(tmp_path / "demo")
    (fleet / "yaron" / "agent.txt").unlink()
    os.mkfifo(fleet / "yaron" / "agent.txt")
    os.mkfifo(fleet / "kb-misses.txt")
    env = dict(os.environ)
    env.pop("KB_MISSES_PATH", None)
    boot = subprocess.run([sys.executable, "-m", "engine.cli", "boot", str(fleet), "--text"], input="how much protein per meal",
                          capture_output=True, text=True, timeout=60, cwd=REPO, env=env)
    assert "yaron" in boot.stdout and "Traceback" not in boot.stderr
    misses = subprocess.run([sys.executable, "-m", "engine.cli", "misses", str(fleet)], capture_output=True, text=True,
                            timeout=60, cwd=REPO, env=env)
    assert misses.returncode != 0 and "not a regular file" in misses.stderr and "Traceback" not in misses.stderr
