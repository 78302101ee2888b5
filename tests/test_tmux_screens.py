"""Every screen opens every time, in a real terminal.

Pilot sees a screen on the stack; only a terminal shows whether it was drawn. A screen kept
between visits (the eval screen keeps its last report) was once removed when popped, so the
second F2 pushed a screen with no message loop: the main screen stayed drawn, F9 did
nothing, and from the palette the palette stayed drawn, until a resize. Here each screen is
opened twice with its key, read from `tmux capture-pane` each time, and closed with Escape;
then the eval screen a third time from the command palette. Skipped only without tmux.
"""

from __future__ import annotations

import os
import shutil
import time

import pytest

from conftest import copy_demo
from tui_support import Tmux

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

MAIN = "ask the fleet a question"  # the question box's placeholder: the main screen is drawn
# key -> what the screen's top line says (its title) once drawn
SCREENS = {"F2": "Eval", "F3": "Check", "F4": "Misses", "F5": "Roster", "F8": "Labels", "F1": "Help"}


def wait_top(tmux: Tmux, title: str, what: str = "", timeout: float = 20.0) -> str:
    """The visible screen once its first line starts with `title` and the main screen is gone."""
    deadline = time.monotonic() + timeout
    while True:
        screen = tmux.visible()
        assert "Traceback" not in screen, screen
        lines = screen.splitlines()
        if lines and lines[0].strip().startswith(title) and MAIN not in screen:
            return screen
        if time.monotonic() > deadline:
            raise AssertionError(f"the {title} screen ({what}) was never drawn; the terminal shows:\n{screen}")
        time.sleep(0.1)


def test_every_screen_opens_every_time_in_a_real_terminal(tmp_path):
    fleet = copy_demo(tmp_path / "demo")
    tmux = Tmux(f"kbtui-screens-{os.getpid()}")
    try:
        tmux.start_room(fleet, tmp_path, (100, 30))
        tmux.wait_for("READY", "chunks", MAIN, timeout=60)
        for key, title in SCREENS.items():
            for visit in (1, 2):
                tmux.keys(key)
                screen = wait_top(tmux, title, f"{key}, visit {visit}")
                if key == "F2" and visit == 2:
                    # The screen answers its keys too, not only shows: F9 runs the answer key.
                    tmux.keys("F9")
                    screen = tmux.wait_for("answerable", "FILE", timeout=60)
                    assert screen.splitlines()[0].strip().startswith("Eval"), screen
                tmux.keys("Escape")
                screen = tmux.wait_for(MAIN, "READY")  # the question box: the main screen, drawn
                assert not screen.splitlines()[0].strip().startswith(title), screen
        # The palette: chosen there, the eval screen is drawn and the palette is gone.
        tmux.keys("C-p")
        tmux.wait_for("Search for commands")
        tmux("send-keys", "-t", "room", "-l", "Eval: run")
        tmux.wait_for("Eval: run the answer key")
        tmux.keys("Enter")
        screen = wait_top(tmux, "Eval", "from the palette")
        assert "Search for commands" not in screen, screen
        tmux.keys("Escape")
        tmux.wait_for(MAIN)
    finally:
        tmux("kill-server", check=False)
