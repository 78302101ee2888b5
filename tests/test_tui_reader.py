"""The reader paints a long note's visible part first: the passage it opens at is rendered
from a small window before the whole note is rendered (in a thread) and swapped in, still at
the same passage. The time it takes is the bench's to measure (kbtools.room_bench)."""

from __future__ import annotations

import asyncio

from kbtui.reader import opening_line, passage_line, sections_of, window_of
from conftest import copy_demo
from tui_support import make_app, paste, ready, screen_text, settle, wait_for


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


def test_underlined_headings_cut_sections_and_start_the_window_too():
    src = "Title\n=====\n\nintro\n\nPart\n----\n\ntext\n```\nnot\n---\n```\n# C\nc\n"
    parts = sections_of(src)
    assert [first for first, _ in parts] == [1, 6, 14]  # the underline inside the fence cuts nothing
    assert "".join(text for _, text in parts) == src
    first, text = window_of(src, 9, 10)
    assert first == 6 and text.startswith("Part\n----")


def test_a_hit_deep_in_a_section_gets_a_cut_at_its_paragraph_and_the_text_joins_back():
    src = "# T\n\n## Big\n\nfirst para\n\nsecond para\nmore of it\n\nthird\n"
    parts = sections_of(src, hit_line=8)  # inside the second paragraph
    assert [first for first, _ in parts] == [1, 3, 7]
    assert "".join(text for _, text in parts) == src
    # A hit in the section's first paragraph needs no cut: the section's start is its start.
    assert [first for first, _ in sections_of(src, hit_line=5)] == [1, 3]


def test_every_window_of_a_long_section_is_placed_at_the_line_it_starts_in():
    from engine.notes.chunking import chunk_sections
    from engine.notes.note import parse_note

    paras = [f"Paragraph {i} of the long part: " + " ".join(f"w{i}x{k}" for k in range(18)) for i in range(60)]
    src = "# Note\n\n## Long part\n\n" + "\n\n".join(paras) + "\n"
    chunks = chunk_sections(parse_note("n.md", src).sections)
    assert len(chunks) > 5 and {c.line for c in chunks} == {3}  # every window carries the section's line
    for c in chunks:
        at = src.index(c.text)  # where the window's text begins in the note
        want = 1 + src.count("\n", 0, at)
        assert passage_line(src, c.line, c.text) == want
        # Opened on the first line holding a word of the question, inside the window.
        word = c.text.split()[-1]
        assert opening_line(src, c.line, c.text, [word]) == 1 + src.count("\n", 0, src.index(word, at))


async def _open_on(pilot, app, question: str):
    await ready(pilot)
    await paste(pilot, question)  # the question whole (tui_support.paste): the reader is what is tested
    await settle(pilot)
    app.main.focus_pane("reading")
    await settle(pilot)
    await pilot.press("enter")
    await wait_for(pilot, lambda: getattr(app.screen, "window_start", None) == 0, timeout=20, what="the whole note")
    await settle(pilot)
    return app.screen


def test_the_reader_cuts_at_underlined_headings_and_opens_on_that_section(tmp_path):
    fleet = copy_demo(tmp_path / "demo")
    parts = ["Setext note\n===========\n\n**Search for:** `setextnote`\n\n"]
    for i in range(1, 21):
        word = "zebrafish" if i == 15 else "minnow"
        parts.append(f"Part {i}\n{'-' * len(f'Part {i}')}\n\nParagraph {i} about the {word} of part {i}.\n\n")
    (fleet / "zed" / "knowledge" / "setext-note.md").write_text("".join(parts))

    async def go():
        app = make_app(fleet)
        async with app.run_test(size=(80, 24)) as pilot:
            reader = await _open_on(pilot, app, "setextnote zebrafish")
            assert reader.path == "knowledge/setext-note.md"
            text = screen_text(app)
            assert "Part 15" in text and "zebrafish" in text and "Part 14" not in text, text
    asyncio.run(go())


def test_a_hit_in_a_long_sections_last_window_opens_at_its_line(tmp_path):
    fleet = copy_demo(tmp_path / "demo")
    filler = [f"Filler paragraph {i} about minnows in the shallow water, said once and again so that it wraps."
              for i in range(1, 41)]
    filler[-2] += " The zebrafish lives here."  # in the section's last window only
    body = "\n\n".join(filler)
    (fleet / "zed" / "knowledge" / "big-section.md").write_text(
        "# Big section note\n\n**Search for:** `bigsection`\n\n## One long part\n\n" + body + "\n")

    async def go():
        app = make_app(fleet)
        async with app.run_test(size=(80, 24)) as pilot:
            reader = await _open_on(pilot, app, "bigsection zebrafish")
            assert reader.path == "knowledge/big-section.md"
            assert reader.best_line > 30  # the passage's own line, not the section's (line 5)
            text = screen_text(app)
            assert "zebrafish" in text and "One long part" not in text, text
    asyncio.run(go())


def test_a_20_kb_note_paints_its_passage_from_a_window_then_the_whole_note(tmp_path):
    fleet = copy_demo(tmp_path / "demo")
    note = fleet / "zed" / "knowledge" / "long-note.md"
    note.write_text(long_note())
    assert len(note.read_bytes()) > 20_000

    async def go():
        app = make_app(fleet)
        async with app.run_test(size=(80, 24)) as pilot:
            await ready(pilot)
            await paste(pilot, "longnote zebrafish")
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
            await paste(pilot, "longnote zebrafish")
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


LABELLED_BY_KB = (  # as `kb label --write` puts a label under a title: one field a line, no blank between
    "# ln\n\nSearch for: link, existing file, hard link\nExists to: > Create a hard link to a file\n"
    "Updated: 2026-11-02\n\n> Create links to files and folders.\n\nMore text\non two lines.\n"
)


def test_the_label_lines_stay_one_a_line_as_written():
    # They were run together into one paragraph: "Search for: link, existing file, hard link
    # Exists to: > Create a hard link…". Prose lines still join as markdown joins them.
    from kbtui.reader import render_note

    rows, anchors, _ = render_note(LABELLED_BY_KB, 1, 100, ())
    text = [r.text.rstrip() for r in rows]
    assert "Search for: link, existing file, hard link" in text, text
    assert "Exists to: > Create a hard link to a file" in text, text
    assert "Updated: 2026-11-02" in text, text
    assert "More text on two lines." in text, text


def test_the_reader_shows_a_kb_labelled_note_one_field_a_line(tmp_path):
    fleet = copy_demo(tmp_path / "demo")
    (fleet / "zed" / "knowledge" / "ln.md").write_text(LABELLED_BY_KB)

    async def go():
        app = make_app(fleet)
        async with app.run_test(size=(100, 30)) as pilot:
            await ready(pilot)
            app.open_reader("zed", "knowledge/ln.md")
            await wait_for(pilot, lambda: "Exists to" in screen_text(app), what="the note")
            lines = [ln.strip() for ln in screen_text(app).splitlines()]
            assert "Search for: link, existing file, hard link" in lines, lines
            assert "Exists to: > Create a hard link to a file" in lines, lines
    asyncio.run(go())
