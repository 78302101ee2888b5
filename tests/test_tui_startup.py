"""Start-up cannot race: the panes are mounted before any answer is shown, and the status
line reaches its ready state, with the index's figures, whether the index was built or found.

The loop launches the real app 200 times on one real fleet, with the index load made to
finish after a random few milliseconds (sometimes before the screen has composed, sometimes
after), and a question typed at a random moment. Under the old order (the load started by
the app before its screen mounted) this crashed with NoMatches or stuck on "indexing".
"""

from __future__ import annotations

import asyncio
import random
import time

from engine import Memory
from kbtui.app import KbApp
from kbtui.verdict_bar import VerdictBar
from conftest import copy_demo
import pytest

from tui_support import make_app, ready, screen_text

LAUNCHES = 200


def _status(app) -> str:
    return app.main.query_one(VerdictBar).content.plain


def test_the_status_line_is_ready_with_the_index_figures_whether_built_or_found(tmp_path):
    fleet = copy_demo(tmp_path / "demo")

    async def launch() -> tuple[str, str]:
        app = make_app(fleet)
        async with app.run_test(size=(80, 24)) as pilot:
            await ready(pilot)
            return _status(app), str(app.main.query_one("#question").border_title)

    built, title = asyncio.run(launch())  # first launch: the copy has no index yet
    found, _ = asyncio.run(launch())  # second: the index is found on disk
    assert title == "Atrium: 11 entries, 3 agents"
    for status in (built, found):
        assert status.startswith(" READY ") and "chunks" in status, status  # not "…": nothing is under way
        assert "indexing" not in status
    assert "indexed now" in built and "index up to date" in found


@pytest.mark.parametrize("size", [(80, 24), (100, 30)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_ready_line_is_shown_whole_at_80_and_100_columns(tmp_path, size):
    # It was cut mid-sentence at 80 and at 100 columns ("... Ask a question: the answer").
    fleet = copy_demo(tmp_path / "demo")

    async def launch() -> tuple[str, str]:
        app = make_app(fleet)
        async with app.run_test(size=size) as pilot:
            await ready(pilot)
            return app.main.ready_lines()[0], screen_text(app)

    for built_or_found in range(2):
        line, screen = asyncio.run(launch())
        # What to do, and where every key is; not "Enter records a miss", which read as what
        # Enter is for.
        assert line.endswith("Type a question; F1 lists every key") and "records a miss" not in line
        assert line in screen, (line, screen.splitlines()[:5])


def test_a_first_build_with_five_digit_figures_keeps_type_to_ask_at_80_columns(tmp_path):
    # A first build of the 60,000-chunk haystack (5,230 notes) read "... type to ask, Enter
    # records a m…" at 80 columns. The figures are the load's own message, given the sizes of
    # a big first build; the bar drops the hint's tail before it cuts anything.
    from kbtui.messages import FleetLoaded

    async def go():
        app = make_app(copy_demo(tmp_path / "demo"))
        async with app.run_test(size=(80, 24)) as pilot:
            await ready(pilot)
            big = FleetLoaded(entries=11, agents=3, chunks=60000, reindexed=12345)
            app.loaded = big
            await pilot.press("x", "ctrl+l")  # an emptied question shows the ready line again
            await pilot.pause()
            status = _status(app)
            assert "60000 chunks, 12345 notes indexed now. Type a question" in status, status
            assert not status.endswith("…") and status in screen_text(app), status
            await pilot.resize_terminal(100, 30)  # room again: the whole line comes back
            await pilot.pause()
            assert _status(app).endswith("Type a question; F1 lists every key"), _status(app)
    asyncio.run(go())


def _launches() -> list[tuple[float, float | None, tuple[int, int]]]:
    """The 200 launches' (load delay, moment of the first key, size), drawn in launch order
    from one seed: the same launches whichever worker runs which part."""
    rng = random.Random(15)
    return [(rng.choice((0.0, 0.0, 0.001, 0.003, 0.008)), rng.choice((None, 0.0, 0.002, 0.01)),
             rng.choice(((80, 24), (120, 40)))) for _ in range(LAUNCHES)]


# Four parts of 50, one test each, so two workers share the 200 launches (about 80 s alone).
PARTS = 4


@pytest.mark.slow
@pytest.mark.parametrize("part", range(PARTS), ids=lambda k: f"launches-{k * LAUNCHES // PARTS}-{(k + 1) * LAUNCHES // PARTS - 1}")
def test_two_hundred_launches_with_random_delays_never_crash_or_stick(tmp_path, part):
    fleet = copy_demo(tmp_path / "demo")
    Memory(fleet).snapshot()  # the index exists: the load is fast, so it can beat the screen
    launches = list(enumerate(_launches()))[part * LAUNCHES // PARTS:(part + 1) * LAUNCHES // PARTS]
    problems: list[str] = []

    async def once(i: int, delay: float, type_at: float | None, size: tuple[int, int]) -> None:
        memory = Memory(fleet)
        real = memory.snapshot

        def snapshot(*a, **kw):
            time.sleep(delay)  # the load worker finishes at a random moment of the start-up
            return real(*a, **kw)

        memory.snapshot = snapshot
        app = KbApp(memory, stable=True, watch=False)
        async with app.run_test(size=size) as pilot:
            if type_at is not None:
                await asyncio.sleep(type_at)
                await pilot.press("p")
            deadline = time.monotonic() + 5
            while app.loaded is None or app.main.answer is None and type_at is not None:
                if time.monotonic() > deadline:
                    problems.append(f"launch {i}: stuck ({_status(app)!r})")
                    return
                await pilot.pause(0.002)
            await pilot.pause()
            status = _status(app)
            if "indexing" in status:
                problems.append(f"launch {i}: status still says {status!r}")
            if type_at is None and "READY" not in status:
                problems.append(f"launch {i}: status is {status!r}, not ready")

    async def run_all() -> None:
        for i, (delay, type_at, size) in launches:
            await once(i, delay, type_at, size)

    asyncio.run(run_all())
    assert len(launches) == LAUNCHES // PARTS
    assert not problems, problems[:5]
