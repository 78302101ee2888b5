"""The eval screen: choose an answer key, run it in a worker with a progress bar, and read
the seed's table (file / agent / kw / score / margin / verdict per question) and its
summary blocks (FILE, AGENT, GATE, SPEED)."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input, ProgressBar, Static

from .clean import clean, one_line
from .messages import EvalFinished, EvalProgress


def _ok(flag: bool | None) -> Text:
    if flag is None:
        return Text("-", style="dim")
    return Text("ok") if flag else Text("MISS", style="bold reverse red")


def summary_text(report) -> Text:
    """The summary blocks of `kb eval`, as the engine renders them (below its table)."""
    lines = report.render().splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.startswith("FILE")), len(lines))
    t = Text()
    for ln in lines[start:]:
        ln = clean(ln)
        head, rest = ln[:7], ln[7:]
        t.append(head, style="bold")
        style = "bold" if "OVERLAPS" in rest or "SEPARATES" in rest else ""
        t.append(rest + "\n", style=style)
    if not report.fused_us:
        t.append("\nSPEED  not measured here (snapshot mode): run kb eval for the timings", style="dim")
    t.rstrip()
    return t


class EvalScreen(Screen):
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="eval.back"),
        Binding("f9", "run", "Run", id="eval.run"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.report = None
        self.running = False

    def compose(self) -> ComposeResult:
        yield Static(Text(" Eval ", style="bold reverse"), id="eval-title", classes="screen-title")
        with Horizontal(id="eval-controls"):
            yield Input(placeholder="path to an answer key (question<TAB>agent/path)", id="gold-path")
            yield ProgressBar(total=1, show_eta=False, id="eval-progress")
        with VerticalScroll(id="eval-body"):
            table = DataTable(id="eval-table", cursor_type="row")
            for label, key, width in (
                ("file", "file", 4), ("agent", "agent", 5), ("kw", "kw", 4), ("score", "score", 5),
                ("marg", "marg", 5), ("verdict", "verdict", 7), ("question", "question", None),
            ):
                table.add_column(label, key=key, width=width)
            yield table
            yield Static(Text("Enter in the path box (or F9) runs the key against this fleet.", style="dim"),
                         id="eval-summary")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        box = self.query_one("#gold-path", Input)
        if self.app.gold and not box.value:
            box.value = self._shown_path(self.app.gold)
        box.cursor_blink = not self.app.stable
        box.focus()

    def _shown_path(self, path: str) -> str:
        # Relative to the fleet when inside it: shorter, and the same on every machine.
        root = self.app.memory.fleet.root
        try:
            return str(Path(path).resolve().relative_to(root))
        except ValueError:
            return path

    def _resolved(self, text: str) -> Path:
        p = Path(text).expanduser()
        return p if p.is_absolute() else self.app.memory.fleet.root / p

    @on(Input.Submitted, "#gold-path")
    def _submitted(self) -> None:
        self.action_run()

    def action_run(self) -> None:
        if self.running:
            self.notify("an eval is already running", timeout=2)
            return
        text = self.query_one("#gold-path", Input).value.strip()
        if not text:
            self.notify("name an answer key first", severity="warning", timeout=3)
            return
        self.running = True
        bar = self.query_one(ProgressBar)
        bar.update(total=None, progress=0)
        self.query_one("#eval-summary", Static).update(Text("running…", style="dim"))
        self._run(str(self._resolved(text)))

    @work(thread=True, exclusive=True, exit_on_error=False, group="eval", description="run the eval")
    def _run(self, gold: str) -> None:
        from engine.errors import KbError
        from engine.evaluate import run_eval

        def progress(done: int, total: int) -> None:
            self.post_message(EvalProgress(done, total))

        try:
            report = run_eval(self.app.memory, gold, progress=progress, speed=not self.app.stable)
        except KbError as e:
            self.post_message(EvalFinished(error=str(e)))
            return
        self.post_message(EvalFinished(report=report))

    def on_eval_progress(self, message: EvalProgress) -> None:
        self.query_one(ProgressBar).update(total=message.total, progress=message.done)

    def on_eval_finished(self, message: EvalFinished) -> None:
        self.running = False
        bar = self.query_one(ProgressBar)
        if message.error:
            bar.update(total=1, progress=0)
            # Paths inside the fleet are shown relative to it: shorter, and the same everywhere.
            error = one_line(message.error).replace(str(self.app.memory.fleet.root) + "/", "")
            self.query_one("#eval-summary", Static).update(Text(error, style="bold red"))
            return
        r = self.report = message.report
        bar.update(total=1, progress=1)
        title = Text()
        title.append(" Eval ", style="bold reverse")
        title.append(f"  {len(r.graded)} questions, {len(r.answerable)} answerable", style="bold")
        title.append(f"  {r.entries} entries across {r.agents} agents", style="dim")
        self.query_one("#eval-title", Static).update(title)
        table = self.query_one(DataTable)
        table.clear()
        for i, g in enumerate(r.graded):
            answerable = g.gold.answerable
            verdict = "none" if g.verdict == "nothing" else g.verdict
            table.add_row(
                _ok(g.file_ok), _ok(g.agent_ok if answerable else None), _ok(g.keyword_ok if answerable else None),
                Text(f"{g.score:5.1f}", justify="right"), Text(f"{g.margin:5.2f}", justify="right"),
                Text(verdict, style="bold" if g.verdict == "hit" else ""),
                Text(one_line(g.gold.question), overflow="ellipsis", no_wrap=True), key=str(i),
            )
        self.query_one("#eval-summary", Static).update(summary_text(r))
        table.focus()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        # Enter on a row asks that question on the main screen, to see the whole answer.
        if self.report is not None and event.row_key is not None:
            self.app.ask(self.report.graded[int(event.row_key.value)].gold.question)
