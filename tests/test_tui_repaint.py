"""A new answer of the same shape is a repaint, not a layout: the panes' sentences (LineView)
and tables (LineTable) ask for a layout only when their height changes. And the room keeps
the cycle collector's full passes out of the keystrokes (kbtui/idle_gc.py)."""

from __future__ import annotations

import asyncio
import gc

from rich.text import Text
from textual.app import App

from conftest import copy_demo
from kbtui import idle_gc
from kbtui.line_table import Column, LineTable
from kbtui.line_view import LineView
from tui_support import ask, make_app, ready, screen_text, settle, wait_for


def run(coro):
    asyncio.run(coro)


class _Room(App):
    def compose(self):
        yield LineView(Text("one\ntwo"), id="view")
        yield LineTable([Column("#", 2), Column("name")], row_height=2, id="table")


def _layouts(app) -> list:
    seen = []
    app.screen.screen_layout_refresh_signal.subscribe(app.screen, lambda _screen: seen.append(1))
    return seen


def test_line_view_lays_out_only_when_its_height_changes():
    async def go():
        app = _Room()
        async with app.run_test(size=(40, 12)) as pilot:
            await pilot.pause()
            layouts = _layouts(app)
            view = app.query_one(LineView)
            view.update(Text("three\nfour"))
            await pilot.pause()
            assert "three" in screen_text(app) and "four" in screen_text(app)
            assert layouts == [], "same height, yet a layout"
            view.update(Text("five\nsix\nseven"))
            await pilot.pause()
            assert layouts, "one line more must be laid out"
            assert "seven" in screen_text(app)
    run(go())


def test_line_table_lays_out_only_when_its_row_count_changes():
    async def go():
        app = _Room()
        async with app.run_test(size=(40, 12)) as pilot:
            table = app.query_one(LineTable)
            table.set_rows([("a", (Text("1"), Text("alpha\nfirst"))), ("b", (Text("2"), Text("beta")))])
            await pilot.pause()
            layouts = _layouts(app)
            table.set_rows([("c", (Text("1"), Text("gamma\nthird"))), ("d", (Text("2"), Text("delta")))])
            await pilot.pause()
            text = screen_text(app)
            assert "gamma" in text and "third" in text and "alpha" not in text
            assert layouts == [], "as many rows as before, yet a layout"
            table.set_rows([("e", (Text("1"), Text("epsilon")))])
            await pilot.pause()
            assert layouts and table.row_count == 1
    run(go())


def test_the_settled_room_freezes_its_heap_and_collects_while_idle(tmp_path, monkeypatch):
    monkeypatch.setattr(idle_gc, "IDLE_S", 0.3)
    before = gc.get_threshold()

    async def go():
        app = make_app(copy_demo(tmp_path / "demo"))
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot)
            await wait_for(pilot, lambda: app.settled, what="the room settled")
            assert gc.get_freeze_count() > 0
            assert gc.get_threshold()[2] == idle_gc.PUT_OFF  # no full pass while typing
            await ask(pilot, "how much protein per meal", typed=True)  # typing is the activity that puts the pass off
            assert "protein" in screen_text(app)
            # Enough young garbage that Python would have run a full pass by now.
            for _ in range(before[2] + 2):
                gc.collect(1)
            assert gc.get_count()[2] >= before[2]
            await wait_for(pilot, lambda: app.idle_gc.passes >= 1, what="a full pass once idle")
            await settle(pilot)
        # The room is gone: its heap is the collector's again, with the threshold as found.
        assert gc.get_threshold() == before
        assert gc.get_freeze_count() == 0

    run(go())
