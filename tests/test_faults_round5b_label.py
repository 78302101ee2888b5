"""Round 5b faults in `kb label --write` (a real subprocess): where the label goes under an
underlined (setext) title, and that no other byte changes."""

from __future__ import annotations

import json

import pytest

from _faults import run_kb
from engine.notes import parse_note

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
    inserted = eol + prop["label_line"].encode() + eol
    if prop["purpose_line"]:
        inserted += prop["purpose_line"].encode() + eol
    assert note.read_bytes() == data[:cut] + inserted + data[cut:]
    after = parse_note("rule.md", note.read_text())
    assert after.is_entry and after.title == want_title


def test_a_note_opening_with_two_byte_order_marks_is_labelled_not_a_traceback(tmp_path):
    """Every reader drops all the leading BOMs (notefiles, kb label's proposal); the writer
    dropped one, found no title on line one, and `kb label --write` died with a TypeError."""
    root = tmp_path / "notes"
    root.mkdir()
    note = root / "r.md"
    bom = b"\xef\xbb\xbf"
    data = bom + bom + b"# Rocket manual\n" + BODY
    note.write_bytes(data)
    r = run_kb("label", str(root), "--no-effect", "--json", "--write", str(note))
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-2000:]
    prop = json.loads(r.stdout)["proposals"][0]
    cut = len(bom + bom + b"# Rocket manual\n")
    inserted = b"\n" + prop["label_line"].encode() + b"\n" + prop["purpose_line"].encode() + b"\n"
    assert note.read_bytes() == data[:cut] + inserted + data[cut:]  # both marks kept, as every byte
