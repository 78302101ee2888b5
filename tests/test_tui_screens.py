"""Every screen usable at 80x24 and saying the right words: the eval scrolls to GATE and
SPEED and draws the GATE block, F9 without an answer key says so, the roster and the check
screen tell a missing agent.txt from an empty one, one agent is "1 agent", and the margin is
one dash everywhere in the room when there is no second file (JSON: null)."""

from __future__ import annotations

import asyncio
import json
import shutil

from conftest import copy_demo, run_kb
from tui_support import ask, make_app, ready, screen_text, settle, wait_for


def run(coro):
    return asyncio.run(coro)


async def _eval(pilot) -> None:
    await ready(pilot)
    await pilot.press("f2")
    await settle(pilot)
    await pilot.press("enter")
    await wait_for(pilot, lambda: pilot.app.screen.report is not None, what="the eval report")
    await settle(pilot)


def test_eval_at_80x24_reaches_gate_and_speed_by_keyboard_and_draws_the_gate(tmp_path):
    async def go():
        app = make_app(copy_demo(tmp_path / "demo"))
        async with app.run_test(size=(80, 24)) as pilot:
            await _eval(pilot)
            assert "SPEED" not in screen_text(app)  # below the fold at first
            for _ in range(13):  # Down through the table's rows goes on into the summary
                await pilot.press("down")
            await settle(pilot)
            assert app.focused.id == "eval-summary"
            await pilot.press("shift+tab", "end")  # and from the table End goes to the end
            await settle(pilot)
            assert app.focused.id == "eval-summary"
            text = screen_text(app)
            assert "SPEED" in text and "GATE" in text
            assert "correct" in text and "misses" in text and "floor 6.92" in text
            strip = next(ln for ln in text.splitlines() if ln.strip().startswith("correct"))
            assert strip.count("o") + sum(int(c) for c in strip if c.isdigit()) >= 10  # every correct answer drawn
    run(go())


def test_margin_is_a_dash_in_the_verdict_bar_and_the_eval_and_null_in_json(tmp_path):
    fleet = copy_demo(tmp_path / "demo")

    async def go():
        app = make_app(fleet)
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot)
            await ask(pilot, "como faco rollback sem downtime")
            assert app.main.answer.confidence.margin is None
            assert "margin —" in screen_text(app)
            await pilot.press("f2")
            await settle(pilot)
            await pilot.press("enter")
            await wait_for(pilot, lambda: app.screen.report is not None, what="the eval report")
            await settle(pilot)
            row = next(ln for ln in screen_text(app).splitlines() if "como faco rollback sem downtime" in ln)
            assert "—" in row and "1.00" not in row
    run(go())
    out = json.loads(run_kb("route", "--json", "publishing rhythm", str(fleet)).stdout)
    assert out["agent"]["margin"] is None


def test_f9_without_an_answer_key_says_so(tmp_path):
    fleet = copy_demo(tmp_path / "demo")
    (fleet / "gold.tsv").unlink()

    async def go():
        app = make_app(fleet)
        async with app.run_test(size=(80, 24)) as pilot:
            await ready(pilot)
            await pilot.press("f2")
            await settle(pilot)
            await pilot.press("f9")
            await settle(pilot)
            assert "no answer key" in screen_text(app)
            assert app.screen.report is None
    run(go())


def test_a_base_without_agent_txt_is_said_so_on_the_roster_and_the_check_screen(tmp_path):
    fleet = copy_demo(tmp_path / "demo")
    (fleet / "steve" / "agent.txt").unlink()

    async def go():
        app = make_app(fleet)
        async with app.run_test(size=(80, 24)) as pilot:
            await ready(pilot)
            await pilot.press("f5")
            await settle(pilot)
            text = screen_text(app)  # the first row is steve's
            assert "(no agent.txt: nothing names this agent)" in text
            assert "names no role" not in text
            await pilot.press("escape", "f3")
            await settle(pilot)
            text = screen_text(app)
            assert "W01" in text and "steve/ (no agent.txt)" in text and "steve/agent.txt" not in text
            await pilot.press("enter")  # W01 is the first finding: nothing to open
            await settle(pilot)
            assert app.screen.NAME == "check"
    run(go())


def test_one_agent_is_one_agent(tmp_path):
    fleet = copy_demo(tmp_path / "demo")
    for other in ("steve", "yaron"):
        shutil.rmtree(fleet / other)

    async def go():
        app = make_app(fleet)
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot)
            await ask(pilot, "quem decide se um deploy pode ir pra producao")
            text = screen_text(app)
            assert "1 agent" in text and "1 agents" not in text
    run(go())


def test_the_palette_lists_the_purposes_the_engine_declares(tmp_path):
    from engine.stages.purpose.weights import PURPOSE_NAMES
    from kbtui.commands import palette_rows

    titles = [t for t, _h, _a in palette_rows()]
    assert [t.removeprefix("Purpose: ") for t in titles if t.startswith("Purpose: ")] == ["off", *PURPOSE_NAMES]
    assert not any("seed" in h for _t, h, _a in palette_rows())
