"""The UI never blocks: a deliberately slow stage in the ask worker leaves key presses
handled within a small bound; the same stage on the UI thread (the control) must be seen
to stall them, which proves the probe can see a stall at all."""

from __future__ import annotations

import asyncio
import time

from conftest import copy_demo
from tui_support import make_app, ready, settle

SLOW_STAGE_S = 0.8  # the stage: far longer than any bound below
KEY_BOUND_S = 0.25  # a key must be handled (the box shows it) within this, while the stage runs


def _slow(memory):
    real = memory.ask

    def ask(*a, **kw):
        time.sleep(SLOW_STAGE_S)  # a slow stage (a model, a network filesystem), then the real answer
        return real(*a, **kw)

    memory.ask = ask  # on the instance: the real Memory, one stage made slow


async def _key_latencies(app, pilot) -> list[float]:
    box = app.main.query_one("#question")
    await pilot.press("p")  # starts the slow ask
    latencies = []
    for ch in "rotein":
        t0 = time.perf_counter()
        await pilot.press(ch)
        while not box.value.endswith(ch):  # the key reached the box and it repainted its value
            await asyncio.sleep(0.005)
        latencies.append(time.perf_counter() - t0)
    return latencies


def _measure(tmp_path, *, on_ui_thread: bool) -> tuple[list[float], object]:
    async def go():
        app = make_app(copy_demo(tmp_path / "demo"))
        app.main.ask_on_ui_thread = on_ui_thread
        async with app.run_test(size=(80, 24)) as pilot:
            await ready(pilot)
            _slow(app.memory)
            lat = await _key_latencies(app, pilot)
            # The answer still arrives, and it is the answer to the whole question typed.
            deadline = time.monotonic() + 10 * SLOW_STAGE_S
            while (app.main.answer is None or app.main.answer.question != "protein") and time.monotonic() < deadline:
                await settle(pilot, rounds=1)
            return lat, app.main.answer

    return asyncio.run(go())


def test_keys_are_handled_while_a_slow_stage_runs_in_its_worker(tmp_path):
    lat, answer = _measure(tmp_path, on_ui_thread=False)
    assert max(lat) < KEY_BOUND_S, f"a key waited {max(lat):.3f}s behind the slow stage: {lat}"
    assert answer is not None and answer.question == "protein" and answer.verdict == "hit"


def test_control_the_same_stage_on_the_ui_thread_is_seen_to_stall(tmp_path):
    lat, answer = _measure(tmp_path, on_ui_thread=True)
    assert max(lat) >= SLOW_STAGE_S * 0.9, f"the probe did not see the stall: {lat}"
    assert answer is not None and answer.question == "protein"
