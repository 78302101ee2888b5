"""`python3 -m kbtools.room_bench [PATH]`: the reading room's speed, printed.

- first paint: from launching a fresh Python process to the first frame the app displays
  (interpreter start, imports, Memory, compose and render included), and to the first
  answer on screen when a question is given on the command line;
- keystroke to repainted answer: each key of a few questions typed one at a time, timed
  from the key press to the first frame displayed that carries the answer to the question
  as it now reads; median and p95;
- bytes per keystroke: what the frames a key causes would write to a terminal (every
  frame's escape sequences rendered for a truecolor terminal, from the key until the screen
  has been quiet for `SETTLE_S`), median and p95; and the time to that last frame
  ("settled"), which counts the follow-up frames (a table measuring its rows, a scrollbar
  appearing) that the first answer frame may not yet hold;
- the reader: from Enter on a reading-list row to the first frame that shows the note (a
  20 KB note written into the copy), median and p95.

Runs headless (Textual's test driver) on a temporary copy of the fleet, so the index build
is part of the first-paint figure and nothing is written into the fleet. The Memory is made
as `kbtui` makes it (resident: the text leg held in memory), and keys and opens are timed
once the room has settled (`KbApp.settled`: the text leg built and the heap frozen, seconds
at 60,000 chunks; "settling" prints how long that took). Targets: first
paint at most 1 s; keystroke median at most 33 ms (two frames at 60 Hz), p95 at most 50 ms;
a 20 KB note painted within 200 ms. `--runs 0` skips the first-paint runs (a 60,000-chunk
haystack indexes from nothing in each of them).

Frames are timed by overriding the app's frame output (`App._display`): there is no public
hook for "a frame went out", and this is a measuring tool, not the app or its tests.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

SETTLE_S = 0.08  # no frame for this long after a key: the screen has settled

QUESTIONS = (
    "quem decide se um deploy pode ir pra producao",
    "how much protein per meal",
    "what makes a review comment blocking",
    "how do I roll back",
)


def _bench_app_class():
    from kbtui.app import KbApp

    class BenchApp(KbApp):
        """KbApp that timestamps every frame it displays, with the answer it showed."""

        def __init__(self, *a, **kw) -> None:
            super().__init__(*a, **kw)
            self.frames: list[tuple[float, int]] = []
            self.frame_bytes: list[tuple[float, int]] = []  # when, bytes a terminal would receive
            from rich.console import Console

            self._wire = Console(file=io.StringIO(), color_system="truecolor", force_terminal=True)
            self.painted_at: dict[int, float] = {}  # question id -> when its answer was applied
            real_paint = self.main._paint

            def paint(answer, qid):
                real_paint(answer, qid)
                self.painted_at[qid] = time.perf_counter()
                self.woken.set()

            self.main._paint = paint
            self.screen_frames: list[tuple[float, object]] = []
            self.first_frame: float | None = None
            self.first_answer: float | None = None
            # Set on every frame and paint: the bench waits on it rather than polling the
            # loop, which would take the GIL from the ask's thread every half millisecond.
            self.woken = asyncio.Event()

        def _display(self, screen, renderable) -> None:
            super()._display(screen, renderable)
            if renderable is None or self._batch_count:
                return
            # What the terminal driver would write: rendering it is part of the frame's cost.
            render = getattr(renderable, "render_segments", None)
            size = len(render(self._wire).encode()) if render is not None else 0
            now = time.perf_counter()
            self.frame_bytes.append((now, size))
            if self.first_frame is None:
                self.first_frame = now
            if self.first_answer is None and self.main.answer is not None:
                self.first_answer = now
            self.frames.append((now, self.main.answer_qid))
            self.screen_frames.append((now, screen))
            self.woken.set()

    return BenchApp


def _copy(fleet: Path, into: Path) -> Path:
    from engine.notes.fleet import copy_notes  # here, like every engine import: a child's start is measured

    dst = into / fleet.name
    return copy_notes(fleet, dst)


def child_first_paint(fleet: str, question: str) -> None:
    """In a fresh process: time to first frame and to first answer, from process launch."""
    launched = float(os.environ["KBTUI_BENCH_LAUNCHED"])
    from engine import Memory

    BenchApp = _bench_app_class()

    async def go():
        app = BenchApp(Memory(fleet, resident=True), question=question, watch=False, stable=True)
        t_wall = time.time()
        t_perf = time.perf_counter()
        async with app.run_test(size=(120, 40)) as pilot:
            deadline = time.perf_counter() + 30
            while app.first_answer is None and time.perf_counter() < deadline:
                await asyncio.sleep(0.001)
            await pilot.pause()
        # perf_counter stamps -> wall clock, relative to the parent's launch time
        to_wall = lambda p: t_wall + (p - t_perf)  # noqa: E731
        print(json.dumps({
            "first_paint_s": to_wall(app.first_frame) - launched,
            "first_answer_s": to_wall(app.first_answer) - launched if app.first_answer else None,
        }))

    asyncio.run(go())


SETTLE_TIMES: list[float] = []  # fleet loaded -> room settled, per app the bench ran


async def _settled(app) -> None:
    """Wait for the room to be loaded and settled (the text leg held in memory, the heap
    frozen): keys are timed in the state a person types in after the first seconds. At
    60,000 chunks settling takes seconds; keys typed before it compete with the build."""
    while app.loaded is None:
        await asyncio.sleep(0.01)
    t = time.perf_counter()
    deadline = t + 180
    while not app.settled and time.perf_counter() < deadline:
        await asyncio.sleep(0.05)
    SETTLE_TIMES.append(time.perf_counter() - t)


@dataclass
class Keys:
    answer: list[float]  # key to the first frame showing the answer, seconds
    settled: list[float]  # key to the last frame it caused
    bytes: list[int]  # bytes those frames would write


def keystrokes(fleet: Path, questions=QUESTIONS) -> Keys:
    from engine import Memory

    BenchApp = _bench_app_class()
    out: list[float] = []
    settled: list[float] = []
    sent: list[int] = []

    async def go():
        app = BenchApp(Memory(fleet, resident=True), watch=False, stable=True)
        async with app.run_test(size=(120, 40)) as pilot:
            await _settled(app)
            await pilot.pause()
            main = app.main
            for q in questions:
                await pilot.press("ctrl+l")
                await pilot.pause()
                for ch in q:
                    t0 = time.perf_counter()
                    await pilot.press(ch if ch != " " else "space")
                    want = main._qid  # the question as it reads after this key
                    deadline = t0 + 5
                    while time.perf_counter() < deadline:
                        hit = [t for t, qid in app.frames if t >= t0 and qid == want]
                        if hit:
                            out.append(hit[0] - t0)
                            break
                        painted = app.painted_at.get(want)
                        if painted is not None and time.perf_counter() - painted > 0.1:
                            # The answer changed nothing on screen (the panes skip a repaint of
                            # what they already show): the frame that echoed the key showed it.
                            echoed = [t for t, _q in app.frames if t >= t0]
                            out.append(max([painted, *echoed[:1]]) - t0)
                            break
                        # Times are stamped where frames and paints happen: waking late here
                        # changes no figure.
                        app.woken.clear()
                        try:
                            await asyncio.wait_for(app.woken.wait(), timeout=0.02)
                        except asyncio.TimeoutError:
                            pass
                    # Each key from a settled screen, as a person's next key would usually be.
                    while True:
                        last = max([t0, *(t for t, _n in app.frame_bytes if t >= t0)])
                        if time.perf_counter() - last >= SETTLE_S:
                            break
                        await asyncio.sleep(0.005)
                    settled.append(last - t0)
                    sent.append(sum(n for t, n in app.frame_bytes if t >= t0))

    asyncio.run(go())
    return Keys(out, settled, sent)


def long_note() -> str:
    """About 20 KB of markdown (headings, paragraphs, lists), its best passage past the middle."""
    parts = ["# A long note\n\n**Search for:** `benchlongnote`\n\n**Exists to:** Be opened by the bench.\n\n"]
    i = 0
    while sum(map(len, parts)) < 20_000:
        i += 1
        word = "zebrafish" if i == 60 else "minnow"
        parts.append(f"## Section {i}\n\nParagraph {i} about the {word} of section {i}, long enough to wrap "
                     "across a narrow terminal at least once, and then some more words to fill it.\n\n"
                     "- one\n- two `code`\n- three\n\n")
    return "".join(parts)


def reader_paints(fleet: Path, opens: int) -> list[float]:
    """Enter on the reading list's top row to the first frame that shows the 20 KB note."""
    from engine import Memory

    base = next(p for p in sorted(fleet.iterdir()) if p.is_dir() and not p.name.startswith("."))
    (base / "bench-long-note.md").write_text(long_note())
    BenchApp = _bench_app_class()
    out: list[float] = []

    async def go():
        app = BenchApp(Memory(fleet, resident=True), watch=False, stable=True)
        async with app.run_test(size=(120, 40)) as pilot:
            await _settled(app)
            await pilot.press(*"benchlongnote zebrafish")
            while app.main.answer is None or "zebrafish" not in app.main.answer.question:
                await asyncio.sleep(0.005)
            for _ in range(opens):
                app.main.focus_pane("reading")
                await pilot.pause()
                t0 = time.perf_counter()
                await pilot.press("enter")
                while True:
                    screen = app.screen
                    shown = getattr(screen, "window_start", None) is not None
                    hit = [t for t, s in app.screen_frames if t >= t0 and s is screen] if shown else []
                    if hit and hit[-1] >= screen.shown_at:
                        out.append(next(t for t in hit if t >= screen.shown_at) - t0)
                        break
                    app.woken.clear()
                    try:
                        await asyncio.wait_for(app.woken.wait(), timeout=0.02)
                    except asyncio.TimeoutError:
                        pass
                while getattr(app.screen, "window_start", None) != 0:  # the whole note, before leaving
                    await asyncio.sleep(0.01)
                await pilot.press("escape")
                # Removing a reader of thousands of widgets takes the loop a while: each open is
                # timed from a settled room, as a person would open the next note.
                await pilot.pause(0.5)

    asyncio.run(go())
    return out


def _questions(path: str | None) -> tuple[str, ...]:
    if not path:
        return QUESTIONS
    rows = [ln.split("\t")[0] for ln in Path(path).read_text().splitlines() if ln.strip() and not ln.startswith("#")]
    return tuple(rows[:4])


def _p95(xs: list[float]) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(0.95 * (len(s) - 1))))]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python3 -m kbtools.room_bench")
    p.add_argument("path", nargs="?", default=str(Path(__file__).resolve().parent.parent / "examples" / "demo"))
    p.add_argument("--runs", type=int, default=5, help="first-paint runs (fresh processes)")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--question", default=QUESTIONS[1], help=argparse.SUPPRESS)
    p.add_argument("--questions", help="a questions.tsv (the haystack's) to type instead of the demo's four")
    p.add_argument("--reader-opens", type=int, default=10, help="times the 20 KB note is opened")
    args = p.parse_args(argv)
    if args.child:
        child_first_paint(args.path, args.question)
        return 0
    fleet = Path(args.path).resolve()
    load_before = os.getloadavg()
    paints, answers = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.runs):
            # A fresh copy each run: the first run of a new user indexes from nothing.
            run_dir = Path(tmp) / f"run{i}"
            run_dir.mkdir()
            copy = _copy(fleet, run_dir)
            env = dict(os.environ, KBTUI_BENCH_LAUNCHED=repr(time.time()))
            res = subprocess.run(
                [sys.executable, "-m", "kbtools.room_bench", str(copy), "--child"], env=env, capture_output=True, text=True,
                timeout=120,
            )
            if res.returncode != 0:
                print(res.stderr, file=sys.stderr)
                return 1
            data = json.loads(res.stdout.strip().splitlines()[-1])
            paints.append(data["first_paint_s"])
            answers.append(data["first_answer_s"])
        (Path(tmp) / "keys").mkdir()
        keys = keystrokes(_copy(fleet, Path(tmp) / "keys"), _questions(args.questions))
        reads = []
        if args.reader_opens:
            (Path(tmp) / "reader").mkdir()
            reads = reader_paints(_copy(fleet, Path(tmp) / "reader"), args.reader_opens)
    load_after = os.getloadavg()
    print(f"fleet: {fleet}")
    print(f"load average (1, 5, 15 min): before {' '.join(f'{x:.2f}' for x in load_before)}, "
          f"after {' '.join(f'{x:.2f}' for x in load_after)}, on {os.cpu_count()} cores")
    if paints:
        print(f"first paint   median {statistics.median(paints) * 1000:6.0f} ms   max {max(paints) * 1000:6.0f} ms"
              f"   ({args.runs} fresh processes, interpreter start included; target <= 1000 ms)")
        print(f"first answer  median {statistics.median(answers) * 1000:6.0f} ms   max {max(answers) * 1000:6.0f} ms"
              f"   (index built from nothing, then '{args.question}' asked and painted)")
    ms = lambda xs: f"median {statistics.median(xs) * 1000:6.1f} ms   p95 {_p95(xs) * 1000:6.1f} ms"  # noqa: E731
    print(f"keystroke     {ms(keys.answer)}   ({len(keys.answer)} keys, key press to the frame showing the answer;"
          " target median <= 33, p95 <= 50 ms)")
    print(f"settled       {ms(keys.settled)}   (key press to the last frame it caused)")
    print(f"bytes per key median {statistics.median(keys.bytes):6.0f}      p95 {_p95(keys.bytes):6.0f}"
          "      (escape sequences a truecolor terminal would receive, all frames of a key)")
    if SETTLE_TIMES:
        print(f"settling     {max(SETTLE_TIMES):6.1f} s at most   (fleet loaded -> text leg in memory and heap frozen;"
              " keys and opens are timed after it)")
    if reads:
        print(f"reader        median {statistics.median(reads) * 1000:6.1f} ms   p95 {_p95(reads) * 1000:6.1f} ms"
              f"   ({len(reads)} opens of a 20 KB note, Enter to the first frame showing it; target <= 200 ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
