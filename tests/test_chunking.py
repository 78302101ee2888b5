"""The chunk rule: sections over about CHUNK_CHARS characters are cut into windows that overlap
by at least CHUNK_OVERLAP, and every window, the last one too, holds about CHUNK_CHARS
characters (docs/quality.md, "Every window a full window"). The streaming twin
(engine/notes/bignote.py) cuts the same; tests/test_faults_properties.py checks that over
generated notes, and one case here checks it on the shape the rule changed."""

from __future__ import annotations

import os
from pathlib import Path

from engine.notes import bignote
from engine.notes.chunking import CHUNK_CHARS, CHUNK_OVERLAP, chunk_sections, windows
from engine.notes.fleet import discover
from engine.notes.note import parse_note
from engine.notes.notefiles import read_note
from engine.index.textindex import TextIndex


def _prose(n_chars: int, word: str = "filler") -> str:
    """Words and single spaces, no blank line: every cut is a hard one."""
    words = []
    size = 0
    i = 0
    while size < n_chars:
        w = f"{word}{i % 97}"
        words.append(w)
        size += len(w) + 1
        i += 1
    return " ".join(words)[:n_chars].rstrip()


def test_the_last_window_of_a_long_section_is_a_full_window():
    text = _prose(2000)
    got = windows(text)
    # The cuts are the seed's: one window of CHUNK_CHARS, then the rest.
    assert len(got) == 2
    assert got[0] == text[:CHUNK_CHARS].strip()
    # The rest is not 500 characters, 300 of them repeated: the last window ends at the
    # section's end and starts CHUNK_CHARS before it.
    assert got[1] == text[len(text) - CHUNK_CHARS:].strip()
    assert len(got[1]) >= CHUNK_CHARS - 1


def test_only_the_last_window_moves_and_the_count_is_unchanged():
    text = _prose(4500)
    got = windows(text)
    step = CHUNK_CHARS - CHUNK_OVERLAP
    assert len(got) == 3  # 0-1800, 1500-3300, and the rest: as the seed's rule counts
    assert got[0] == text[:CHUNK_CHARS].strip()
    assert got[1] == text[step:step + CHUNK_CHARS].strip()
    assert got[2] == text[len(text) - CHUNK_CHARS:].strip()
    # The overlap with the window before is at least the seed's 300 characters.
    assert got[1][-CHUNK_OVERLAP:] in got[2]


def test_cuts_at_blank_lines_still_hold_and_the_last_window_ends_the_section():
    paragraphs = [_prose(700, f"p{k}x") for k in range(4)]  # 4 x 700 + blank lines
    text = "\n\n".join(paragraphs)
    got = windows(text)
    assert got[0] == "\n\n".join(paragraphs[:2])  # cut at the blank line before 1,800
    assert got[-1].endswith(paragraphs[-1])
    assert len(got[-1]) >= CHUNK_CHARS - 2


def test_a_section_within_a_window_is_one_chunk():
    text = _prose(CHUNK_CHARS)
    assert windows(text) == [text]


def test_a_long_sections_tail_does_not_outrank_a_note_of_ordinary_length(tmp_path):
    """A word said once in passing at the end of a long section, and once in a note of a few
    hundred words: BM25 weighs a match by the length of what holds it, and the file ranks at
    its best chunk. A 300-character last window made the long note's tail look like a note
    about the word; a full window weighs it as the long note it is."""
    base = tmp_path / "b"
    (base / "knowledge").mkdir(parents=True)
    (base / "agent.txt").write_text("name = b\n")
    long_section = _prose(CHUNK_CHARS + 150) + " zebra"
    (base / "knowledge" / "long.md").write_text(f"# Field log\n\n{long_section}\n", encoding="utf-8")
    (base / "knowledge" / "short.md").write_text(f"# Stripes\n\n{_prose(700, 'other')} zebra\n", encoding="utf-8")
    idx = TextIndex(discover([base]).bases[0])
    idx.update()
    rows, _sent = idx.search(["zebra"], 10, "zebra")
    idx.close()
    assert [r[0] for r in rows] == ["knowledge/short.md", "knowledge/long.md"]


def test_the_streaming_reader_cuts_the_full_last_window_too(tmp_path):
    text = f"# Log\n\n{_prose(4000)}\n\n## More\n\n{_prose(2100, 'second')}\n"
    (tmp_path / "n.md").write_text(text, encoding="utf-8")
    st = os.stat(tmp_path / "n.md")
    whole, _raw, problem = read_note(Path(tmp_path), "n.md", st)
    assert problem is None
    want = [(c.heading_path, c.text, c.line) for c in chunk_sections(parse_note("n.md", whole).sections)]
    scan = bignote.scan(tmp_path, "n.md", st, 1 << 30, block=64)
    got = [(c.heading_path, c.text, c.line) for c in bignote.chunks(tmp_path, "n.md", scan, block=64)]
    assert got == want
    assert all(len(t) >= CHUNK_CHARS - 1 for _h, t, _l in got)
