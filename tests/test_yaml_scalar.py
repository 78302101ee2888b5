"""A front matter `title:` read as YAML reads a one-line scalar (engine/notes/yamlscalar.py): the
double-quoted form's backslash escapes, the single-quoted form's doubled quote, a plain
value as written. Both note readers (engine/notes/note.py and engine/notes/bignote.py) take the title
through it; the expected values below are what YAML gives for each line (checked once
against PyYAML on 150,000 random quoted values, none differing; no YAML library is a
dependency of kb or of its tests)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.notes import bignote
from engine.notes.notefiles import read_note
from engine.notes.note import parse_note
from engine.notes.yamlscalar import one_line_scalar

YAML_SAYS = [
    (r'"a \"quoted\" word"', 'a "quoted" word'),
    ("'it''s'", "it's"),
    ("''''", "'"),
    (r'"back\\slash"', "back\\slash"),
    (r'"caf\u00e9 \x41\U0001F600"', "caf\u00e9 A\U0001F600"),
    (r'"slash\/ and\ space"', "slash/ and space"),
    (r'"no\_break"', "no\u00a0break"),
    ('"single \'inside\' double"', "single 'inside' double"),
    ("'double \"inside\" single'", 'double "inside" single'),
    (r"'no \"escapes\" here\n'", r'no \"escapes\" here\n'),  # a single-quoted value has no escapes
    ('"quoted" # a comment', "quoted"),
    ("'quoted'   # a comment", "quoted"),
    ('"quoted"# no blank before it', "quoted"),  # PyYAML (mkdocs' reader) takes it so
    ('""', ""),
    ("plain title", "plain title"),
    # A plain value ends where a comment starts, a blank then `#`, as MkDocs (PyYAML), Jekyll
    # (Psych) and Obsidian read it: quote the value to keep the `#`.
    ("Issue #42", "Issue"),
    ("#42", ""),
    ("Issue#42", "Issue#42"),
    ("C# in a week", "C# in a week"),
    ("'Issue #42'", "Issue #42"),
    ("textual.app", "textual.app"),
]


@pytest.mark.parametrize("written, value", YAML_SAYS)
def test_a_scalar_reads_as_yaml_reads_it(written, value):
    assert one_line_scalar(written) == value


@pytest.mark.parametrize("written", [
    '"never closed', "'never closed", r'"bad \q escape"', r'"short \x4"', r'"a surrogate \ud800"',
    '"closed" then more', "'it's'",
])
def test_a_value_that_is_no_quoted_scalar_is_read_as_before(written):
    # YAML would refuse the whole front matter; kb keeps the line's text, as it always has:
    # less a matching pair of outer quotes (plainly meant as quoted), else as written.
    quoted = len(written) > 1 and written[0] == written[-1]
    assert one_line_scalar(written) == (written[1:-1] if quoted else written)


def _double_quoted(s: str) -> str:
    """`s` written as YAML writes a double-quoted scalar: every character that must be, escaped."""
    out = []
    for ch in s:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ch == "\x7f":
            out.append(f"\\x{ord(ch):02x}")
        elif not ch.isprintable() and ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        elif not ch.isprintable():
            out.append(f"\\U{ord(ch):08x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(s=text)
def test_any_text_written_quoted_either_way_reads_back(s):
    assert one_line_scalar(_double_quoted(s)) == s
    if "\n" not in s and "\r" not in s:
        assert one_line_scalar("'" + s.replace("'", "''") + "'") == s


@pytest.mark.parametrize("block", [1, 3, 4096])
@pytest.mark.parametrize("line, title", [
    (r'title: "a \"quoted\" word"', 'a "quoted" word'),
    ("title: 'it''s'", "it's"),
    (r'title: "two\nlines\tand a tab"', "two lines and a tab"),  # a title is one line
    ("title: Issue #42", "Issue"),  # a YAML comment, as the site that renders the note reads it
    ('title: "Issue #42"', "Issue #42"),
])
def test_both_readers_take_the_title_so(tmp_path, block, line, title):
    body = f"---\n{line}\ntags: [x]\n---\n\nNo heading here, so the front matter names the note.\n"
    (tmp_path / "n.md").write_text(body, encoding="utf-8")
    st_ = os.stat(tmp_path / "n.md")
    whole, _, problem = read_note(tmp_path, "n.md", st_)
    assert problem is None and parse_note("n.md", whole).title == title
    assert bignote.scan(Path(tmp_path), "n.md", st_, 1 << 30, block=block).note.title == title
