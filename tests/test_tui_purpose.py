"""The purpose selector and "why this row": the reading list's order, explained on screen."""

from __future__ import annotations

import asyncio

from conftest import copy_demo
from engine.stages.purpose.weights import PURPOSE_NAMES
from tui_support import ask, make_app, ready, screen_text, settle


def test_f7_orders_the_reading_list_for_a_purpose_and_space_shows_the_sum(tmp_path):
    async def go():
        app = make_app(copy_demo(tmp_path / "demo"))
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot)
            await ask(pilot, "how much protein per meal")
            plain = app.main.answer
            assert all(r.fusion is None for r in plain.results)
            await pilot.press("f7")  # off -> documents
            await settle(pilot)
            a = app.main.answer
            assert app.ask_options == {"purpose": "documents"}
            assert a.results and all(r.fusion and r.fusion["purpose"] == "documents" for r in a.results)
            assert a.verdict == plain.verdict and a.agent.name == plain.agent.name  # never the owner
            assert "purpose: documents" in str(app.main.query_one("#pane-reading").border_title)
            app.main.query_one("#reading-list").focus()
            await pilot.press("space")
            await settle(pilot)
            text = screen_text(app)
            first = a.results[0]
            assert "Why this row" in text and first.path in text
            assert f"{first.fusion['fusedScore']:,}" in text  # the four contributions, added up
            assert "1/(60 + " in text
            assert "does not add up" not in text
            await pilot.press("escape")
            for _ in PURPOSE_NAMES:
                await pilot.press("f7")  # documents -> conversation -> workspace -> off
            await settle(pilot)
            assert app.ask_options == {}
            assert all(r.fusion is None for r in app.main.answer.results)
    asyncio.run(go())


def test_the_classifier_s_coverage_line_is_shown_in_the_room(tmp_path):
    import shutil

    from tui_support import REPO

    fleet = copy_demo(tmp_path / "demo")
    shutil.copy(REPO / "examples" / "classify_by_roster.py", tmp_path / "classify_by_roster.py")
    manifest = fleet / "fleet.txt"
    manifest.write_text(manifest.read_text().replace("# classifier = ", "classifier = "))
    from _who import allow_classifier

    allow_classifier(fleet)  # the person allowed it (kb allow)

    async def go():
        app = make_app(fleet)
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot)
            await ask(pilot, "qual acao da bolsa devo comprar")
            a = app.main.answer
            assert a.agent.chosen_by == "classifier" and a.agent.coverage == "uncovered"
            text = screen_text(app)
            assert "(classifier) uncovered" in text
            assert "VESTA: nothing in this fleet covers" in text
    asyncio.run(go())
