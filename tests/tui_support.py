"""Shared by the reading room's tests: a real demo fleet copied into tmp, the real app on it.

Every test runs against a copy, so a recorded miss or an edited note never lands in the
repository's examples/demo.
"""

from __future__ import annotations

import asyncio
import io
import time
from pathlib import Path

from rich.console import Console
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


async def ask(pilot, question: str, *, enter: bool = False) -> None:
    await pilot.press("ctrl+l")
    await pilot.press(*question)
    if enter:
        await pilot.press("enter")
    await settle(pilot)


def screen_text(app) -> str:
    """What the terminal shows, as plain text (the compositor's output, not the DOM)."""
    w, h = app.size
    console = Console(width=w, height=h, file=io.StringIO(), force_terminal=True, color_system="truecolor",
                      record=True, legacy_windows=False, safe_box=False)
    console.print(app.screen._compositor.render_update(full=True, screen_stack=app._background_screens))
    return console.export_text()


def screen_segments_text(app) -> str:
    """Every character the compositor would send, styles dropped; for control-char checks."""
    strips = app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
    w, h = app.size
    console = Console(width=w, height=h, file=io.StringIO(), force_terminal=True, record=True)
    console.print(strips)
    return console.export_text(styles=False)


def add_flawed_note(fleet: Path) -> Path:
    """A note `kb check` grades down (a thin label, a key that loses its meaning to stopwords),
    so the check screen has findings to show now that the demo itself is clean."""
    note = fleet / "zed" / "knowledge" / "thin-label.md"
    note.write_text(
        "# A thin label\n\n**Search for:** `which database`, `cache`\n\n"
        "**Exists to:** Show what kb check says about a label with two keys\n\nBody.\n"
    )
    return note
