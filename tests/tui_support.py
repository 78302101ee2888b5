"""Shared by the reading room's tests: a real demo fleet copied into tmp, the real app on it.

Every test runs against a copy, so a recorded miss or an edited note never lands in the
repository's examples/demo.
"""

from __future__ import annotations

import asyncio
import html
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from rich.cells import cell_len
from textual import events
from textual.worker import WorkerCancelled

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "examples" / "demo"


def make_app(fleet: Path, **kw):
    from engine import Memory
    from kbtui.app import KbApp

    kw.setdefault("stable", True)
    kw.setdefault("watch", False)
    return KbApp(Memory(fleet), **kw)


async def settle(pilot, *, rounds: int = 3) -> None:
    """Wait until no worker runs and the messages they posted have been handled."""
    app = pilot.app
    for _ in range(rounds):
        # The file watcher runs for the app's lifetime: wait for everything else.
        # (An empty list would mean "all" to wait_for_complete, the watcher included.)
        busy = [w for w in app.workers if w.group != "watch"]
        if busy:
            try:
                await app.workers.wait_for_complete(busy)
            except WorkerCancelled:
                pass  # superseded by a newer question (exclusive=True): its answer is dropped anyway
        await pilot.pause()


async def ready(pilot) -> None:
    """Wait for the first index and catalogue (the load worker)."""
    deadline = time.monotonic() + 20
    while pilot.app.loaded is None:
        if time.monotonic() > deadline:
            raise AssertionError("the fleet never finished loading")
        await pilot.pause(0.02)
    await settle(pilot)


async def wait_for(pilot, predicate, *, timeout: float = 10.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)
        await pilot.pause()


async def run_eval(pilot, *, to_end: bool = False) -> None:
    """F2, Enter: the eval screen graded against the fleet's gold.tsv; End scrolls to its summary."""
    await pilot.press("f2")
    await settle(pilot)
    await pilot.press("enter")
    await wait_for(pilot, lambda: pilot.app.screen.report is not None, what="the eval report")
    await settle(pilot)
    if to_end:
        await pilot.press("end")
        await settle(pilot)


async def ask(pilot, question: str, *, enter: bool = False, typed: bool = False) -> None:
    """Ctrl+L, the question, Enter if asked for, then every answer in. The question arrives as
    one paste, as a terminal sends it (events.Paste to the app, routed to the focused question
    box): the box holds the whole question and the app asks it, as after the last key typed.
    `typed=True` presses it key by key (each prefix asked on the way, about 75 ms a key), for a
    test of what typing does: the prefixes recorded or not, keys racing answers or reindexes."""
    await pilot.press("ctrl+l")
    if typed:
        await pilot.press(*question)
    else:
        await paste(pilot, question)
    if enter:
        await pilot.press("enter")
    await settle(pilot)


async def paste(pilot, text: str) -> None:
    """`text` pasted where focus is, then the app idle: what pressing its keys leaves, less
    the answer to every prefix (the keys' own path is test_tui_typing's)."""
    pilot.app.post_message(events.Paste(text))
    await pilot.pause()


_SVG_TEXT = re.compile(r'<text class="[^"]*-r\d+" x="([\d.]+)" y="([\d.]+)"[^>]*>([^<]*)</text>')
# Rich's SVG geometry: a cell is 0.61 x 20 px wide, a line 1.22 x 20 px tall, text sits at +20.
_CELL_W, _LINE_H, _BASELINE = 20 * 0.61, 20 * 1.22, 20


def screen_text(app) -> str:
    """What the terminal shows, as plain text: read back from the app's public screenshot
    (the compositor's output, modal screens over the one under them), not from the DOM."""
    w, h = app.size
    rows = [[" "] * w for _ in range(h)]
    for x, y, text in _SVG_TEXT.findall(app.export_screenshot()):
        row = round((float(y) - _BASELINE) / _LINE_H)
        col = round(float(x) / _CELL_W)
        if not 0 <= row < h:
            continue
        for ch in html.unescape(text).replace("\xa0", " "):
            if col < w:
                rows[row][col] = ch
            col += max(1, cell_len(ch))
    return "\n".join("".join(r).rstrip() for r in rows)


def screen_segments_text(app) -> str:
    """Every character the screen would show, for control-character checks (same source)."""
    return screen_text(app)


def add_flawed_note(fleet: Path) -> Path:
    """A note `kb check` grades down (a thin label, a key that loses its meaning to stopwords),
    so the check screen has findings to show now that the demo itself is clean."""
    note = fleet / "zed" / "knowledge" / "thin-label.md"
    note.write_text(
        "# A thin label\n\n**Search for:** `which database`, `cache`\n\n"
        "**Exists to:** Show what kb check says about a label with two keys\n\nBody.\n"
    )
    return note


class Tmux:
    """A real terminal: one tmux server on its own socket, with one session called `room`.
    What only a terminal shows (what is drawn, not what is on the screen stack) is read with
    capture-pane."""

    def __init__(self, socket: str) -> None:
        self.socket = socket

    def __call__(self, *args: str, check: bool = True) -> str:
        # Not COLUMNS and LINES: pytest sets them (80x24), the server started here passes them
        # on, and Textual takes them over the terminal's size: every room would be 80x24.
        env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
        res = subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=20,
                             env=env)
        if check and res.returncode != 0:
            raise AssertionError(f"tmux {' '.join(args)}: {res.stderr.strip()}")
        return res.stdout

    def start_room(self, fleet: Path, home: Path, size: tuple[int, int], *extra: str) -> None:
        """`kbtui FLEET --no-watch` from this checkout in a `size` terminal, HOME in tmp."""
        env = {"TERM": "xterm-256color", "HOME": str(home)}
        command = f"cd {REPO} && exec {sys.executable} -m kbtui {fleet} --no-watch {' '.join(extra)}"
        self("-f", "/dev/null", "new-session", "-d", "-s", "room", "-x", str(size[0]), "-y", str(size[1]),
             *(x for k, v in env.items() for x in ("-e", f"{k}={v}")), command)
        self("set-option", "-t", "room", "remain-on-exit", "on")

    def keys(self, *keys: str) -> None:
        self("send-keys", "-t", "room", *keys)

    def screen(self) -> str:
        return self("capture-pane", "-p", "-t", "room", "-S", "-200")

    def visible(self) -> str:
        """Only the rows the terminal shows now (no scrollback)."""
        return self("capture-pane", "-p", "-t", "room")

    def wait_for(self, *texts: str, timeout: float = 30.0, gone: tuple[str, ...] = ()) -> str:
        """The visible screen once it shows every one of `texts` and none of `gone`."""
        deadline = time.monotonic() + timeout
        while True:
            screen = self.visible()
            assert "Traceback" not in screen, screen
            if all(t in screen for t in texts) and not any(g in screen for g in gone):
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"never saw {texts} (without {gone}) on screen:\n{screen}")
            time.sleep(0.1)
