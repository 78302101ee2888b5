"""Round 5b faults in `kb label --write` (a real subprocess): where the label goes under an
underlined (setext) title, and that no other byte changes."""

from __future__ import annotations

import json

import pytest

from _faults import run_kb
from engine.notes.note import parse_note

BODY = b"\nAlways roll back before you debug a failed deployment in production systems.\n"


@pytest.mark.parametrize("title", [
    b"#1 rule of deployments\n======================\n",  # a `#` that opens no `# ` heading
    b"#hashtag habits\r\n---------------\r\n",
    b"#\tnot a tab heading? it is one\n===\n",  # control: an ATX heading, then a rule
])
def test_the_label_goes_under_the_underline_of_a_title_that_starts_with_a_hash(tmp_path, title):
    """The writer took any title line starting with `#` for an ATX heading and wrote the label
    between a setext title and its underline: the underline then made `Exists to:` the title."""
    root = tmp_path / "notes"
    root.mkdir()
    note = root / "rule.md"
    data = title + BODY.replace(b"\n", b"\r\n" if b"\r\n" in title else b"\n")
    note.write_bytes(data)
    want_title = parse_note("rule.md", data.decode()).title
    r = run_kb("label", str(root), "--no-effect", "--json", "--write", str(note))
    out = json.loads(r.stdout)
    assert "notes/rule.md" in out["written"], out
    prop = out["proposals"][0]
    head = title.splitlines(keepends=True)
    cut = len(head[0]) if title.startswith(b"#\t") else len(title)  # an ATX title: under its own line
    eol = b"\r\n" if b"\r\n" in title else b"\n"
    inserted = eol + prop["label_line"].encode() + eol + prop["mark_line"].encode() + eol
    if prop["purpose_line"]:
        inserted += prop["purpose_line"].encode() + eol
    assert note.read_bytes() == data[:cut] + inserted + data[cut:]
    after = parse_note("rule.md", note.read_text())
    assert after.is_entry and after.title == want_title
