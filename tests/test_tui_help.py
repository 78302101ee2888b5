"""The help screen: F1 everywhere (and ? where no box is being typed in), named in the footer,
listing every key the room binds and every screen, and the seed's words in plain ones.

The list is read from the bindings, so the test walks the same bindings the app has and
checks that each key is on the help screen: a key added without a description, or a screen
added without a row in the palette, fails here.
"""

from __future__ import annotations

import asyncio

from textual.binding import Binding

from conftest import copy_demo
from tui_support import make_app, paste, ready, screen_text, settle


def run(coro):
    return asyncio.run(coro)


def _help_plain(app) -> str:
    """The help as plain lines, a key wrapped in its column joined back to its row."""
    from rich.console import Console

    from kbtui.help_screen import KEY_WIDTH, help_text

    console = Console(width=400, record=True, color_system=None)
    console.print(help_text(app))
    lines: list[str] = []
    cut = 2 + KEY_WIDTH + 1
    for line in console.export_text().splitlines():
        if lines and line.startswith("  ") and line[:cut].strip() and not line[cut:].strip():
            key, rest = lines[-1][:cut].rstrip(), lines[-1][cut:]
            lines[-1] = f"{key} {line.strip()} {rest}"
        else:
            lines.append(line)
    return "\n".join(lines)


def test_f1_opens_help_from_the_main_screen_and_the_footer_names_it(tmp_path):
    async def go():
        app = make_app(copy_demo(tmp_path / "demo"))
        async with app.run_test(size=(80, 24)) as pilot:
            await ready(pilot)
            assert "f1 Help" in screen_text(app).splitlines()[-1]  # the footer, at 80 columns
            await pilot.press("f1")
            await settle(pilot)
            assert type(app.screen).__name__ == "HelpScreen"
            text = screen_text(app)
            assert text.splitlines()[0].strip().startswith("Help"), text
            await pilot.press("f1")  # already there: not a second one on the stack
            await settle(pilot)
            assert len(app.screen_stack) == 2
            await pilot.press("escape")
            await settle(pilot)
            assert app.screen is app.main
    run(go())


def test_a_question_mark_is_a_character_in_a_box_and_help_elsewhere(tmp_path):
    async def go():
        app = make_app(copy_demo(tmp_path / "demo"))
        async with app.run_test(size=(100, 30)) as pilot:
            await ready(pilot)
            await pilot.press(*"why?")
            await settle(pilot)
            assert app.main.query_one("#question").value == "why?"
            assert app.screen is app.main
            await pilot.press("down")  # into the reading list
            await settle(pilot)
            await pilot.press("question_mark")
            await settle(pilot)
            assert type(app.screen).__name__ == "HelpScreen"
            assert app.main.query_one("#question").value == "why?"  # no new question began
            await pilot.press("escape")
            await pilot.press("f2")  # the eval screen: its path box has focus
            await settle(pilot)
            box = app.screen.query_one("#gold-path")
            before = box.value
            await pilot.press("question_mark")
            await settle(pilot)
            assert type(app.screen).__name__ == "EvalScreen"
            assert box.value == before + "?"
            await pilot.press("f1")  # F1 works in a box
            await settle(pilot)
            assert type(app.screen).__name__ == "HelpScreen"
            await pilot.press("escape")
            await settle(pilot)
            assert type(app.screen).__name__ == "EvalScreen"  # help came over it, and went
    run(go())


def test_help_lists_every_key_the_room_binds_and_every_screen(tmp_path):
    from kbtui.app import KbApp
    from kbtui.screens import screen_class
    from kbtui.commands import palette_rows
    from kbtui.help_screen import GLOSSARY, _own_bindings
    from kbtui.main_screen import PANES, MainScreen
    from kbtui.question_input import QuestionInput
    from kbtui.reader import ReaderScreen
    from kbtui.why_screen import WhyScreen

    async def go():
        app = make_app(copy_demo(tmp_path / "demo"))
        async with app.run_test(size=(100, 30)) as pilot:
            await ready(pilot)
            text = _help_plain(app)
            owners = [KbApp, MainScreen, QuestionInput, *PANES, ReaderScreen, WhyScreen]
            names = [b.action[len("show('"):-2] for b in KbApp.BINDINGS if b.action.startswith("show(")]
            owners += [screen_class(n) for n in names]
            missing = []
            for owner in owners:
                for b in _own_bindings(owner):
                    shown = app.get_key_display(b)
                    what = (b.tooltip or b.description).lower()
                    if not any(shown in line and what in line.lower() for line in text.splitlines()):
                        missing.append(f"{owner.__name__}: {b.key} {what!r}")
            assert not missing, "\n".join(missing)
            for title, _help, action in palette_rows():
                if action.startswith("show("):
                    assert title in text, title
            for term in ("hit", "guess", "nothing", "floor", "margin", "fold", "species", "RRF"):
                assert any(t == term for t, _m in GLOSSARY), term
                assert f"  {term} " in text, term
            assert app.get_key_display(Binding(app.COMMAND_PALETTE_BINDING, "x", "")) in text
    run(go())


def test_the_words_only_the_authors_knew_are_said_where_they_appear(tmp_path):
    from kbtui.commands import palette_rows

    async def go():
        app = make_app(copy_demo(tmp_path / "demo"))
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot)
            await paste(pilot, "quem decide se um deploy pode ir pra producao")  # the words on screen are tested
            await settle(pilot)
            text = screen_text(app)
            assert "0.033" in text
            assert "score: 1/(60+rank) from each list, added" in text  # what 0.033 is, under the list
            assert "memory (what it knows)" in text and "skills (how it works)" in text
            from kbtui.species_pane import fold_caption  # what the Agents pane paints, unwrapped

            assert "tools (what it can use)" in fold_caption(app.main.answer).plain
    run(go())
    helps = " ".join(h for _t, h, _a in palette_rows())
    for words in ("tiebreaker", "co-mention", "species table", "arithmetic"):
        assert words not in helps, words
