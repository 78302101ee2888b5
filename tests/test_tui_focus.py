"""One focus model at every size: F6 / Shift+F6 and Tab / Shift+Tab walk the question and the
panes, the tab shown follows focus, Escape comes back to the question (and the footer says
so), Down from the question enters the reading list without recording a miss, pane keys (Space)
act only in their pane, and two F6 in one tick settle instead of looping."""

from __future__ import annotations

import asyncio

import pytest
from textual import events

from conftest import copy_demo
from kbtui.main_screen import PANE_NAMES
from tui_support import ask, make_app, ready, screen_text, settle

SIZES = [(80, 24), (120, 40)]


def run(coro):
    return asyncio.run(coro)


def _where(app) -> tuple[str, str]:
    """(the focus ring position, the active tab) of the main screen."""
    main = app.main
    node, where = app.focused, "question"
    while node is not None and node is not main:
        if (node.id or "").startswith("pane-"):
            where = node.id.removeprefix("pane-")
            break
        node = node.parent
    return where, main.query_one("#pane-tabs").active.removeprefix("tab-")


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_f6_pressed_twice_in_one_tick_settles_with_focus_and_tab_agreeing(tmp_path, size):
    async def go():
        app = make_app(copy_demo(tmp_path / "demo"))
        async with app.run_test(size=size) as pilot:
            await ready(pilot)
            await ask(pilot, "how much protein per meal")
            calls = []
            real = app.main.show_pane
            app.main.show_pane = lambda pane: (calls.append(pane), real(pane))[1]
            # Two keys in one tick, as they arrive over ssh after a stall: no await between.
            app.post_message(events.Key("f6", None))
            app.post_message(events.Key("f6", None))
            await settle(pilot)
            await pilot.pause(0.1)
            assert _where(app) == ("keywords", "keywords")
            assert app.main.pane == "keywords"
            settled = len(calls)
            await pilot.pause(0.3)
            assert len(calls) == settled, f"panes still switching by themselves: {calls[settled:][:10]}"
            assert settled <= 4, calls
    run(go())


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_f6_and_tab_walk_the_question_and_the_panes_and_escape_comes_back(tmp_path, size):
    async def go():
        app = make_app(copy_demo(tmp_path / "demo"))
        async with app.run_test(size=size) as pilot:
            await ready(pilot)
            await ask(pilot, "how much protein per meal")
            box = app.main.query_one("#question")
            assert _where(app)[0] == "question"
            seen = []
            for i, _ in enumerate(PANE_NAMES):  # F6 and Tab take turns: both walk the same ring
                await pilot.press("f6" if i % 2 == 0 else "tab")
                await settle(pilot)
                seen.append(_where(app))
            assert PANE_NAMES[:4] == ("reading", "keywords", "gate", "agents")
            assert seen == [(p, p) for p in PANE_NAMES]
            await pilot.press("tab")  # round to the question
            await settle(pilot)
            assert _where(app)[0] == "question"
            await pilot.press("shift+f6")
            await settle(pilot)
            assert _where(app) == (PANE_NAMES[-1], PANE_NAMES[-1])
            await pilot.press("shift+tab")
            await settle(pilot)
            assert _where(app) == (PANE_NAMES[-2], PANE_NAMES[-2])
            # Escape comes back to refine the question (a letter in a pane starts a new one:
            # test_tui_typing.py).
            assert "esc Question" in screen_text(app)
            await pilot.press("escape")
            await settle(pilot)
            assert app.focused is box
            await pilot.press("x")
            assert box.value == "how much protein per mealx"
    run(go())


def test_down_from_the_question_enters_the_reading_list_without_a_miss(tmp_path):
    async def go():
        fleet = copy_demo(tmp_path / "demo")
        app = make_app(fleet)
        async with app.run_test(size=(80, 24)) as pilot:
            await ready(pilot)
            await ask(pilot, "me conta uma piada")  # NOTHING: Enter would record a miss
            await pilot.press("down")
            await settle(pilot)
            assert app.focused.id == "reading-list"
            assert _where(app) == ("reading", "reading")
            assert not (fleet / "kb-misses.txt").exists()
            assert app.main.query_one("#question").value == "me conta uma piada"
            assert app.main.answer.miss is None
    run(go())


def test_space_says_what_it_will_do_and_acts_only_in_the_keyword_pane(tmp_path):
    async def go():
        app = make_app(copy_demo(tmp_path / "demo"))
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot)
            await ask(pilot, "how much protein per meal")
            terms = app.main.query_one("#keyword-terms")
            await pilot.press("space")  # in the question: a space
            assert app.main.query_one("#question").value.endswith(" ")
            await pilot.press("backspace")
            await settle(pilot)
            app.main.focus_pane("keywords")
            await settle(pilot)
            assert terms.display and "space Hide sums" in screen_text(app)
            await pilot.press("space")
            await settle(pilot)
            assert not terms.display and "space Show sums" in screen_text(app)
            await pilot.press("space")
            await settle(pilot)
            assert terms.display and "space Hide sums" in screen_text(app)
    run(go())


def test_f7_acts_only_on_the_main_screen(tmp_path):
    async def go():
        app = make_app(copy_demo(tmp_path / "demo"))
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot)
            await pilot.press("f5")
            await settle(pilot)
            assert app.screen.NAME == "roster"
            await pilot.press("f7")
            await settle(pilot)
            assert app.ask_options == {}
            await pilot.press("escape", "f7")
            await settle(pilot)
            assert app.ask_options == {"purpose": "documents"}
    run(go())


def test_under_a_purpose_the_score_shown_is_the_score_the_list_is_ordered_by(tmp_path):
    from kbtui.reading_pane import shown_score

    async def go():
        app = make_app(copy_demo(tmp_path / "demo"), purpose="workspace")
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot)
            await ask(pilot, "quem decide se um deploy pode ir pra producao")
            results = app.main.answer.results
            top = results[0].fusion["fusedScore"]
            shown = [round(shown_score(r, top), 3) for r in results]
            assert shown[0] == 1.0 and shown == sorted(shown, reverse=True), shown
            rrf = [r.score for r in results]
            assert rrf != sorted(rrf, reverse=True), "the demo question no longer tells the two orders apart"
            text = screen_text(app)
            assert "(purpose: workspace; share of top)" in text
            for r, s in zip(results[:4], shown):
                assert f"{s:.3f}  {r.base}  {r.path}" in text
    run(go())


def test_panes_hidden_under_the_tabs_are_painted_when_shown_not_on_every_key(tmp_path):
    """At 80x24 only the pane shown is repainted as the question is typed; another pane
    catches up with the answer on screen when it is shown, and every pane when the terminal
    grows past the tabs."""
    async def go():
        app = make_app(copy_demo(tmp_path / "demo"))
        async with app.run_test(size=(80, 24)) as pilot:
            await ready(pilot)
            await ask(pilot, "how much protein per meal", typed=True)  # an answer painted on every key
            main = app.main
            keywords = main.query_one("#keyword-table")
            gate = main.query_one("#gate-text")
            assert main.pane == "reading" and main.query_one("#reading-list").option_count > 0
            assert keywords.row_count == 0, "the hidden keyword table was filled on a keystroke"
            await pilot.press("f6", "f6")  # the question -> reading -> keywords
            await settle(pilot)
            assert main.pane == "keywords"
            assert keywords.row_count == min(len(main.answer.keyword), 20) > 0
            assert "protein" in screen_text(app)
            placeholder = "ask a question to see the floor arithmetic"
            assert str(gate.content) == placeholder  # the gate is still hidden: not painted yet
            await pilot.resize_terminal(120, 40)
            await settle(pilot)
            assert str(gate.content) != placeholder and "idf_unique" in screen_text(app)
    run(go())


async def _down_enter_in_one_write(pilot) -> bool:
    """Down and Enter posted with no pause between, as one terminal write delivers them:
    whether the reader opened (the reading list's row) rather than the question asked again."""
    from kbtui.reader import ReaderScreen

    pilot.app.post_message(events.Key("down", None))
    pilot.app.post_message(events.Key("enter", "\r"))
    await settle(pilot)
    await pilot.pause(0.1)
    return isinstance(pilot.app.screen, ReaderScreen)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_down_then_enter_in_one_write_opens_the_row_down_moved_to(tmp_path, size):
    # tmux `send-keys Down Enter`, or a fast typist: both keys arrive in one terminal write,
    # before focus has moved. Enter belongs to the reading list, not to the question.
    async def go():
        app = make_app(copy_demo(tmp_path / "demo"))
        async with app.run_test(size=size) as pilot:
            await ready(pilot)
            await ask(pilot, "how much protein per meal")
            assert app.main.answer.results
            assert await _down_enter_in_one_write(pilot)
            assert "how much protein per meal" not in app.history.items
    run(go())


def test_down_then_enter_from_the_question_while_another_pane_is_shown_under_the_tabs(tmp_path):
    # At 80x24 the keywords pane was the one shown: Down must show the reading list and focus
    # it at once, though the list is displayed only on the next refresh.
    async def go():
        app = make_app(copy_demo(tmp_path / "demo"))
        async with app.run_test(size=(80, 24)) as pilot:
            await ready(pilot)
            await ask(pilot, "how much protein per meal")
            app.main.focus_pane("keywords")
            await settle(pilot)
            await pilot.press("escape")
            await settle(pilot)
            assert _where(app) == ("question", "keywords")
            assert await _down_enter_in_one_write(pilot)
            await pilot.press("escape")
            await settle(pilot)
            assert _where(app) == ("reading", "reading")
    run(go())
