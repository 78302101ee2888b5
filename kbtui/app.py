"""`kbtui PATH`: the reading room, a Textual app over engine.Memory.

The app owns the one Memory, the question history and the options every ask is made
with; screens render answers and never call the engine on the UI thread.
"""

from __future__ import annotations

import argparse
import threading
import shlex
import sys
from pathlib import Path

from textual import work
from textual.app import App
from textual.binding import Binding
from textual.widgets import Input
from textual.worker import Worker, WorkerState

from .screens import screen_class
from .commands import KbCommands
from .history import History
from .idle_gc import IdleCollector
from .main_screen import MainScreen
from .messages import FleetChanged, FleetLoaded, RoomSettled
from .watch import describe_changes, is_watched

from engine.notes.notefiles import on_base
from engine.stages.purpose.weights import PURPOSE_NAMES

# F7 cycles the reading list's order: plain fusion, then each purpose the engine declares.
PURPOSE_CYCLE = ("off", *PURPOSE_NAMES)
DEFAULT_TOP = 8  # rows of the reading list: a screenful at 120x40 with two lines each


class KbApp(App):
    CSS_PATH = Path(__file__).parent / "kbtui.tcss"  # absolute: a subclass elsewhere (the bench) finds it
    TITLE = "kbtui"
    # Width/height classes drive the layout: below `-wide` or `-tall` the panes become tabs.
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (60, "-normal"), (110, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (32, "-tall")]
    # F-keys, not ctrl+letters: the question box owns ctrl+a/e/k/u/w for editing.
    # Only F1 in the footer: at 80 columns it has room for the keys of the screen in front,
    # F1, whose screen lists every key and screen (from these lists), and ^p.
    BINDINGS = [
        Binding("f1", "help", "Help", tooltip="this help: every key, every screen, and the words on them",
                id="app.help"),
        # Not priority: in a box being typed in (the question, a path) ? is a character.
        Binding("question_mark", "help", "Help", show=False,
                tooltip="this help: every key, every screen, and the words on them", id="app.help_key"),
        Binding("f2", "show('eval')", "Eval", show=False, id="app.eval"),
        Binding("f3", "show('check')", "Check", show=False, id="app.check"),
        Binding("f4", "show('misses')", "Misses", show=False, id="app.misses"),
        Binding("f5", "show('roster')", "Roster", show=False, id="app.roster"),
        # Hidden from the footer: a screen used once per folder (also in the palette).
        Binding("f8", "show('labels')", "Labels", show=False, id="app.labels"),
        Binding("ctrl+q", "quit", "Quit", show=False, id="app.quit"),
    ]
    COMMANDS = App.COMMANDS | {KbCommands}

    def __init__(
        self,
        memory,
        *,
        question: str | None = None,
        stable: bool = False,
        watch: bool = True,
        rerank: bool = False,
        purpose: str | None = None,
        top: int = DEFAULT_TOP,
        gold: str | None = None,
    ) -> None:
        super().__init__()
        self.memory = memory
        self.initial_question = question
        # stable: snapshot mode. Timings are hidden and the eval's SPEED block is not run,
        # so a screen is the same run after run.
        self.stable = stable
        self.watching = watch
        self.rerank = rerank
        self.top = top
        self.ask_options: dict = {"purpose": purpose} if purpose else {}
        root = memory.fleet.root
        self.gold = gold or (str(root / "gold.tsv") if (root / "gold.tsv").is_file() else None)
        self.history = History()
        self.roster = [b.name for b in memory.fleet.bases]
        self.main = MainScreen()
        self.loaded: FleetLoaded | None = None
        self.settled = False  # RoomSettled has arrived
        self.idle_gc = IdleCollector(self)

    # -- start -------------------------------------------------------------------

    def get_default_screen(self):
        return self.main

    def load(self) -> None:
        """Index the fleet; the main screen calls this once its panes are mounted."""
        self._load()

    @work(thread=True, exclusive=True, exit_on_error=False, group="index", description="index the fleet")
    def _load(self) -> None:
        snap = self.memory.snapshot()  # indexes what changed since last time, then builds the catalogue
        # What the first refusal would build in its ask (seconds on a large fleet's first
        # room, with empty panes), built while the status line says indexing: READY is ready.
        prepare = getattr(self.memory, "prepare", None)
        if prepare is not None:
            prepare()
        reports = self.memory.last_reports
        self.post_message(
            FleetLoaded(
                entries=snap.catalogue.n,
                agents=len(self.memory.fleet.bases),
                chunks=snap.chunks,
                reindexed=sum(r.touched for r in reports),
                skipped=tuple(snap.skipped),
            )
        )
        # The reader's markdown renderer, imported here in the thread once the room is ready,
        # so the first note opened does not wait for it (about 80 ms of imports).
        import rich.markdown  # noqa: F401
        # A daemon thread, not a worker: quitting during the build must not wait for it.
        threading.Thread(target=self._hold_text, daemon=True, name="kbtui-settle").start()

    def _hold_text(self) -> None:
        # The room stays up, so the text leg is answered from memory: built now, while the
        # person reads the screen, rather than on the first question (seconds at 60,000
        # chunks, during which answers come from FTS5 as before).
        hold = getattr(self.memory, "hold_text_in_memory", None)
        if hold is not None:
            hold()
        try:
            self.post_message(RoomSettled())
        except RuntimeError:  # the room was closed meanwhile (its loop is gone): nothing to settle
            pass

    def on_room_settled(self, message: RoomSettled) -> None:
        # Everything alive now lives as long as the room: out of the collector's sight, and
        # its full passes run while the person pauses (kbtui/idle_gc.py).
        self.idle_gc.start()
        self.settled = True
        self.main.text_leg_ready()

    @property
    def building_text(self) -> bool:
        """The in-memory text leg is still being built (FTS5 answers meanwhile, the same
        ranking): the status line says so. Never in snapshot mode, whose screens must not
        depend on when a thread finished."""
        return self.loaded is not None and not self.settled and not self.stable

    def on_fleet_loaded(self, message: FleetLoaded) -> None:
        self.loaded = message
        self.main.fleet_loaded(message)
        if message.skipped:
            self.notify("could not read: " + "; ".join(message.skipped[:3]), severity="warning", timeout=8)
        if self.initial_question:
            q = self.main.query_one("#question")
            q.value = self.initial_question  # Input.Changed asks it
            self.initial_question = None
        if self.watching:
            self._watch()

    def fleet_title(self, loaded: FleetLoaded) -> str:
        name = self.memory.settings.get("name") or self.memory.fleet.root.name
        agents = f"{loaded.agents} agent{'s' if loaded.agents != 1 else ''}"
        return f"{name}: {loaded.entries} entr{'ies' if loaded.entries != 1 else 'y'}, {agents}"

    # -- live reindex ------------------------------------------------------------

    @work(exclusive=True, exit_on_error=False, group="watch", description="watch the notes")
    async def _watch(self) -> None:
        from watchfiles import awatch  # deferred: only the live app needs it

        root = self.memory.fleet.root
        paths = [str(b.root) for b in self.memory.fleet.bases]
        if root not in [b.root for b in self.memory.fleet.bases]:
            paths.append(str(root))
        # The watcher's thread polls this event: set on exit, so shutting down never waits on a
        # blocked watch (without it a test run was seen to hang at exit).
        self._watch_stop = threading.Event()
        async for changes in awatch(
            *paths, watch_filter=lambda _c, p: is_watched(p), debounce=200, step=50,
            stop_event=self._watch_stop, rust_timeout=500,
        ):
            self._reindex(sorted(changes))

    def on_unmount(self) -> None:
        self.idle_gc.stop()
        stop = getattr(self, "_watch_stop", None)
        if stop is not None:
            stop.set()

    @work(thread=True, exclusive=False, exit_on_error=False, group="reindex", description="reindex")
    def _reindex(self, changes) -> None:
        before = self.memory.snapshot().records  # to tell an edit from an add: editors often replace files
        known = {str(self.memory.fleet.bases[i].root / p) for i, b in enumerate(self.memory.fleet.bases)
                 for p in before.get(b.name, {})}
        reports = self.memory.refresh()
        problems = tuple(on_base(r.base, s) for r in reports for s in r.skipped)
        self.post_message(FleetChanged(describe_changes(changes, self.memory.fleet.root, known), problems))

    def on_fleet_changed(self, message: FleetChanged) -> None:
        if message.changes:
            self.notify("; ".join(message.changes[:4]) + (" …" if len(message.changes) > 4 else ""),
                        title="notes changed, re-indexed", timeout=4)
        if message.problems:
            self.notify("\n".join(message.problems[:4]), title="could not read", severity="warning", timeout=10)
        self.main.fleet_changed(message)

    def action_reindex(self) -> None:
        self._reindex([])

    def action_pane(self, pane: str) -> None:
        self.action_show("main")
        self.main.focus_pane(pane)

    def action_toggle_rerank(self) -> None:
        if not hasattr(self.memory, "rerank"):
            self.notify("this engine has no rerank stage", severity="warning")
            return
        self.rerank = not self.rerank
        self.notify(f"rerank {'on' if self.rerank else 'off'}", timeout=2)
        self.main.reask()

    def action_purpose(self, name: str) -> None:
        """Order the reading list for a purpose ("off" for the plain fused order)."""
        if name == "off":
            self.ask_options.pop("purpose", None)
        else:
            self.ask_options["purpose"] = name
        self.notify(f"purpose: {name}", timeout=2)
        self.main.reask()

    def action_next_purpose(self) -> None:
        order = PURPOSE_CYCLE
        current = self.ask_options.get("purpose", "off")
        nxt = order[(order.index(current) + 1) % len(order)] if current in order else "off"
        self.action_purpose(nxt)

    # -- screens -----------------------------------------------------------------

    def action_show(self, name: str) -> None:
        """Bring up the screen called `name` ("main" is the main screen) over the main one."""
        while len(self.screen_stack) > 1:
            if getattr(self.screen, "NAME", None) == name:
                return
            self.pop_screen()
        if name == "main":
            return
        if name == "eval":  # kept: its last report is still there when it comes back
            # Installed, not only held: a popped screen that is not installed is removed (its
            # message loop ends), and pushing it again stacked a screen nothing drew.
            if not self.is_screen_installed("eval"):
                self.install_screen(screen_class("eval")(), "eval")
            self.push_screen("eval")
        else:
            self.push_screen(screen_class(name)())

    def action_help(self) -> None:
        """The help screen, over whatever is in front: Escape comes back to it."""
        from .help_screen import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def open_reader(self, base: str, path: str, answer=None, *, line: int | None = None) -> None:
        from .reader import ReaderScreen

        self.push_screen(ReaderScreen(base, path, answer, line=line))

    def ask(self, question: str) -> None:
        """Put `question` in the box and ask it, recording no miss: looking again at an old
        question (from the miss log or the history) is not asking it again."""
        self.action_show("main")
        q = self.main.query_one("#question")
        with q.prevent(Input.Changed):
            q.value = question
        q.cursor_position = len(question)
        self.main.request(question, submitted=False)

    # -- errors ------------------------------------------------------------------

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        # Any worker a screen did not handle: show the failure, keep the app up.
        if event.state == WorkerState.ERROR:
            w = event.worker
            self.notify(f"{w.description or w.group}: {type(w.error).__name__}: {w.error}",
                        title="failed", severity="error", timeout=10)


# -- the command line --------------------------------------------------------------


def parse_args(argv: list[str]) -> argparse.Namespace:
    from engine.cli import version_action

    p = argparse.ArgumentParser(prog="kbtui", description="The reading room for a fleet of agents kept as notes.",
                                epilog="Every PATH defaults to . (the working directory). An unanswered question "
                                       "asked with Enter is logged to kb-misses.txt (beside fleet.txt in a fleet, "
                                       "else in the folder's .kb/; KB_MISSES_PATH=FILE: there); --no-record logs none.")
    p.add_argument("--version", action=version_action("kbtui"), nargs=0, help="print kbtui's version and exit")
    p.add_argument("paths", nargs="*", default=["."], metavar="PATH", help="a base or a fleet root (default: .)")
    p.add_argument("-q", "--question", help="ask this first")
    p.add_argument("--no-mouse", action="store_true", help="leave the mouse to the terminal (its own selection)")
    p.add_argument("--no-watch", action="store_true", help="do not re-index when notes change on disk")
    p.add_argument("--rerank", action="store_true", help="re-order the reading list with the cross-encoder")
    p.add_argument("--purpose", choices=PURPOSE_NAMES, help="purpose fusion")
    p.add_argument("--top", type=int, default=DEFAULT_TOP, help="rows in the reading list")
    p.add_argument("--gold", help="answer key for the eval screen (default: gold.tsv in the fleet root)")
    p.add_argument("--coverage-rule", action="store_true", help="the coverage rule (off by default; fleet.txt: coverage_rule = on)")
    p.add_argument("--no-record", action="store_true", help="log no unanswered question (KB_MISSES_PATH=FILE chooses where)")
    p.add_argument("--serve", action="store_true", help="serve the app to a browser (textual-serve)")
    p.add_argument("--host", default="127.0.0.1", help="where --serve listens (the page is refused under any other name)")
    p.add_argument("--port", type=int, default=8000)
    return p.parse_args(argv)


def serve(args: argparse.Namespace, argv: list[str]) -> int:
    from .served import serve as serve_room  # origin and token guard the socket (kbtui/served.py)

    return serve_room(visitor_command(argv), host=args.host, port=args.port)


def visitor_command(argv: list[str]) -> str:
    """The shell command each visitor's process runs: this one's, without --serve, of this
    copy of kbtui whatever folder the server was started in (engine/notes/owncode.py)."""
    from engine.notes.owncode import python_running

    rest = [a for a in argv if a not in ("--serve",)]
    rest = _drop_opt(_drop_opt(rest, "--host"), "--port")
    return " ".join(shlex.quote(a) for a in [*python_running("kbtui.__main__"), *rest])


def _drop_opt(argv: list[str], name: str) -> list[str]:
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
            continue
        if a == name:
            skip = True
            continue
        if a.startswith(name + "="):
            continue
        out.append(a)
    return out


def run(argv: list[str]) -> int:
    args = parse_args(argv)
    if args.serve:
        return serve(args, argv)
    from engine import Memory
    from engine.errors import KbError

    try:
        memory = Memory([Path(p) for p in args.paths], resident=True, coverage_rule=args.coverage_rule or None,
                        record_misses=not args.no_record)
    except KbError as e:
        print(f"kbtui: {e}", file=sys.stderr)
        return 2
    app = KbApp(
        memory, question=args.question, watch=not args.no_watch, rerank=args.rerank, purpose=args.purpose,
        top=args.top, gold=args.gold,
    )
    app.run(mouse=not args.no_mouse)
    return app.return_code or 0
