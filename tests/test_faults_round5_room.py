"""Round 5 faults in the reading room: a note replaced by a FIFO after it was indexed, then
opened in the reader. Driven with Pilot on a tmp copy of the demo (watch off, so the index
still lists the note: the race a sync tool opens)."""

from __future__ import annotations

import asyncio
import os

from conftest import copy_demo
from tui_support import ask, make_app, ready, screen_text, settle, wait_for


def test_a_note_replaced_by_a_fifo_is_said_unreadable_in_the_reader(tmp_path):
    async def go():
        fleet = copy_demo(tmp_path / "demo")
        note = fleet / "zed" / "knowledge" / "deploy-checklist.md"
        app = make_app(fleet)
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot)
            await ask(pilot, "quem decide se um deploy pode ir pra producao")
            answer = app.main.answer
            note.unlink()
            os.mkfifo(note)
            try:
                app.open_reader("zed", "knowledge/deploy-checklist.md", answer)
                await wait_for(pilot, lambda: "cannot read knowledge/deploy-checklist.md" in screen_text(app),
                               timeout=15, what="the reader to say the note cannot be read")
                assert "not a regular file" in screen_text(app)
            finally:
                try:  # a reader stuck on the FIFO is let go, so the app can close
                    os.close(os.open(note, os.O_WRONLY | os.O_NONBLOCK))
                except OSError:
                    pass
            await pilot.press("escape")
            await settle(pilot)

    asyncio.run(go())
