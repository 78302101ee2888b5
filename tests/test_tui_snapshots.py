"""Snapshots of the reading room's screens and states, each at 80x24 and 120x40.

The SVGs live in the repository's top-level snapshots/test_tui_snapshots/ (not syrupy's
__snapshots__ beside this file). Each app runs on a tmp copy of the demo in stable mode (no timings, no SPEED
block), workers are awaited before the picture and the cursor does not blink, so a picture
changes only when the screen does. `pytest --snapshot-update` rewrites them: look first.
"""

from __future__ import annotations

import pytest
import pytest_textual_snapshot as pts

from conftest import copy_demo
from tui_support import REPO, add_flawed_note, make_app, paste, ready, run_eval, screen_text, settle, wait_for

SIZES = [(80, 24), (120, 40)]
MISS_LOG = (
    "# kb-misses.txt\n"
    "3\t2026-08-30\t2026-09-01\thow do I roll back\n"
    "    looked like: backup do banco, database backup, parar o scroll, stop the scroll\n"
    "1\t2026-09-02\t2026-09-02\tme conta uma piada\n"
    "    looked like: (nothing)\n"
)


class RepoSnapshots(pts.SVGImageExtension):
    @classmethod
    def dirname(cls, *, test_location) -> str:
        # snapshots/<test module>/: syrupy relates a file to its test by the folder's name,
        # which is also how it finds snapshots no test uses any more.
        return str(REPO / "snapshots" / test_location.basename)


@pytest.fixture(autouse=True)
def _snapshots_in_repo(monkeypatch):
    # snap_compare looks the extension up by this name when it is called.
    monkeypatch.setattr(pts, "SVGImageExtension", RepoSnapshots)


async def _type(pilot, question: str, *, enter: bool = False) -> None:
    # The question pasted into the box focus starts in (tui_support.paste): the picture is of
    # the answer, the box and its cursor after the whole question, as after its last key.
    await ready(pilot)
    await paste(pilot, question)
    if enter:
        await pilot.press("enter")
    await settle(pilot)


def _ids(size):
    return f"{size[0]}x{size[1]}"


@pytest.mark.parametrize("size", SIZES, ids=_ids)
def test_hit(snap_compare, tmp_path, size):
    app = make_app(copy_demo(tmp_path / "demo"))
    assert snap_compare(app, terminal_size=size,
                        run_before=lambda p: _type(p, "quem decide se um deploy pode ir pra producao"))


@pytest.mark.parametrize("size", SIZES, ids=_ids)
def test_guess(snap_compare, tmp_path, size):
    app = make_app(copy_demo(tmp_path / "demo"))

    async def before(pilot):
        await _type(pilot, "publishing rhythm")
        if size == (80, 24):
            await pilot.press("f6", "f6", "f6")  # question -> reading -> keywords -> the gate: why a guess
            await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=before)


@pytest.mark.parametrize("size", SIZES, ids=_ids)
def test_nothing_with_suggestions(snap_compare, tmp_path, size):
    app = make_app(copy_demo(tmp_path / "demo"))
    assert snap_compare(app, terminal_size=size, run_before=lambda p: _type(p, "how do I roll back", enter=True))


@pytest.mark.parametrize("size", SIZES, ids=_ids)
def test_reader(snap_compare, tmp_path, size):
    app = make_app(copy_demo(tmp_path / "demo"))

    async def before(pilot):
        await _type(pilot, "quem decide se um deploy pode ir pra producao", enter=True)
        await pilot.press("enter")
        await settle(pilot)
        await wait_for(pilot, lambda: type(pilot.app.screen).__name__ == "ReaderScreen" and pilot.app.screen.best_line)
        await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=before)


@pytest.mark.parametrize("size", SIZES, ids=_ids)
def test_eval_after_run(snap_compare, tmp_path, size):
    app = make_app(copy_demo(tmp_path / "demo"))

    async def before(pilot):
        await ready(pilot)
        await run_eval(pilot)

    assert snap_compare(app, terminal_size=size, run_before=before)


@pytest.mark.parametrize("size", SIZES, ids=_ids)
def test_check(snap_compare, tmp_path, size):
    fleet = copy_demo(tmp_path / "demo")
    add_flawed_note(fleet)
    app = make_app(fleet)

    async def before(pilot):
        await ready(pilot)
        await pilot.press("f3")
        await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=before)


@pytest.mark.parametrize("size", SIZES, ids=_ids)
def test_misses(snap_compare, tmp_path, size):
    fleet = copy_demo(tmp_path / "demo")
    (fleet / "kb-misses.txt").write_text(MISS_LOG)  # fixed dates: the picture must not age
    app = make_app(fleet)

    async def before(pilot):
        await ready(pilot)
        await pilot.press("f4")
        await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=before)


@pytest.mark.parametrize("size", SIZES, ids=_ids)
def test_roster(snap_compare, tmp_path, size):
    app = make_app(copy_demo(tmp_path / "demo"))

    async def before(pilot):
        await ready(pilot)
        await pilot.press("f5")
        await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=before)


@pytest.mark.parametrize("size", SIZES, ids=_ids)
def test_help(snap_compare, tmp_path, size):
    """F1 from the main screen: the keys everywhere first, and the footer naming F1."""
    app = make_app(copy_demo(tmp_path / "demo"))

    async def before(pilot):
        await ready(pilot)
        await pilot.press("f1")
        await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=before)


def test_help_glossary(snap_compare, tmp_path):
    """The end of the help at 80x24: the seed's words in plain ones."""
    app = make_app(copy_demo(tmp_path / "demo"))

    async def before(pilot):
        await ready(pilot)
        await pilot.press("f1")
        await settle(pilot)
        await pilot.press("end")
        await settle(pilot)

    assert snap_compare(app, terminal_size=(80, 24), run_before=before)


def test_eval_scrolled_to_gate_and_speed(snap_compare, tmp_path):
    """At 80x24 the summary is below the table: End takes the screen to GATE (drawn) and SPEED."""
    app = make_app(copy_demo(tmp_path / "demo"))

    async def before(pilot):
        await ready(pilot)
        await run_eval(pilot, to_end=True)

    assert snap_compare(app, terminal_size=(80, 24), run_before=before)


def _unlabelled_fleet(tmp_path):
    root = tmp_path / "notes"
    root.mkdir()
    (root / "widgets.md").write_text("# Widgets\n\nHow to make a widget scroll: set overflow to auto.\n")
    (root / "testing.md").write_text("# Testing\n\nHow to test an app with the pilot.\n\n## Snapshot tests\n\n"
                                     "Snapshot tests compare screens. Snapshot tests need pytest.\n")
    return root


@pytest.mark.parametrize("size", SIZES, ids=_ids)
def test_labels(snap_compare, tmp_path, size):
    """F8 with the effect of the first note's proposed keys shown (x): the note list, its keys
    and the effect all on screen at 80x24 too."""
    app = make_app(_unlabelled_fleet(tmp_path))

    async def before(pilot):
        await ready(pilot)
        await pilot.press("f8")
        await wait_for(pilot, lambda: bool(getattr(pilot.app.screen, "proposals", None)), what="the proposals")
        await settle(pilot)
        await pilot.press("x")
        await wait_for(pilot, lambda: "miss log:" in screen_text(pilot.app), what="the effect")
        await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=before)
