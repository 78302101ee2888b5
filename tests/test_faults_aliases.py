"""Appending a proposed alias line (the misses screen's `a`) to kb-aliases.txt as people
really keep it: written on Windows (a BOM, CRLF), marked read-only, not UTF-8, a FIFO, and
two reading rooms appending at once. Real files, real processes."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from engine.review.aliasapply import append_alias
from engine.notes.aliases import read_aliases

REPO = Path(__file__).resolve().parent.parent


def test_a_windows_file_keeps_every_byte_and_the_new_line_takes_its_ending(tmp_path):
    path = tmp_path / "kb-aliases.txt"
    before = b"\xef\xbb\xbfprot = protein\r\n# kept\r\nfoo = bar"
    path.write_bytes(before)
    assert append_alias(path, "ci = deploy") is True
    assert path.read_bytes() == before + b"\r\nci = deploy\r\n"
    assert append_alias(path, "prot  =  protein") is False  # the first line, behind the BOM, is there already
    aliases, problems = read_aliases(path)
    assert [a.alias for a in aliases] == [("prot",), ("foo",), ("ci",)] and not problems


@pytest.mark.parametrize("inside", ["\u2028", "\u2029", "\x85", "\x0c"])
def test_only_a_newline_ends_an_aliases_line(tmp_path, inside):
    # str.splitlines() cut "rollback<U+2028>plan = ..." in two: an alias refused at line 1, a
    # wrong one in force, and every later problem reported one line too far down.
    path = tmp_path / "kb-aliases.txt"
    path.write_text(f"undo{inside}plan = rollback procedure\r\nnot an alias\nprot = protein\n", encoding="utf-8")
    aliases, problems = read_aliases(path)
    assert [(a.alias, a.line) for a in aliases] == [(("undo", "plan"), 1), (("prot",), 3)]
    assert problems == [(2, "not `alias = canonical`")]


def test_an_alias_line_holding_a_separator_is_appended_once_and_read_back_whole(tmp_path):
    path = tmp_path / "kb-aliases.txt"
    path.write_bytes(b"prot = protein\n")
    line = "undo\u2028plan = rollback"
    assert append_alias(path, line) is True
    assert append_alias(path, line) is False  # found whole: not appended twice
    assert path.read_text(encoding="utf-8") == f"prot = protein\n{line}\n"
    assert [a.alias for a in read_aliases(path)[0]] == [("prot",), ("undo", "plan")]
    with pytest.raises(OSError, match="holds a line break"):
        append_alias(path, "a = b\nc = d")


@pytest.mark.parametrize("kind", ["read-only", "latin-1", "fifo"])
def test_a_file_that_cannot_take_the_line_is_refused_in_one_line_and_unchanged(tmp_path, kind):
    path = tmp_path / "kb-aliases.txt"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.write_bytes(b"caf\xe9 = coffee\n" if kind == "latin-1" else b"a = b\n")
        before = path.read_bytes()
    if kind == "read-only":
        path.chmod(0o444)
    # In a child with a timeout: a FIFO's read used to block the misses screen's worker forever.
    code = textwrap.dedent(f"""
        from pathlib import Path
        from engine.review.aliasapply import append_alias
        from engine.errors import os_error_line
        try:
            append_alias(Path({str(path)!r}), "x = y")
        except OSError as e:
            print(os_error_line(e))
    """)
    r = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=20)
    assert r.returncode == 0, r.stderr
    line = r.stdout.strip()
    assert line.startswith(str(path) + ": ") and "\n" not in line, r.stdout
    assert {"read-only": "read-only", "latin-1": "not UTF-8 (byte 0xe9", "fifo": "not a regular file"}[kind] in line
    if kind != "fifo":
        assert path.read_bytes() == before
        path.chmod(0o644)


def test_two_writers_at_once_lose_no_line(tmp_path):
    path = tmp_path / "kb-aliases.txt"
    code = textwrap.dedent("""
        import sys
        from pathlib import Path
        from engine.review.aliasapply import append_alias
        for i in range(40):
            append_alias(Path(sys.argv[1]), f"w{sys.argv[2]}x{i} = canon")
    """)
    procs = [subprocess.Popen([sys.executable, "-c", code, str(path), str(k)], cwd=REPO) for k in range(4)]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    lines = path.read_text().splitlines()
    assert sorted(lines) == sorted(f"w{k}x{i} = canon" for k in range(4) for i in range(40))
    assert not [p for p in tmp_path.iterdir() if p.name != "kb-aliases.txt"]  # no temporary file left
