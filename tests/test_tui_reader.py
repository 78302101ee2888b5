"""The reader paints a long note's visible part first: the passage it opens at is rendered
from a small window before the whole note is rendered (in a thread) and swapped in, still at
the same passage. The time it takes is the bench's to measure (kbtools.room_bench)."""

from __future__ import annotations

import asyncio

from kbtui.reader import sections_of, window_of
from conftest import copy_demo
from tui_support import make_app, ready, screen_text, settle, wait_for


def long_note(sections: int = 130) -> str:
    parts = ["# A long note\n\n**Search for:** `longnote`\n\n**Exists to:** Be read from the middle.\n\n"]
    for i in range(1, sections + 1):
        word = "zebrafish" if i == 90 else "minnow"
        parts.append(f"## Section {i}\n\nParagraph {i} about the {word} of section {i}, long enough to wrap "
                     "across a narrow terminal at least once or twice.\n\n- one\n- two `code`\n- three\n\n")
    return "".join(parts)


def test_the_window_starts_at_the_heading_and_never_cuts_a_fence():
    src = "# T\n\nintro\n\n## A\n\n```\ncode\n\nmore\n```\n\nafter\n\n## B\n\nb\n"
    first, text = window_of(src, 7, 10)
    assert first == 5 and text.startswith("## A")
    assert text.count("```") % 2 == 0
    first, text = window_of(src, 0, 10)
    assert first == 1


def test_sections_cut_before_headings_outside_fences_and_join_back():
    src = "intro\n\n# A\n\ntext\n```\n# not a heading\n```\n## B\nb\n"
    parts = sections_of(src)
    assert [first for first, _ in parts] == [1, 3, 9]
    assert "".join(text for _, text in parts) == src


def test_a_20_kb_note_paints_its_passage_from_a_window_then_the_whole_note(tmp_path):
    fleet = copy_demo(tmp_path / "demo")
    note = fleet / "zed" / "knowledge" / "long-note.md"
    note.write_text(long_note())
    assert len(note.read_bytes()) > 20_000

    async def go():
        app = make_app(fleet)
        async with app.run_test(size=(80, 24)) as pilot:
            await ready(pilot)
            await pilot.press(*"longnote zebrafish")
            await settle(pilot)
            app.main.focus_pane("reading")
            await settle(pilot)
            await pilot.press("enter")
            await wait_for(pilot, lambda: getattr(app.screen, "window_start", None) is not None, what="a first paint")
            reader = app.screen
            view = reader.query_one("#reader-body")
            # Either the window (a line number > 1) or, on a fast machine, already the whole note.
            if reader.window_start:
                assert reader.window_start == 1 + note.read_text()[:note.read_text().index("## Section 90")].count("\n")
                assert len(view.rows) < 24 * 4, "the window is about a screen, not the note"
            await wait_for(pilot, lambda: reader.window_start == 0, timeout=20, what="the whole note")
            await settle(pilot)
            assert view.source == note.read_text()
            assert len(view.rows) > 24 * 10  # the whole note, every section
            text = screen_text(app)
            # Still at the passage after the swap, its word highlighted, Section 89 above the screen.
            assert "Section 90" in text and "zebrafish" in text and "Section 89" not in text, text
            assert view.scroll_offset.y > 0 and reader._matches
            # n goes to the highlighted word's row; Home to the top.
            await pilot.press("n")
            await settle(pilot)
            assert "zebrafish" in screen_text(app)
            await pilot.press("home")
            await settle(pilot)
            assert view.scroll_offset.y == 0 and "A long note" in screen_text(app)
    asyncio.run(go())


def test_escape_while_the_whole_note_is_still_being_built(tmp_path):
    fleet = copy_demo(tmp_path / "demo")
    (fleet / "zed" / "knowledge" / "long-note.md").write_text(long_note())

    async def go():
        app = make_app(fleet)
        async with app.run_test(size=(80, 24)) as pilot:
            await ready(pilot)
            await pilot.press(*"longnote zebrafish")
            await settle(pilot)
            for _ in range(3):
                app.main.focus_pane("reading")
                await settle(pilot)
                await pilot.press("enter")
                await wait_for(pilot, lambda: getattr(app.screen, "window_start", None) is not None,
                               what="a first paint")
                await pilot.press("escape")  # before the whole note is in
                await settle(pilot)
                await pilot.pause(0.3)
                assert app.screen is app.main and app.is_running
            assert "HIT" in screen_text(app)
    asyncio.run(go())
