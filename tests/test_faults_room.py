"""Faults, category 5: the reading room under stress, driven with Pilot on a tmp copy of the
demo. A burst of 200 file changes while questions are typed ends on the answer a fresh
`kb route` gives; a note deleted while it is open in the reader is said to be gone, and the
room keeps answering; nothing a note holds reaches the terminal raw."""

from __future__ import annotations

import asyncio
import json
import random
import threading
import time
from pathlib import Path

from _faults import RAW_CONTROL, kb, markdown_copy, projection, tree_hash
from conftest import copy_demo
from tui_support import ask, make_app, ready, screen_segments_text, screen_text, settle, wait_for


def run(coro):
    return asyncio.run(coro)


def _fresh_json(fleet: Path, question: str, scratch: Path, top: int) -> dict:
    copy = markdown_copy(fleet, scratch / f"fresh-{time.monotonic_ns()}")
    return json.loads(kb("route", question, str(copy), "--json", "--top", str(top)).stdout)


def _reindexing(app) -> bool:
    return any(w.group in ("reindex", "index") and w.is_running for w in app.workers)


async def _quiet(pilot, *, calm: float = 1.5, timeout: float = 60) -> None:
    """Wait until no re-index has run for `calm` seconds: the watcher's debounce (200 ms) has
    passed the last change and the re-index it started has finished."""
    app = pilot.app
    deadline = time.monotonic() + timeout
    calm_since = None
    while True:
        if _reindexing(app):
            calm_since = None
        elif calm_since is None:
            calm_since = time.monotonic()
        elif time.monotonic() - calm_since >= calm:
            return
        if time.monotonic() > deadline:
            raise AssertionError("the re-index never caught up")
        await asyncio.sleep(0.05)
        await pilot.pause()


def _churn(fleet: Path, n: int, seed: int, done: threading.Event) -> None:
    """n file changes across the fleet: adds, edits, same-name rewrites, renames, deletes, a
    half-written note and its repair; a few milliseconds apart, as a sync tool lands them."""
    rnd = random.Random(seed)
    burst = fleet / "zed" / "knowledge" / "burst"
    burst.mkdir(parents=True, exist_ok=True)
    deploy = fleet / "zed" / "knowledge" / "deploy-checklist.md"
    original = deploy.read_text(encoding="utf-8")
    try:
        for i in range(n):
            notes = sorted(burst.glob("*.md"))
            kind = rnd.choice(["add", "add", "edit", "edit", "rename", "delete", "deploy", "broken"])
            if kind == "add" or not notes:
                (burst / f"b{i}.md").write_text(
                    f"# Burst note {i}\n\nSearch for: burst token, lot{i} marker\n\nChurned text number {i}.\n",
                    encoding="utf-8",
                )
            elif kind == "edit":
                p = rnd.choice(notes)
                p.write_text(p.read_text(encoding="utf-8", errors="replace") + f"\nEdit {i}: cadence of the burst.\n")
            elif kind == "rename":
                p = rnd.choice(notes)
                p.rename(burst / f"r{i}.md")
            elif kind == "delete":
                rnd.choice(notes).unlink()
            elif kind == "deploy":  # the note the final question asks about, edited many times
                deploy.write_text(original.replace("Search for:", f"Search for: launch gate {i},", 1), encoding="utf-8")
            elif kind == "broken":
                (burst / "half.md").write_bytes(b"# Half\n\n\xff\xfe written")
            time.sleep(rnd.uniform(0.001, 0.012))
        (burst / "half.md").write_text("# Half, repaired\n\nSearch for: repaired half\n", encoding="utf-8")
        deploy.write_text(original.replace("Search for:", "Search for: launch gate final,", 1), encoding="utf-8")
    finally:
        done.set()


def test_a_burst_of_200_file_changes_while_questions_are_typed(tmp_path):
    async def go():
        fleet = copy_demo(tmp_path / "demo")
        app = make_app(fleet, watch=True)
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot)
            done = threading.Event()
            churner = threading.Thread(target=_churn, args=(fleet, 200, 9, done), daemon=True)
            churner.start()
            typed = 0
            questions = ["deploy producao", "burst token", "how much protein per meal", "launch gate", "lot77 marker"]
            while not done.is_set():
                q = questions[typed % len(questions)]
                await pilot.press("ctrl+l")
                await pilot.press(*q)  # as-you-type: every prefix is a question in flight
                typed += 1
                await pilot.pause(0.01)
            churner.join(timeout=60)
            assert app.is_running and typed >= 1
            await _quiet(pilot)
            await settle(pilot)
            for final in ("launch gate final", "burst token", "repaired half", "deploy producao"):
                await ask(pilot, final)
                await wait_for(pilot, lambda: app.main.answer is not None and app.main.answer.question == final,
                               timeout=20, what=f"the answer to {final!r}")
                shown = projection(json.loads(json.dumps(app.main.answer.to_json())))
                truth = projection(_fresh_json(fleet, final, tmp_path, app.top))
                assert shown == truth, final
            assert app.main.answer.verdict == "hit" and app.is_running
            text = screen_text(app)
            assert "Traceback" not in text

    run(go())


def _reader_source(app) -> str:
    try:
        return app.screen.query_one("#reader-body").source or ""
    except Exception:  # not the reader on screen
        return ""


def test_a_note_deleted_while_open_in_the_reader(tmp_path):
    async def go():
        fleet = copy_demo(tmp_path / "demo")
        note = fleet / "zed" / "knowledge" / "deploy-checklist.md"
        app = make_app(fleet, watch=True)
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot)
            await ask(pilot, "quem decide se um deploy pode ir pra producao")
            answer = app.main.answer
            assert answer.keyword_top == "zed/knowledge/deploy-checklist.md"
            app.open_reader("zed", "knowledge/deploy-checklist.md", answer)
            await settle(pilot)
            await wait_for(pilot, lambda: "Deploy readiness" in _reader_source(app), what="the note in the reader")
            before = tree_hash(fleet)

            note.unlink()  # gone while on screen
            await _quiet(pilot)
            await wait_for(pilot, lambda: app.main.answer is not None
                           and app.main.answer.keyword_top != "zed/knowledge/deploy-checklist.md",
                           timeout=30, what="the re-asked answer without the deleted note")
            assert app.is_running
            assert "Deploy readiness" in _reader_source(app)  # the reader keeps what it read
            assert "zed" in screen_text(app) and "Traceback" not in screen_text(app)

            await pilot.press("escape")
            await settle(pilot)
            ids = [r.id for r in app.main.answer.results]
            assert "zed/knowledge/deploy-checklist.md" not in ids

            # Opening it again from the old answer: one line saying it cannot be read.
            app.open_reader("zed", "knowledge/deploy-checklist.md", answer)
            await settle(pilot)
            await wait_for(pilot, lambda: "cannot read knowledge/deploy-checklist.md" in screen_text(app),
                           timeout=10, what="the reader to say the note is gone")
            assert "No such file or directory" in screen_text(app)
            await pilot.press("escape")
            await settle(pilot)
            await ask(pilot, "how much protein per meal")
            assert app.main.answer.verdict == "hit"
            del before["zed/knowledge/deploy-checklist.md"]
            assert tree_hash(fleet) == before  # the room read, and wrote nothing else

    run(go())


def test_escapes_c1_controls_and_bidi_overrides_never_reach_the_terminal_from_the_room(tmp_path):
    async def go():
        fleet = copy_demo(tmp_path / "demo")
        (fleet / "zed" / "knowledge" / "hostile.md").write_text(
            "# Hostile \x1b[31mred\x1b[0m \x9b2J c1 \u202eevil\u202c title\n\n"
            "**Search for:** `hostile title`, `escapology`\n\n"
            "**Exists to:** carry \x1b]0;pwned\x07 an OSC, a \x9b31m CSI and \u2066isolates\u2069\n\n"
            "## Section \x08 with \x7f\n\nThe hostile body \x1b[2J\x1b[H clears, \u202d overrides \u202c, "
            "and rings \x07.\n",
            encoding="utf-8",
        )
        app = make_app(fleet)
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot)
            await ask(pilot, "hostile title escapology", enter=True)
            assert app.main.answer.keyword_top == "zed/knowledge/hostile.md"
            seen = {"main": screen_segments_text(app)}
            app.open_reader("zed", "knowledge/hostile.md", app.main.answer)
            await settle(pilot)
            await wait_for(pilot, lambda: "hostile body" in _reader_source(app), what="the reader")
            await settle(pilot)
            seen["reader"] = screen_segments_text(app)
            for where, text in seen.items():
                bad = sorted({f"U+{ord(c):04X}" for c in RAW_CONTROL.findall(text)})
                assert not bad, f"{where}: raw control characters reach the terminal: {bad}"

    run(go())
