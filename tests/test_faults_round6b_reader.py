"""Round 6b faults in the reader (kbtui/reader.py): where it opens on a passage in a long
note, through the real app (Pilot), the real index and the real chunker."""

from __future__ import annotations

import asyncio

from conftest import copy_demo
from test_tui_reader import _open_on
from tui_support import make_app, screen_text


def _long_section_note(paragraphs: int, hit_at: int) -> str:
    filler = [f"Filler paragraph {i} about minnows in the shallow water, said once and again so that it wraps."
              for i in range(1, paragraphs + 1)]
    filler[hit_at] += " The zebrafish lives here."
    return ("# Big section note\n\n**Search for:** `bigsection`\n\n## One long part\n\n"
            + "\n\n".join(filler) + "\n")


def test_a_hit_deep_in_a_long_section_of_a_long_note_stays_on_screen_after_the_swap(tmp_path):
    # Over WINDOW_FROM_LINES lines the reader paints a window first, then swaps the whole
    # note in at "the section at the top of the screen": the window must hold the hit, or
    # the swap keeps the section's start, screens above the passage.
    fleet = copy_demo(tmp_path / "demo")
    (fleet / "zed" / "knowledge" / "big-section.md").write_text(_long_section_note(400, 380))

    async def go():
        app = make_app(fleet)
        async with app.run_test(size=(80, 24)) as pilot:
            reader = await _open_on(pilot, app, "bigsection zebrafish")
            assert reader.path == "knowledge/big-section.md"
            assert reader.best_line > 700, reader.best_line
            text = screen_text(app)
            assert "zebrafish" in text and "One long part" not in text, text
    asyncio.run(go())


def test_the_first_window_of_a_50000_line_section_holds_a_hit_in_its_last_lines():
    from kbtui.reader import window_of

    paras = [f"line {i} of a very long part" for i in range(25_000)]
    src = "# Note\n\n## Part\n\n" + "\n\n".join(paras) + "\n"
    hit = 4 + 2 * 24_990 + 1  # 1-based: the paragraph "line 24990 ..."
    assert src.splitlines()[hit - 1] == "line 24990 of a very long part"
    first, text = window_of(src, hit, 24)
    assert first == hit and text.startswith("line 24990 of")
    # within a screen of its heading, the window still starts at the heading
    first, text = window_of(src, 9, 24)
    assert first == 3 and text.startswith("## Part")
