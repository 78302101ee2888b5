"""The reading room on a plain folder with no labels: no pane claims arithmetic about labels
that do not exist ("top 0.00 < floor 0.00"), words it never read, or "one entry" at none."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import pytest_textual_snapshot as pts

from tui_support import REPO, ask, make_app, paste, ready, screen_text, settle


def plain_folder(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "widgets.md").write_text("# Widgets\n\nHow to make a widget scroll: set overflow to auto.\n")
    (root / "testing.md").write_text("# Testing\n\nHow to test an app with the pilot.\n")
    return root


def test_zero_entries_make_no_false_claims(tmp_path):
    async def go():
        app = make_app(plain_folder(tmp_path))
        async with app.run_test(size=(160, 50)) as pilot:
            await ready(pilot)
            await ask(pilot, "how do I make a widget scroll")
            assert app.main.answer.indexed.entries == 0
            text = screen_text(app)
            assert "floor 0.00" not in text and "top 0.00" not in text
            assert "no note has a label yet" in text  # the verdict bar says why there is no verdict
            assert "holds these words" not in text  # widgets.md holds them: it was never read
            assert "one entry" not in text
            assert "kb label" in text
            assert "widgets.md" in text  # the full-text reading list is still there
    asyncio.run(go())


class RepoSnapshots(pts.SVGImageExtension):
    @classmethod
    def dirname(cls, *, test_location) -> str:
        return str(REPO / "snapshots" / test_location.basename)


@pytest.fixture(autouse=True)
def _snapshots_in_repo(monkeypatch):
    monkeypatch.setattr(pts, "SVGImageExtension", RepoSnapshots)


def test_first_run_snapshot(snap_compare, tmp_path):
    async def before(pilot):
        await ready(pilot)
        await paste(pilot, "how do I make a widget scroll")  # the question whole: the picture is of its answer
        await settle(pilot)

    assert snap_compare(make_app(plain_folder(tmp_path)), terminal_size=(120, 40), run_before=before)


def test_labels_screen_drops_a_key_shows_the_effect_and_writes_only_after_it(tmp_path, monkeypatch):
    # F8's x once showed nothing for 8 s on 616 notes: each stage of the effect is shown as it goes.
    from kbtui.labels_screen import LabelsScreen

    stages: list[str] = []
    shown = LabelsScreen.on_effect_progress

    def seen(self, message):
        stages.append(message.stage)
        shown(self, message)

    monkeypatch.setattr(LabelsScreen, "on_effect_progress", seen)

    async def go():
        root = plain_folder(tmp_path)
        (root / "testing.md").write_text("# Testing\n\nHow to test an app with the pilot.\n\n## Snapshot tests\n\n"
                                         "Snapshot tests compare screens. Snapshot tests need pytest.\n")
        original = (root / "testing.md").read_bytes()
        app = make_app(root)
        async with app.run_test(size=(140, 45)) as pilot:
            await ready(pilot)
            await pilot.press("f8")
            await settle(pilot)
            screen = app.screen
            assert type(screen).__name__ == "LabelsScreen"
            ids = [np.id for np in screen.proposals]
            assert ids == ["notes/testing.md", "notes/widgets.md"]
            first_key = screen.keys["notes/testing.md"][0][0]
            screen.query_one("#labels-keys").focus()
            await pilot.press("space")  # drop the first key
            await pilot.press("w")  # refused: the effect of these keys was not shown
            await settle(pilot)
            assert (root / "testing.md").read_bytes() == original
            assert "press x first" in screen_text(app)
            await pilot.press("x")
            await settle(pilot)
            assert "miss log:" in screen_text(app)
            assert "copying the notes" in stages and "indexing the copy" in stages, stages
            assert "where the text leg disagrees" in screen_text(app)
            await pilot.press("w")
            await settle(pilot)
            new = (root / "testing.md").read_bytes()
            kept = [k for k, _, keep in screen.keys["notes/testing.md"] if keep]
            assert first_key not in kept
            head = b"# Testing\n"
            assert new.startswith(head + b"\nSearch for: " + ", ".join(kept).encode() + b"\n")
            assert new.endswith(original[len(head):])  # the rest of the note, byte for byte
            assert (root / "widgets.md").read_bytes().count(b"Search for") == 0
    asyncio.run(go())


def test_misses_screen_applies_the_alias_line_after_showing_what_it_turns_into_hits(tmp_path):
    from conftest import copy_demo

    async def go():
        fleet = copy_demo(tmp_path / "demo")
        (fleet / "kb-misses.txt").write_text(
            "# kb-misses.txt\n3\t2026-08-30\t2026-09-01\thow do I roll back\n    looked like: (nothing)\n")
        aliases = fleet / "kb-aliases.txt"
        aliases.write_text("# aliases\nproducao = production")  # no final newline: one is added, nothing changed
        before = aliases.read_bytes()
        app = make_app(fleet)
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot)
            await pilot.press("f4")
            await settle(pilot)
            review = app.screen.entries[0]
            assert review.proposal is not None
            line = review.proposal.line
            await pilot.press("a")
            await settle(pilot)
            text = screen_text(app)
            assert "turns 1 of 1 logged question(s) into hits" in text
            assert aliases.read_bytes() == before  # shown, not written
            await pilot.press("a")
            await settle(pilot)
            after = aliases.read_bytes()
            assert after == before + b"\n" + line.encode() + b"\n"
            assert "wrote" in screen_text(app)
    asyncio.run(go())


def test_misses_screen_writes_an_alias_only_while_its_effect_is_on_screen(tmp_path):
    """Moving off a row and back repaints the detail: the next `a` shows the effect again
    rather than writing a line whose effect is no longer in front of the reader."""
    from conftest import copy_demo

    async def go():
        fleet = copy_demo(tmp_path / "demo")
        (fleet / "kb-misses.txt").write_text(
            "# kb-misses.txt\n3\t2026-08-30\t2026-09-01\thow do I roll back\n    looked like: (nothing)\n"
            "1\t2026-08-30\t2026-08-30\txyzzy plugh\n    looked like: (nothing)\n")
        aliases = fleet / "kb-aliases.txt"
        aliases.write_text("# aliases\nproducao = production\n")
        before = aliases.read_bytes()
        app = make_app(fleet)
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot)
            await pilot.press("f4")
            await settle(pilot)
            assert len(app.screen.entries) == 2 and app.screen.entries[0].proposal is not None
            await pilot.press("a")
            await settle(pilot)
            assert "turns 1 of 2 logged question(s) into hits" in screen_text(app)
            await pilot.press("down")
            await settle(pilot)
            await pilot.press("up")
            await settle(pilot)
            await pilot.press("a")  # the effect is shown again, nothing written
            await settle(pilot)
            assert aliases.read_bytes() == before
            assert "turns 1 of 2 logged question(s) into hits" in screen_text(app)
            await pilot.press("a")  # now it is on screen: written
            await settle(pilot)
            assert aliases.read_bytes() != before and "wrote" in screen_text(app)
    asyncio.run(go())


def test_misses_screen_writes_a_logged_question_as_a_key_only_on_the_note_a_person_picks(tmp_path):
    from conftest import copy_demo

    from engine.notes.note import parse_note

    async def go():
        fleet = copy_demo(tmp_path / "demo")
        (fleet / "kb-misses.txt").write_text(
            "# kb-misses.txt\n3\t2026-08-30\t2026-09-01\thow do I roll back a release\n    looked like: (nothing)\n")
        before = {p: p.read_bytes() for p in fleet.rglob("*.md")}
        app = make_app(fleet)
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot)
            await pilot.press("f4")
            await settle(pilot)
            await pilot.press("p")
            await settle(pilot)
            question, rows = app.screen._picking
            assert len(rows) >= 2 and "type the number of the note" in screen_text(app)
            assert {p: p.read_bytes() for p in fleet.rglob("*.md")} == before  # shown, nothing written
            await pilot.press("2")  # the person picks the second row, not the text leg's first
            await settle(pilot)
            assert "as a key of" in screen_text(app)
        base, _, rel = rows[1].partition("/")
        picked = next(p for p in fleet.rglob("*.md") if p.relative_to(fleet).as_posix().endswith(f"{base}/{rel}")
                      or p.relative_to(fleet).as_posix() == rel)
        assert "roll back release" in parse_note(rel, picked.read_text()).keys
        changed = [p for p in before if p.read_bytes() != before[p]]
        assert changed == [picked]
    asyncio.run(go())
