"""Round 5b faults in the note readers: parse_note (whole) and engine/notes/bignote.py (streamed)
on notes whose first line is `---` but which hold no front matter."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from _faults import kb_json
from engine.notes import bignote
from engine.notes.chunking import chunk_sections
from engine.notes.notefiles import read_note
from engine.notes.note import parse_note

# A first line `---` that opens no front matter: a rule above prose, an unclosed block, one
# closed past FRONT_MATTER_MAX_LINES, one broken by a fence. None has a heading on line 0.
OPENS_WITH_A_RULE = {
    "rule": "---\nintro line\n\n## Section\n\nbody words\n",
    "unclosed": "---\ntitle: X\nfoo: bar\n",
    "too_long": "---\n" + "k: v\n" * 300 + "...\n## Section\n\nbody words\n",
    "fence_inside": "---\ntitle: X\n```\n---\n```\n## Section\nbody words\n",
}


@pytest.mark.parametrize("name", sorted(OPENS_WITH_A_RULE))
def test_a_first_line_rule_underlines_nothing(name):
    """The line above line 0 is no line: lines[-1] (the note's last line) was read as the
    heading `---` underlined, so the note was titled by its last line and the rule dropped."""
    text = OPENS_WITH_A_RULE[name]
    note = parse_note("n.md", text)
    last = text.rstrip("\n").splitlines()[-1]
    assert note.title != last and note.title_line != 0
    # Each "## Section" stands after the rule and prose: a section, so the file names the note.
    assert note.title == "n"
    assert note.sections[0].text.startswith("---")  # the rule is prose, as the streamed reader has it


@pytest.mark.parametrize("name", sorted(OPENS_WITH_A_RULE))
def test_both_readers_agree_on_a_first_line_rule(tmp_path, name):
    (tmp_path / "n.md").write_text(OPENS_WITH_A_RULE[name], encoding="utf-8")
    st = os.stat(tmp_path / "n.md")
    whole, _, problem = read_note(tmp_path, "n.md", st)
    assert problem is None
    note = parse_note("n.md", whole)
    scan = bignote.scan(tmp_path, "n.md", st, 1 << 30, block=7)
    assert scan.note == note.__class__(**{**note.__dict__, "sections": ()})
    want = [(c.heading_path, c.text, c.line) for c in chunk_sections(note.sections)]
    assert [(c.heading_path, c.text, c.line) for c in bignote.chunks(tmp_path, "n.md", scan, block=7)] == want


def test_kb_route_names_a_rule_opened_note_by_its_file(demo):
    fleet = demo
    note = fleet / "zed" / "knowledge" / "ruled.md"
    note.write_text("---\nA rule above the intro about quokka husbandry.\n\n## Quokka care\n\nfeed the quokka\n")
    answer = kb_json("quokka husbandry", fleet)
    titles = {r["path"]: r.get("title") for r in answer["results"]}
    # Not its last line (the bug), nor the section heading standing after its prose.
    assert titles.get("knowledge/ruled.md") == "ruled"
