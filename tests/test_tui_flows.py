"""The reading room driven as a person drives it: Pilot against the real app on a real copy
of the demo fleet."""

from __future__ import annotations

from conftest import copy_demo
from kbtui.main_screen import PANE_NAMES
from tui_support import add_flawed_note, ask, make_app, ready, screen_text, settle, wait_for


def run(coro):
    import asyncio

    return asyncio.run(coro)


def test_typing_a_question_shows_the_verdict_owner_and_arithmetic(tmp_path):
    async def go():
        app = make_app(copy_demo(tmp_path / "demo"))
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot)
            await ask(pilot, "quem decide se um deploy pode ir pra producao", typed=True)  # key by key, as named
            a = app.main.answer
            assert a.verdict == "hit" and a.agent.name == "zed"
            text = screen_text(app)
            assert "HIT" in text and "owner zed" in text
            assert "33.69" in text  # the seed's worked score, on the keyword pane and the gate
            assert "floor_for(11)" in text and "6.92" in text
            assert "margin     4.50 = 33.69 / 7.49" in text
            assert "keywords #1 + text #" in text
    run(go())


def test_guess_and_nothing_with_suggestions(tmp_path):
    async def go():
        app = make_app(copy_demo(tmp_path / "demo"))
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot)
            await ask(pilot, "publishing rhythm")
            assert app.main.answer.verdict == "guess"
            text = screen_text(app)
            assert "GUESS" in text and "short of the floor by 3.17" in text
            await ask(pilot, "how do I roll back")
            assert app.main.answer.verdict == "nothing"
            text = screen_text(app)
            assert "NOTHING" in text
            assert "backup do banco, database backup" in text  # the seed's look-alike keys
            assert "that is spelling and not meaning" in text
            assert "refused" in text  # the text scorer found files; text alone is not served
    run(go())


def test_a_miss_is_recorded_on_enter_and_never_for_the_prefixes_typed(tmp_path):
    async def go():
        fleet = copy_demo(tmp_path / "demo")
        app = make_app(fleet)
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot)
            await ask(pilot, "me conta uma piada", typed=True)  # every prefix asked: none may be recorded
            assert not (fleet / "kb-misses.txt").exists(), "as-you-type must not record misses"
            await pilot.press("escape", "enter")
            await settle(pilot)
            log = (fleet / "kb-misses.txt").read_text()
            assert "\tme conta uma piada" in log
            assert "\tme conta uma" not in log.replace("\tme conta uma piada", "")
            assert app.main.answer.miss is not None and app.main.answer.miss.recorded
            assert "recorded in kb-misses.txt" in screen_text(app)
            # F4: the log read back, this question on it
            await pilot.press("f4")
            await settle(pilot)
            assert type(app.screen).__name__ == "MissesScreen"
            assert "me conta uma piada" in screen_text(app)
    run(go())


def test_reader_opens_on_enter_highlights_and_escape_returns(tmp_path):
    async def go():
        app = make_app(copy_demo(tmp_path / "demo"))
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot)
            # Its best passage is the "Zero downtime" section, well below the title.
            await ask(pilot, "como faco rollback sem downtime", enter=True)
            assert app.focused.id == "reading-list"
            await pilot.press("enter")
            await settle(pilot)
            reader = app.screen
            assert type(reader).__name__ == "ReaderScreen"
            assert reader.path == "knowledge/deploy-checklist.md"
            assert reader.best_line > 1  # the best passage is not the title
            assert reader._matches, "the question's words are highlighted in the note"
            body = reader.query_one("#reader-body")
            assert body.scroll_y > 0, "scrolled to the best passage"
            assert "Zero downtime comes from" in screen_text(app)
            await pilot.press("escape")
            await settle(pilot)
            assert app.screen is app.main
            assert app.main.answer.verdict == "hit"
    run(go())


def test_eval_runs_in_a_worker_and_shows_the_seed_table(tmp_path):
    async def go():
        app = make_app(copy_demo(tmp_path / "demo"))
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot)
            await pilot.press("f2")
            await settle(pilot)
            assert app.screen.query_one("#gold-path").value == "gold.tsv"
            await pilot.press("enter")
            await wait_for(pilot, lambda: app.screen.report is not None, what="the eval report")
            await settle(pilot)
            r = app.screen.report
            assert len(r.graded) == 13 and len(r.answerable) == 10
            assert all(g.file_ok for g in r.graded)
            text = screen_text(app)
            assert "FILE   fused   10/10  (100%)" in text
            assert "refused 3, hedged 0, answered 0" in text
            assert "quem decide se um deploy pode ir pra producao" in text
    run(go())


def test_eval_with_a_bad_key_says_why_and_keeps_running(tmp_path):
    async def go():
        fleet = copy_demo(tmp_path / "demo")
        (fleet / "bad.tsv").write_text("a question\tnobody/nothing.md\n")
        app = make_app(fleet)
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot)
            await pilot.press("f2")
            await settle(pilot)
            box = app.screen.query_one("#gold-path")
            box.value = "bad.tsv"
            await pilot.press("enter")
            await settle(pilot)
            assert "is not a note in this fleet" in screen_text(app)
            assert app.is_running
    run(go())


def test_editing_a_note_on_disk_changes_the_answer(tmp_path):
    async def go():
        fleet = copy_demo(tmp_path / "demo")
        app = make_app(fleet, watch=True)
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot)
            await ask(pilot, "zebra crossing")
            assert app.main.answer.verdict == "nothing"
            note = fleet / "yaron" / "knowledge" / "protein-basics.md"
            text = note.read_text()
            note.write_text(text.replace("**Search for:** `protein`", "**Search for:** `zebra crossing`, `protein`"))
            await wait_for(pilot, lambda: app.main.answer is not None and app.main.answer.verdict == "hit",
                           timeout=15, what="the re-indexed answer")
            assert app.main.answer.keyword[0].id == "yaron/knowledge/protein-basics.md"
            assert "zebra crossing" in app.main.answer.keyword[0].matched
    run(go())


def test_a_half_written_note_is_reported_not_fatal(tmp_path):
    async def go():
        fleet = copy_demo(tmp_path / "demo")
        app = make_app(fleet, watch=True)
        notes = []
        app.notify = lambda message, **kw: notes.append((message, kw))  # capture what the user is told
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot)
            await ask(pilot, "how much protein per meal")
            assert app.main.answer.verdict == "hit"
            # An editor mid-save: invalid UTF-8 where a note was.
            (fleet / "zed" / "knowledge" / "broken.md").write_bytes(b"# Broken\n\n\xff\xfe half written")
            await wait_for(pilot, lambda: any("not UTF-8" in m for m, _ in notes), timeout=15,
                           what="the unreadable note to be reported")
            await settle(pilot)
            assert app.is_running
            assert app.main.answer.verdict == "hit"  # still answering
    run(go())


def test_an_engine_error_is_shown_where_the_verdict_goes_and_the_app_survives(tmp_path):
    async def go():
        # A purpose the engine does not know: a real typed refusal from Memory.ask.
        app = make_app(copy_demo(tmp_path / "demo"), purpose="astrology")
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot)
            await ask(pilot, "how much protein per meal")
            assert "ERROR" in screen_text(app)
            assert app.is_running
            app.ask_options = {}
            await ask(pilot, "how much protein per meal")
            assert app.main.answer.verdict == "hit"
    run(go())


def test_a_stale_answer_is_dropped(tmp_path):
    async def go():
        from kbtui.messages import Answered

        app = make_app(copy_demo(tmp_path / "demo"))
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot)
            await ask(pilot, "how much protein per meal")
            current = app.main.answer
            old = app.memory.ask("quem decide se um deploy pode ir pra producao", record_miss=False)
            app.main.post_message(Answered(app.main.answer_qid - 1, old, False))
            await settle(pilot)
            assert app.main.answer is current
            assert "owner yaron" in screen_text(app)
    run(go())


def test_history_on_up_and_down(tmp_path):
    async def go():
        app = make_app(copy_demo(tmp_path / "demo"))
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot)
            for q in ("how much protein per meal", "what makes a review comment blocking"):
                await ask(pilot, q, enter=True)
                await pilot.press("escape")
            await pilot.press("ctrl+l")
            box = app.main.query_one("#question")
            await pilot.press("up")
            assert box.value == "what makes a review comment blocking"
            await pilot.press("up")
            assert box.value == "how much protein per meal"
            await pilot.press("down", "down")
            assert box.value == ""
    run(go())


def test_narrow_terminal_shows_tabs_and_wide_shows_every_pane(tmp_path):
    async def go():
        app = make_app(copy_demo(tmp_path / "demo"))
        async with app.run_test(size=(80, 24)) as pilot:
            await ready(pilot)
            await ask(pilot, "how much protein per meal")
            tabs = app.main.query_one("#pane-tabs")
            assert tabs.display
            assert app.main.query_one("#pane-reading").display
            assert not app.main.query_one("#pane-gate").display
            await pilot.press("f6", "f6", "f6")  # question -> reading -> keywords -> gate
            await settle(pilot)
            assert app.main.query_one("#pane-gate").display
            assert "floor_for(11)" in screen_text(app)
            await pilot.resize_terminal(120, 40)
            await settle(pilot)
            assert not tabs.display
            for p in PANE_NAMES:
                assert app.main.query_one(f"#pane-{p}").display
    run(go())


def test_keyword_pane_shows_the_per_term_arithmetic_of_the_highlighted_row(tmp_path):
    async def go():
        app = make_app(copy_demo(tmp_path / "demo"))
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot)
            await ask(pilot, "quem decide se um deploy pode ir pra producao")
            text = screen_text(app)
            assert "key 6 + title 3 + stem 3" in text and "12 × 1.8718 = 22.46" in text
            app.main.query_one("#keyword-table").focus()
            await pilot.press("down")
            await settle(pilot)
            text = screen_text(app)
            assert "steve/knowledge/hooks-that-hold.md  Openings" in text
            assert "7.49" in text
    run(go())


def test_command_palette_reaches_the_roster(tmp_path):
    async def go():
        app = make_app(copy_demo(tmp_path / "demo"))
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot)
            await pilot.press("ctrl+p")
            await pilot.press(*"roster")
            await pilot.pause(0.3)
            await pilot.press("enter")
            await settle(pilot)
            assert type(app.screen).__name__ == "RosterScreen"
            text = screen_text(app)
            assert "Zed" in text and "Software architect" in text
    run(go())


def test_check_screen_lists_findings_and_enter_opens_the_line(tmp_path):
    async def go():
        fleet = copy_demo(tmp_path / "demo")
        add_flawed_note(fleet)
        app = make_app(fleet)
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot)
            await pilot.press("f3")
            await settle(pilot)
            text = screen_text(app)
            assert "W07" in text and "zed/knowledge/thin-label.md:3" in text
            await pilot.press("enter")
            await settle(pilot)
            reader = app.screen
            assert type(reader).__name__ == "ReaderScreen"
            assert reader.best_line == 3
    run(go())


def test_control_characters_in_a_note_never_reach_the_terminal(tmp_path):
    async def go():
        fleet = copy_demo(tmp_path / "demo")
        (fleet / "zed" / "knowledge" / "escape.md").write_text(
            "# Bell \x07 and \x1b[31mred\x1b[0m title\n\n**Search for:** `escapology`\n\n"
            "Body with \x1b]0;pwned\x07 an OSC and [bold]markup[/bold].\n"
        )
        app = make_app(fleet)
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot)
            await ask(pilot, "escapology", enter=True)
            assert app.main.answer.verdict == "hit"
            for text in (screen_text(app),):
                assert "\x1b" not in text and "\x07" not in text
                assert "\ufffd" in text  # made visible instead
            await pilot.press("enter")
            await settle(pilot)
            text = screen_text(app)
            assert "\x1b" not in text and "\x07" not in text
            assert "[bold]markup[/bold]" in text  # shown as written, not parsed as markup
    run(go())


def test_no_color_still_reads_the_verdict(tmp_path, monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")

    async def go():
        app = make_app(copy_demo(tmp_path / "demo"))
        assert app.no_color
        async with app.run_test(size=(80, 24)) as pilot:
            await ready(pilot)
            await ask(pilot, "how much protein per meal")
            assert " HIT " in screen_text(app)
    run(go())
