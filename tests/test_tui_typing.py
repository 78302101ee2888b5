""""type to ask" holds wherever focus is on the main screen: a printable key on a pane (the
reading list after Escape from the reader, above all) starts a new question in the question
box, and the panes' own keys are on Space, which no question starts with."""

from __future__ import annotations

import asyncio

import pytest
from textual import events

from conftest import copy_demo
from tui_support import ask, make_app, ready, screen_text, settle

SIZES = [(80, 24), (120, 40)]
FIRST = "how much protein per meal"
NEXT = "what makes a review comment blocking"  # starts with w, the reading list's old Why key


def run(coro):
    return asyncio.run(coro)


async def _back_from_the_reader(pilot, app) -> None:
    """Ask FIRST with Enter (focus goes to the reading list), open the top row, Escape."""
    await ready(pilot)
    await ask(pilot, FIRST, enter=True)
    assert app.focused.id == "reading-list"
    await pilot.press("enter")
    await settle(pilot)
    assert app.screen is not app.main  # the reader
    await pilot.press("escape")
    await settle(pilot)
    assert app.screen is app.main and app.focused.id == "reading-list"


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_after_escape_from_the_reader_typing_asks_a_new_question(tmp_path, size):
    async def go():
        app = make_app(copy_demo(tmp_path / "demo"))
        async with app.run_test(size=size) as pilot:
            await _back_from_the_reader(pilot, app)
            before = app.main.answer
            await pilot.press(*NEXT)
            await settle(pilot)
            box = app.main.query_one("#question")
            assert app.screen is app.main, "a key on the list opened a screen instead of asking"
            assert app.focused is box
            assert box.value == NEXT and box.cursor_position == len(NEXT)
            answer = app.main.answer
            assert answer is not before and answer.results
            assert any("review" in r.path for r in answer.results[:2]), [r.path for r in answer.results]
            assert "Why this row" not in screen_text(app)
            # The question it replaced is one Up away, and nothing was recorded as a miss.
            await pilot.press("up")
            assert box.value == FIRST
    run(go())


def _keys(app) -> None:
    # A fast typist (or tmux send-keys): every key is queued before the first is handled.
    for ch in NEXT:
        app.post_message(events.Key("space" if ch == " " else ch, ch))


def _paste(app) -> None:
    app.post_message(events.Paste(NEXT + "\nsecond line"))  # its first line, as the box keeps


@pytest.mark.parametrize("send", [_keys, _paste], ids=["keys-in-one-write", "paste"])
def test_what_is_sent_to_the_list_in_one_go_all_lands_in_the_question(tmp_path, send):
    async def go():
        app = make_app(copy_demo(tmp_path / "demo"))
        async with app.run_test(size=(80, 24)) as pilot:
            await _back_from_the_reader(pilot, app)
            send(app)
            await settle(pilot)
            box = app.main.query_one("#question")
            assert app.focused is box and box.value == NEXT
            assert app.main.answer.question == NEXT
    run(go())


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_space_on_the_list_shows_why_this_row_and_the_footer_says_so(tmp_path, size):
    async def go():
        app = make_app(copy_demo(tmp_path / "demo"))
        async with app.run_test(size=size) as pilot:
            await _back_from_the_reader(pilot, app)
            assert "space Why" in screen_text(app)
            await pilot.press("space")
            await settle(pilot)
            text = screen_text(app)
            assert "Why this row" in text and app.main.answer.results[0].path in text
            await pilot.press("space")  # Space closes it again, as Escape does
            await settle(pilot)
            assert app.screen is app.main and app.focused.id == "reading-list"
            assert app.main.query_one("#question").value == FIRST
    run(go())


def test_a_letter_on_the_keyword_pane_asks_and_leaves_its_sums_alone(tmp_path):
    async def go():
        app = make_app(copy_demo(tmp_path / "demo"))
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot)
            await ask(pilot, FIRST)
            terms = app.main.query_one("#keyword-terms")
            app.main.focus_pane("keywords")
            await settle(pilot)
            assert terms.display
            await pilot.press("a")  # the old toggle key: now the first letter of a question
            await settle(pilot)
            box = app.main.query_one("#question")
            assert app.focused is box and box.value == "a"
            assert app.main.answer.question == "a"
            assert terms.display
    run(go())
