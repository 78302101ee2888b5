"""Round 6: the reading room served to a browser. `kbtui --serve` starts one process per
visitor with a shell command it builds; that command is run here, in a real shell."""

from __future__ import annotations

import subprocess

from kbtui.app import visitor_command


def test_a_visitor_process_never_imports_kbtui_or_engine_from_the_working_directory(tmp_path):
    # The command was `python -m kbtui ...`, and `-m` puts the working directory first on
    # sys.path: `kbtui --serve` run from a folder holding a `kbtui/` or `engine/` package (a
    # checkout of another version, /tmp where anyone can make one) gave every visitor that code.
    marker = tmp_path / "RAN"
    for package in ("kbtui", "engine"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text(f"open({str(marker)!r}, 'a').write({package!r})\n")
    command = visitor_command(["--serve", "--port", "9", "--help"])
    assert "--serve" not in command and "--port" not in command
    done = subprocess.run(command, shell=True, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "The reading room for a fleet of agents" in done.stdout
    assert not marker.exists(), f"the visitor ran {marker.read_text()} from the working directory"


def test_an_answer_key_swapped_for_a_fifo_is_refused_on_the_eval_screen(tmp_path):
    # The room picks the fleet's gold.tsv when it starts (is_file), and reads it when the eval
    # runs, minutes later: a FIFO put there meanwhile held the eval's worker for good, and
    # the screen said nothing. load_gold reads through read_regular_text now.
    import asyncio
    import os

    from _faults import let_go
    from conftest import copy_demo
    from tui_support import make_app, ready, screen_text, settle, wait_for

    async def go():
        fleet = copy_demo(tmp_path / "demo")
        gold = fleet / "gold.tsv"
        app = make_app(fleet)
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot)
            gold.unlink()
            os.mkfifo(gold)
            try:
                await pilot.press("f2")
                await settle(pilot)
                await pilot.press("f9")
                await wait_for(pilot, lambda: "not a regular file" in screen_text(app), timeout=20,
                               what="the eval screen to refuse the FIFO by name")
                assert "gold.tsv: cannot read" in screen_text(app)
            finally:
                let_go(gold)  # an eval stuck on the FIFO, so the app can close
            await pilot.press("escape")
            await settle(pilot)

    asyncio.run(go())
