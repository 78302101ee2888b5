"""Markdown as people write notes: YAML front matter at the top, and titles underlined with
`=` or `-` (setext). Front matter is not prose and its `# ` lines are YAML comments, not
headings; `title:` names a note that has no heading; an underlined line is a heading, and a
label under an underlined title makes the note an entry. The whole-note reader
(parse_note) and the two-pass reader for large notes (engine/notes/bignote.py) read them alike.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engine.notes import bignote
from engine.notes.chunking import chunk_sections
from engine.notes.notefiles import read_note
from engine.notes.note import parse_note

FRONT = (
    "---\n# yaml-language-server: $schema=x\ntitle: Boats and ships\ntags: [sailing, hulls]\n"
    "date: 2024-03-01\n---\n# Boats\n\nSearch for: boats, hulls\n\nBoats float on water.\n"
)
SETEXT = (
    "Rocket manual\n=============\n\nSearch for: rockets, rocket fuel\n\nRockets fly high.\n\n"
    "Rocket fuel\n-----------\n\nRocket fuel burns.\n"
)


def _sections(note):
    return [(s.heading_path, s.text, s.line) for s in note.sections]


def test_front_matter_is_not_prose_and_its_comment_is_not_the_title():
    note = parse_note("boats.md", FRONT)
    assert (note.title, note.title_line, note.is_entry, note.keys) == ("Boats", 7, True, ("boats", "hulls"))
    assert _sections(note) == [("Boats", "Boats float on water.", 7)]
    assert note.date == "2024-03-01"  # a date in the front matter is still the note's date


def test_a_front_matter_title_names_a_note_without_a_heading():
    note = parse_note("api/app.md", '---\ntitle: "textual.app"\n---\n\n::: textual.app\n    options:\n')
    assert (note.title, note.title_line, note.is_entry) == ("textual.app", None, False)
    assert [s.text for s in note.sections] == ["::: textual.app\n    options:"]


def test_a_heading_is_the_title_over_the_front_matter_title():
    assert parse_note("b.md", FRONT).title == "Boats"


# A note that opens with prose and has no level-one heading (an Obsidian note, whose title is
# its file name; Textual's event pages, a mkdocstrings directive then "## See also").
PROSE_FIRST = "My sourdough routine. Feed the starter twice a day.\n\n## Hydration\n\nUse 70% water.\n"
EVENT_PAGE = "::: textual.events.Mount\n    options:\n      heading_level: 1\n\n## See also\n\n- [Load](load.md)\n"
POST = "---\ntitle: \"Algorithms for terminal apps\"\n---\n\nI have worked on it.\n\n## The Compositor\n\nIt composes.\n"


def test_a_section_heading_after_prose_is_not_the_note_title():
    # It was: the first heading of any level, so every event page was titled "See also" and
    # scored its title words, and a note's opening prose sat under the section's name.
    sourdough = parse_note("Cooking/Sourdough.md", PROSE_FIRST)
    assert (sourdough.title, sourdough.title_line) == ("Sourdough", None)
    assert _sections(sourdough) == [("", "My sourdough routine. Feed the starter twice a day.", 1),
                                     ("Hydration", "Use 70% water.", 3)]
    assert parse_note("events/mount.md", EVENT_PAGE).title == "mount"
    assert parse_note("blog/release.md", POST).title == "Algorithms for terminal apps"


def test_a_heading_that_opens_the_note_is_its_title_whatever_its_level():
    note = parse_note("n.md", "\n## Hydration\n\nSearch for: hydration\n\nUse 70% water.\n")
    assert (note.title, note.title_line, note.is_entry) == ("Hydration", 2, True)


@pytest.mark.parametrize("text", [
    "---\nSome intro prose, then a rule.\n\n---\n# T\n\nBody.\n",  # not YAML: a rule, then prose
    "---\ntitle: never closed\n\n# T\n\nBody.\n",  # no closing line: no front matter
])
def test_a_rule_at_the_top_is_not_front_matter(text):
    note = parse_note("n.md", text)
    assert note.title == "T"
    assert "---" in note.sections[0].text or "never closed" in note.sections[0].text


def test_an_underlined_title_is_the_title_and_its_label_makes_an_entry():
    note = parse_note("rockets.md", SETEXT)
    assert (note.title, note.title_line, note.label_line) == ("Rocket manual", 1, 4)
    assert note.is_entry and note.keys == ("rockets", "rocket fuel")
    assert _sections(note) == [("Rocket manual", "Rockets fly high.", 1),
                               ("Rocket manual > Rocket fuel", "Rocket fuel burns.", 8)]


@pytest.mark.parametrize("text", [
    "# T\n\nA paragraph.\n\n---\n\nAfter the rule.\n",  # a rule after a blank line
    "# T\n\n- a list item\n---\nAfter.\n",  # a list item is no heading's text
    "# T\n\n```\nCode\n===\n```\n",  # inside a fence
    "# T\n\n    indented code\n    ---\n",  # indented code
])
def test_what_is_not_an_underlined_heading(text):
    note = parse_note("n.md", text)
    assert [s.heading_path for s in note.sections] == ["T"]


@pytest.mark.parametrize("text", [FRONT, SETEXT, FRONT.replace("# Boats", SETEXT), "---\ntitle: Only\n---\nBody\n",
                                  "---\r\ntitle: x\r\n---\r\nTitle\r\n=====\r\n\r\nProse.\r\n",
                                  PROSE_FIRST, EVENT_PAGE, POST, "Intro\n-----\n\n## Later\n\nText.\n",
                                  "```\ncode\n```\n## After a fence\n\nText.\n"])
@pytest.mark.parametrize("block", [1, 3, 64, 4096])
def test_the_two_pass_reader_reads_them_alike(tmp_path, text, block):
    (tmp_path / "n.md").write_text(text, encoding="utf-8", newline="")
    st = os.stat(tmp_path / "n.md")
    whole, _, problem = read_note(tmp_path, "n.md", st)
    assert problem is None
    note = parse_note("n.md", whole)
    scan = bignote.scan(Path(tmp_path), "n.md", st, 1 << 30, block=block)
    assert scan.note == note.__class__(**{**note.__dict__, "sections": ()})
    want = [(c.heading_path, c.text, c.line) for c in chunk_sections(note.sections)]
    assert [(c.heading_path, c.text, c.line) for c in bignote.chunks(tmp_path, "n.md", scan, block=block)] == want
