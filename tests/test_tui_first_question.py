"""The first question on a large fleet is answered from what is ready while the room's
in-memory text leg builds, and the status line says it is building.

The first room after `kb index` found no spelling beside the indexes, and its first refusal
(the first letters typed are refusals) built the keys' speller in the ask: a second at
4,578 entries, two or three beside the text leg's build, with empty panes. The room now
builds it while the status line still says "indexing", so READY means the first answer is
quick; the text leg goes on building after READY, FTS5 answering meanwhile, and says so.
"""

from __future__ import annotations

import asyncio
import threading

from engine import Memory
from kbtui.app import KbApp
from kbtui.verdict_bar import VerdictBar

from conftest import copy_demo
from tui_support import paste, ready, settle, wait_for

BUILDING = "text index building"


def _status(app) -> str:
    return app.main.query_one(VerdictBar).content.plain


class SlowHold(Memory):
    """A real Memory whose in-memory text leg is built only once the test says so: the
    seconds it takes at 60,000 chunks, held open."""

    def __init__(self, *a, **kw) -> None:
        super().__init__(*a, **kw)
        self.go = threading.Event()

    def hold_text_in_memory(self, timeout: float = 120.0) -> bool:
        self.go.wait(30)
        return super().hold_text_in_memory(timeout)


def test_ready_means_the_speller_a_refusal_needs_is_built(tmp_path):
    async def go():
        app = KbApp(Memory(copy_demo(tmp_path / "demo"), resident=True), stable=True, watch=False)
        async with app.run_test(size=(100, 30)) as pilot:
            await ready(pilot)
            # Built by the load, before READY: the first refusal asks it, and builds nothing.
            assert app.memory.snapshot().catalogue._speller is not None
    asyncio.run(go())


def test_the_status_line_says_the_text_index_is_building_then_stops_saying_it(tmp_path):
    async def go():
        memory = SlowHold(copy_demo(tmp_path / "demo"), resident=True)
        app = KbApp(memory, stable=False, watch=False)
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: app.loaded is not None, what="the load")
            await pilot.pause()
            status = _status(app)
            assert status.startswith(" READY ") and BUILDING in status, status
            # The question whole (tui_support.paste): asked while the leg builds, as its last key would be.
            await paste(pilot, "how much protein per meal")
            await wait_for(pilot, lambda: app.main.answer is not None
                           and app.main.answer.question == "how much protein per meal", what="the answer")
            await pilot.pause()
            status = _status(app)
            # Answered from FTS5 while the leg builds: the verdict now, and the building said.
            assert status.lstrip().startswith("HIT") and BUILDING in status, status
            first = app.main.answer
            memory.go.set()
            await wait_for(pilot, lambda: app.settled, what="the room settled")
            await pilot.pause()
            assert BUILDING not in _status(app), _status(app)
            again = memory.ask("how much protein per meal")
            assert [(h.base, h.path) for h in again.text] == [(h.base, h.path) for h in first.text]
            await pilot.press("ctrl+l")
            await settle(pilot)
            assert BUILDING not in _status(app) and _status(app).startswith(" READY ")
    asyncio.run(go())
