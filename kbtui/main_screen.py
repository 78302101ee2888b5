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

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container
from textual.screen import Screen
from textual.widgets import Footer, Input, Tab, Tabs
from textual.worker import Worker, WorkerState

from engine.query import Query

from .gate_pane import GatePane
from .keyword_pane import KeywordPane
from .messages import Answered, AskFailed, FleetChanged, FleetLoaded, Reranked
from .question_input import QuestionInput
from .reading_pane import ReadingPane
from .species_pane import SpeciesPane
from .verdict_bar import VerdictBar

# Pane ids in the order the tabs show them (narrow/short terminals show one at a time).
PANES = ("reading", "keywords", "gate", "agents")
PANE_TITLES = {"reading": "Reading list", "keywords": "Keywords", "gate": "Gate", "agents": "Agents"}


@dataclass
class _Wanted:
    qid: int
    question: str
    submitted: bool


class MainScreen(Screen):
    # The never-blocks test's control: True runs the very same ask on the UI thread, which
    # must be seen to stall key handling, so the probe is known to detect a stall.
    ask_on_ui_thread = False

    BINDINGS = [
        Binding("f6", "next_pane", "Pane", id="main.next_pane"),
        Binding("escape", "focus_question", "Question", show=False, id="main.question"),
        Binding("ctrl+l", "clear_question", "Clear", show=False, id="main.clear"),
    ]

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self._qid = 0  # the id of the newest question typed
        self._wanted: _Wanted | None = None  # the newest question not yet started
        self._busy = False  # an ask worker is running
        self._ready = False  # the fleet is indexed and the catalogue built
        self.answer = None  # the answer on screen
        self.answer_qid = -1
        self.pane = "reading"

    # -- layout ------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        app = self.app
        yield QuestionInput(app.history, id="question", placeholder="ask the fleet a question…")
        yield VerdictBar(id="verdict")
        tabs = Tabs(*(Tab(PANE_TITLES[p], id=f"tab-{p}") for p in PANES), id="pane-tabs")
        tabs.can_focus = False  # switched by F6, the palette or a click; Tab goes to the panes
        yield tabs
        with Container(id="panes"):
            # DOM order is the grid order on wide terminals: keywords beside the reading list,
            # then the agents beside the gate (the gate's sentences get the wider column).
            yield KeywordPane(id="pane-keywords", classes="pane")
            yield ReadingPane(id="pane-reading", classes="pane -shown")
            yield SpeciesPane(id="pane-agents", classes="pane")
            yield GatePane(id="pane-gate", classes="pane")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        for p in PANES:
            self.query_one(f"#pane-{p}").border_title = PANE_TITLES[p]
        self.query_one("#pane-agents").border_title = "Agents (▸ owner)"
        self.query_one(VerdictBar).show_waiting("indexing the fleet…")
        question = self.query_one("#question", Input)
        question.cursor_blink = not self.app.stable  # a blinking cursor makes snapshots flaky
        question.focus()

    # -- panes -------------------------------------------------------------------

    def show_pane(self, pane: str) -> None:
        self.pane = pane
        for p in PANES:
            self.query_one(f"#pane-{p}").set_class(p == pane, "-shown")
        tabs = self.query_one("#pane-tabs", Tabs)
        if tabs.active != f"tab-{pane}":
            tabs.active = f"tab-{pane}"

    @on(Tabs.TabActivated, "#pane-tabs")
    def _tab_activated(self, event: Tabs.TabActivated) -> None:
        if event.tab and event.tab.id:
            self.show_pane(event.tab.id.removeprefix("tab-"))

    def _tabbed(self) -> bool:
        return not (self.has_class("-wide") and self.has_class("-tall"))

    def action_next_pane(self) -> None:
        nxt = PANES[(PANES.index(self.pane) + 1) % len(PANES)]
        self.show_pane(nxt)
        if not self._tabbed() or self.focused is not self.query_one("#question"):
            self._focus_pane(nxt)

    def _focus_pane(self, pane: str) -> None:
        target = {
            "reading": "#reading-list", "keywords": "#keyword-table", "gate": "#pane-gate", "agents": "#species-table",
        }[pane]
        self.query_one(target).focus()

    def action_focus_question(self) -> None:
        self.query_one("#question", Input).focus()

    def action_clear_question(self) -> None:
        q = self.query_one("#question", Input)
        q.value = ""
        q.focus()

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
            self.show_pane("reading") if self._tabbed() else None
            self.query_one("#reading-list").focus()

    def request(self, question: str, *, submitted: bool) -> None:
        """Ask `question` as soon as the running ask (if any) returns."""
        self._qid += 1
        self._wanted = _Wanted(self._qid, question, submitted)
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
        self._kick()

    def on_ask_failed(self, message: AskFailed) -> None:
        self._busy = False
        if message.qid == self._qid:
            self.query_one(VerdictBar).show_error(message.error)
        self._kick()

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
            self.query_one("#pane-reading").border_title = "Reading list (fused; rerank refused)"
            event.stop()

    def _paint(self, answer, qid: int) -> None:
        app = self.app
        self.answer, self.answer_qid = answer, qid
        with app.batch_update():
            self.query_one(VerdictBar).show_answer(answer, show_timing=not app.stable)
            self.query_one(ReadingPane).show_answer(answer)
            self.query_one(KeywordPane).show_answer(answer)
            self.query_one(GatePane).show_answer(answer)
            self.query_one(SpeciesPane).show_answer(answer, app.roster)
            purpose = answer.query.purpose if answer.query is not None else None  # as this answer was asked
            self.query_one("#pane-reading").border_title = (
                f"{PANE_TITLES['reading']} (purpose: {purpose})" if purpose else PANE_TITLES["reading"]
            )
        if app.rerank and answer.results and hasattr(app.memory, "rerank"):
            self._rerank(qid, answer)

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
            pane = self.query_one("#pane-reading")
            pane.border_title = "Reading list (reranked)"

    def _show_empty(self) -> None:
        self.answer = None
        self.query_one(VerdictBar).show_waiting("ask a question: the answer follows your typing; Enter records a miss")
        self.query_one("#pane-reading").border_title = PANE_TITLES["reading"]
        self.query_one(ReadingPane).clear()

    # -- the fleet ---------------------------------------------------------------

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
