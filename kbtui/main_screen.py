"""The main screen: the question, the verdict, and everything one question produces.

Every engine call runs in a thread worker; answers come back as `Answered` messages that
carry the question id they were asked under, and an answer to a question the person has
already typed past is dropped. At most one ask runs at a time: keystrokes that arrive
while it runs collapse into one pending question, asked the moment the running one
returns. That is the debounce: no timer, so a single keystroke is answered at once, and a
burst of typing costs one ask per engine round-trip, not one per key.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual import events, on, work
from textual.actions import SkipAction
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Input, Tab, Tabs
from textual.worker import Worker, WorkerState

from engine.stages.purpose import PURPOSE_NAMES
from engine.query import Query

from .frame_hold import FrameHold
from .gate_pane import GatePane
from .keyword_pane import KeywordPane
from .messages import Answered, AskFailed, FleetChanged, FleetLoaded, Reranked
from .pane import Pane
from .question_input import QuestionInput
from .reading_pane import ReadingPane
from .species_pane import SpeciesPane
from .verdict_bar import BUILDING_SAYS, VerdictBar

# The panes in tab order (F6 and Tab visit them in this order after the question). A new pane
# is a Pane subclass named here; its grid place is its GRID_SLOT.
PANES: tuple[type[Pane], ...] = (ReadingPane, KeywordPane, GatePane, SpeciesPane)
PANE_NAMES = tuple(p.NAME for p in PANES)


@dataclass
class _Wanted:
    qid: int
    question: str
    submitted: bool


class MainScreen(Screen):
    # The never-blocks test's control: True runs the very same ask on the UI thread, which
    # must be seen to stall key handling, so the probe is known to detect a stall.
    ask_on_ui_thread = False

    # One focus ring at every size: the question, then each pane. F6 and Tab walk it; at
    # 80x24 the tab shown follows focus. Escape always comes back to the question.
    BINDINGS = [
        # The tooltips are what the help screen (F1) says each key does.
        Binding("f6", "focus_step(1)", "Pane", tooltip="the next pane", id="main.next_pane"),
        Binding("shift+f6", "focus_step(-1)", "Previous pane", show=False, tooltip="the pane before",
                id="main.previous_pane"),
        Binding("tab", "focus_step(1)", "Next pane", show=False, tooltip="the next pane", id="main.tab"),
        Binding("shift+tab", "focus_step(-1)", "Previous pane", show=False, tooltip="the pane before",
                id="main.shift_tab"),
        Binding("escape", "focus_question", "Question", tooltip="back to the question box", id="main.question"),
        Binding("f7", "app.next_purpose", "Purpose",
                tooltip="the reading list's order: " + ", ".join(("off", *PURPOSE_NAMES)) + ", in turn",
                id="main.purpose"),
        Binding("ctrl+l", "clear_question", "Clear", show=False, tooltip="clear the question", id="main.clear"),
        Binding("down", "leave_question", "Reading list", show=False,
                tooltip="from the question box: into the reading list, asking nothing", id="main.leave_question"),
    ]

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self._qid = 0  # the id of the newest question typed
        self._wanted: _Wanted | None = None  # the newest question not yet started
        self._busy = False  # an ask worker is running
        self._ready = False  # the fleet is indexed and the catalogue built
        self.answer = None  # the answer on screen
        self.answer_qid = -1
        self.pane = PANES[0].NAME
        self._hold: FrameHold | None = None  # one frame per keystroke: echo and answer together

    # -- layout ------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        app = self.app
        # Coming back with Escape keeps the question and puts the cursor at its end: the next
        # key refines it (Ctrl+L clears it), rather than a select-all that a letter would replace.
        yield QuestionInput(app.history, id="question", placeholder="ask the fleet a question…",
                            select_on_focus=False)
        yield VerdictBar(id="verdict")
        tabs = Tabs(*(Tab(p.TITLE.split(" (")[0], id=f"tab-{p.NAME}") for p in PANES), id="pane-tabs")
        tabs.can_focus = False  # switched by F6, Tab, the palette or a click: focus stays in the panes
        yield tabs
        with Container(id="panes"):
            # DOM order is the grid order on wide terminals: keywords beside the reading list,
            # then the agents beside the gate (the gate's sentences get the wider column).
            for p in sorted(PANES, key=lambda p: p.GRID_SLOT):
                yield p(id=f"pane-{p.NAME}", classes="pane -shown" if p is PANES[0] else "pane")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        # Every pane is composed and mounted by now (a screen mounts after its children), so
        # the index is loaded from here: no answer can arrive before the panes that show it.
        question = self.query_one("#question", Input)
        question.cursor_blink = not self.app.stable  # a blinking cursor makes snapshots flaky
        question.focus()
        if self.app.loaded is None:
            self.query_one(VerdictBar).show_waiting("indexing the fleet…")
            self.app.load()

    def panes(self) -> list[Pane]:
        return [self.query_one(f"#pane-{p.NAME}", Pane) for p in PANES]

    # -- panes and focus ---------------------------------------------------------

    def _tabbed(self) -> bool:
        return not (self.has_class("-wide") and self.has_class("-tall"))

    def show_pane(self, pane: str) -> None:
        """Show `pane` (under the tabs when the terminal is small). Sets the tab without
        re-sending its TabActivated: a switch the tab itself caused is never sent back."""
        self.pane = pane
        for p in self.panes():
            p.set_class(p.NAME == pane, "-shown")
        tabs = self.query_one("#pane-tabs", Tabs)
        if tabs.active != f"tab-{pane}":
            with tabs.prevent(Tabs.TabActivated):
                tabs.active = f"tab-{pane}"
        self._paint_panes()  # a pane hidden under the tabs was left as it was: bring it up to date

    @on(Tabs.TabActivated, "#pane-tabs")
    def _tab_activated(self, event: Tabs.TabActivated) -> None:
        # A click on a tab. Stale messages (the tab is no longer the active one) and the
        # pane already shown are ignored, so no two handlers can answer each other forever.
        name = (event.tab.id or "").removeprefix("tab-") if event.tab else ""
        if name not in PANE_NAMES or event.tabs.active != event.tab.id or name == self.pane:
            return
        self.focus_pane(name)

    def focus_pane(self, name: str) -> None:
        self.show_pane(name)
        target = self.query_one(f"#pane-{name}", Pane).focus_target()
        # A pane just shown is displayed on the next refresh: focus it then.
        self.call_after_refresh(target.focus)

    def _ring(self) -> list[str]:
        return ["question", *PANE_NAMES]

    def _ring_position(self) -> str:
        focused = self.focused
        if focused is None or focused.id == "question":
            return "question"
        pane = self._pane_of(focused)
        return pane.NAME if pane is not None else "question"

    def _pane_of(self, widget: Widget | None) -> Pane | None:
        while widget is not None and not isinstance(widget, Pane):
            widget = widget.parent if isinstance(widget.parent, Widget) else None
        return widget

    def action_focus_step(self, step: int) -> None:
        ring = self._ring()
        # Focus moves on the next refresh: keys pressed in one tick step from where the last
        # one is going, not from where focus still is.
        here = getattr(self, "_going_to", None) or self._ring_position()
        nxt = ring[(ring.index(here) + step) % len(ring)]
        self._going_to = nxt
        self.call_after_refresh(self._arrived)
        if nxt == "question":
            self.action_focus_question()
        else:
            self.focus_pane(nxt)

    def _arrived(self) -> None:
        self._going_to = None

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        # The tab shown follows focus, however focus got there (F6, Tab, a click, Enter).
        pane = self._pane_of(event.widget)
        if pane is not None and pane.NAME != self.pane:
            self.show_pane(pane.NAME)

    def action_focus_question(self) -> None:
        self.query_one("#question", Input).focus()

    def on_key(self, event: events.Key) -> None:
        # "type to ask" holds on every pane: a printable key that no binding where focus is
        # claims starts a new question (the question box stops its own keys before this).
        # Space is the panes' key and begins no question, so it is left to their bindings.
        if not event.is_printable:
            return
        if not self._in_question() and (event.key == "space" or event.key in self.active_bindings):
            return
        self._typed_on_pane(event, event.character or "")

    def on_paste(self, event: events.Paste) -> None:
        # A paste on a pane asks what was pasted, as a key there does (its first line, as the
        # question box itself keeps of a paste).
        lines = event.text.splitlines()
        if lines:
            self._typed_on_pane(event, lines[0])

    def _in_question(self) -> bool:
        return self.focused is self.query_one("#question", Input)

    def _typed_on_pane(self, event: events.Event, text: str) -> None:
        event.stop()
        event.prevent_default()
        box = self.query_one("#question", Input)
        if self._in_question():
            # Sent to the pane in the same write as the key that moved focus here (the app
            # routes a write's keys before the first is handled): the question's next letters.
            box.insert_text_at_cursor(text)
        else:
            self.start_question(text)

    def start_question(self, text: str) -> None:
        """A new question typed from a pane: the one it replaces goes into the history (Up
        brings it back). Focus moves now, so the keys sent after this one land in the box."""
        box = self.query_one("#question", Input)
        self.app.history.add(box.value)
        box.value = text
        box.cursor_position = len(text)
        self.set_focus(box)

    def action_clear_question(self) -> None:
        q = self.query_one("#question", Input)
        q.value = ""
        q.focus()

    def action_leave_question(self) -> None:
        # Down from the question (past its history): into the reading list, asking nothing and
        # recording no miss. Focus moves now, not after a refresh: Down and Enter sent in one
        # terminal write reach the bindings back to back, and Enter must open the row.
        if self.focused is not self.query_one("#question", Input):
            raise SkipAction()
        self.show_pane(ReadingPane.NAME)
        self.set_focus(self.query_one(f"#pane-{ReadingPane.NAME}", Pane).focus_target())

    # -- asking ------------------------------------------------------------------

    @on(Input.Changed, "#question")
    def _typed(self, event: Input.Changed) -> None:
        self.request(event.value, submitted=False)

    @on(Input.Submitted, "#question")
    def _submitted(self, event: Input.Submitted) -> None:
        self.app.history.add(event.value)
        self.request(event.value, submitted=True)
        # Type, Enter, arrows, Enter: the reading list is where the next key belongs.
        if event.value.strip():
            self.focus_pane(ReadingPane.NAME)

    def request(self, question: str, *, submitted: bool) -> None:
        """Ask `question` as soon as the running ask (if any) returns."""
        self._qid += 1
        self._wanted = _Wanted(self._qid, question, submitted)
        self.app.idle_gc.activity()
        self._kick()

    def reask(self) -> None:
        """Ask the question on screen again (the notes changed); never records a miss."""
        self.request(self.query_one("#question", Input).value, submitted=False)

    def _kick(self) -> None:
        if self._busy or not self._ready or self._wanted is None:
            return
        wanted, self._wanted = self._wanted, None
        if not wanted.question.strip():
            self._show_empty()
            return
        self._busy = True
        if self._hold is None:
            self._hold = FrameHold(self.app)
        self._hold.hold()
        if self.ask_on_ui_thread:
            self._ask_now(wanted.qid, wanted.question, wanted.submitted)
        else:
            self._ask(wanted.qid, wanted.question, wanted.submitted)

    @work(thread=True, exclusive=True, exit_on_error=False, group="ask", description="ask")
    def _ask(self, qid: int, question: str, submitted: bool) -> None:
        self._ask_now(qid, question, submitted)

    def _ask_now(self, qid: int, question: str, submitted: bool) -> None:
        app = self.app
        # A miss is recorded only when the person presses Enter: the prefixes typed on
        # the way to a question are not questions anybody asked.
        answer = app.memory.ask(Query(question, top=app.top, record_miss=submitted, **app.ask_options))
        self.post_message(Answered(qid, answer, submitted))

    def on_answered(self, message: Answered) -> None:
        self._busy = False
        if message.qid == self._qid:  # otherwise stale: a newer question is already waiting
            self._paint(message.answer, message.qid)
            self.set_timer(0.003, self._release_frame)
        self._kick()

    def on_ask_failed(self, message: AskFailed) -> None:
        self._busy = False
        if message.qid == self._qid:
            self.query_one(VerdictBar).show_error(message.error)
        self._release_frame()
        self._kick()

    def _release_frame(self) -> None:
        if self._hold is not None:
            self._hold.release()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if worker.group == "ask" and event.state == WorkerState.ERROR:
            # The engine raised: say so where the verdict would be, and keep answering.
            self.post_message(AskFailed(self._qid, f"{type(worker.error).__name__}: {worker.error}"))
            event.stop()
        elif worker.group == "rerank" and event.state == WorkerState.ERROR:
            # A refusal names its own numbers and cure; the fused list stays, and says so.
            text = str(worker.error)
            if not text.startswith("rerank refused"):
                text = f"rerank refused: {text}"
            self.app.notify(text, severity="warning", timeout=8)
            self.query_one(ReadingPane).border_title = f"{ReadingPane.TITLE} (fused; rerank refused)"
            event.stop()

    def _paint(self, answer, qid: int) -> None:
        app = self.app
        self.answer, self.answer_qid = answer, qid
        with app.batch_update():
            self.query_one(VerdictBar).show_answer(answer, show_timing=not app.stable, building=app.building_text)
            self._paint_panes()
        if app.rerank and answer.results and hasattr(app.memory, "rerank"):
            self._rerank(qid, answer)

    def _paint_panes(self) -> None:
        """Paint the answer on screen into the panes that can be seen. Under the tabs (a small
        terminal) the hidden panes are skipped, tables and all: each is painted when shown,
        and skips the repaint when what it shows has not changed."""
        if self.answer is None:
            return
        tabbed = self._tabbed()
        for pane in self.panes():
            if not tabbed or pane.NAME == self.pane:
                pane.paint(self.answer)

    def on_resize(self) -> None:
        # Growing past the breakpoints shows every pane: those skipped under the tabs catch up
        # (after the refresh, once the size classes are set).
        self.call_after_refresh(self._paint_panes)

    @work(thread=True, exclusive=True, exit_on_error=False, group="rerank", description="rerank")
    def _rerank(self, qid: int, answer) -> None:
        # The slower stage arrives after the fused list has painted; owner and verdict stay.
        # The answer carries its Query: the stage reads the page's options from it.
        reranked = self.app.memory.rerank(answer)
        self.post_message(Reranked(qid, reranked))

    def on_reranked(self, message: Reranked) -> None:
        if message.qid == self.answer_qid:
            self.answer = message.answer
            self.query_one(ReadingPane).show_results(message.answer.results)
            self.query_one(ReadingPane).forget()
            self.query_one(ReadingPane).border_title = f"{ReadingPane.TITLE} (reranked)"

    def _show_empty(self) -> None:
        self.answer = None
        if self.app.loaded is None:
            self.query_one(VerdictBar).show_waiting(*self.ready_lines())
        else:
            self.query_one(VerdictBar).show_ready(*self.ready_lines())
        for pane in self.panes():
            pane.clear()
            pane.forget()

    # -- the fleet ---------------------------------------------------------------

    def ready_lines(self) -> tuple[str, ...]:
        """The status line once the index is current, with its figures (built or found),
        longest first: the bar shows the first that fits its width."""
        loaded = self.app.loaded
        if loaded is None:
            return ("indexing the fleet…",)
        how = f"{loaded.reindexed} note{'s' if loaded.reindexed != 1 else ''} indexed now" if loaded.reindexed \
            else "index up to date"
        # Under the READY badge: what to do, then where every key is. Whole at 80 columns
        # for the demo and a found index; a first build with five-digit figures (60,000
        # chunks, 5,230 notes) drops the tail rather than cutting it, and the figures stay
        # exact. Enter's miss log is said by a miss's own reply, where it applies.
        head = f"{loaded.chunks} chunks, {how}. Type a question"
        if self.app.building_text:
            # The building notice goes before the F1 hint does: it is the one that passes.
            return (head + f" ({BUILDING_SAYS}); F1 for help", head + f" ({BUILDING_SAYS})", head + "; F1 for help",
                    head)
        return (head + "; F1 lists every key", head + "; F1 for help", head)

    def text_leg_ready(self) -> None:
        """The in-memory text leg is built: the status line stops saying it is building."""
        if self.answer is not None:
            self.query_one(VerdictBar).show_answer(self.answer, show_timing=not self.app.stable)
        elif self._ready and not self.query_one("#question", Input).value.strip():
            self.query_one(VerdictBar).show_ready(*self.ready_lines())

    def fleet_loaded(self, message: FleetLoaded) -> None:
        self._ready = True
        q = self.query_one("#question", QuestionInput)
        q.border_title = self.app.fleet_title(message)
        if self._wanted is None and not q.value.strip():
            self._show_empty()
        self._kick()

    def fleet_changed(self, message: FleetChanged) -> None:
        self.reask()

    # -- opening notes -----------------------------------------------------------

    def on_keyword_pane_open(self, message: KeywordPane.Open) -> None:
        self.app.open_reader(message.base, message.path, self.answer)

    def on_reading_pane_why(self, message: ReadingPane.Why) -> None:
        from .why_screen import WhyScreen

        if self.answer is not None and message.index < len(self.answer.results):
            self.app.push_screen(WhyScreen(self.answer.results[message.index]))

    def on_reading_pane_open(self, message: ReadingPane.Open) -> None:
        self.app.open_reader(message.base, message.path, self.answer)
