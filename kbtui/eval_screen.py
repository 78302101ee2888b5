"""The eval screen: choose an answer key, run it in a worker with a progress bar, and read
the seed's table (file / agent / kw / score / margin / verdict per question) and its
summary blocks (FILE, AGENT, GATE, VERDICT, SPEED). VERDICT says how often each verdict was
right on this key, with the scores of right and wrong answers drawn against the floor: the
engine's own lines (engine/review/evaluate.py), so the room and `kb eval` cannot disagree."""

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
from .verdict_bar import NO_MARGIN

STRIP_ROWS = ("       correct ", "       misses  ")  # the VERDICT block's drawn rows, marked in colour


def _ok(flag: bool | None) -> Text:
    if flag is None:
        return Text("-", style="dim")
    return Text("ok") if flag else Text("MISS", style="bold reverse red")


def summary_text(report) -> Text:
    """The summary blocks of `kb eval`, as the engine renders them (below its table): the
    VERDICT block's strip drawn in colour, its marks bold, the floor bold, the dots dim."""
    lines = report.render().splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.startswith("FILE")), len(lines))
    t = Text()
    for ln in lines[start:]:
        ln = clean(ln)
        if ln.startswith(STRIP_ROWS):
            t.append(ln[:15], style="bold")
            mark = "bold reverse" if ln.startswith(STRIP_ROWS[1]) else "bold"
            for c in ln[15:]:
                t.append(c, style="dim" if c == "." else ("bold" if c == "|" else mark))
            t.append("\n")
            continue
        head, rest = ln[:7], ln[7:]
        t.append(head, style="bold")
        style = "bold" if "OVERLAPS" in rest or "SEPARATES" in rest else ""
        t.append(rest + "\n", style=style)
    if not report.fused_us:
        t.append("\nSPEED  not measured here (snapshot mode): run kb eval for the timings", style="dim")
    t.rstrip()
    return t


def margin_cell(g) -> Text:
    """The margin as the room shows it everywhere: a dash when no second file scored (the
    text table of `kb eval` keeps the seed's 1.00 there)."""
    return Text(NO_MARGIN if g.scored < 2 else f"{g.margin:5.2f}", justify="right")


class EvalTable(DataTable):
    """Down on the last row goes on to the summary below, so GATE and SPEED are reachable by
    keyboard at any height."""

    def _at_last_row(self) -> bool:
        return not self.row_count or self.cursor_row >= self.row_count - 1

    def action_cursor_down(self) -> None:
        if self._at_last_row():
            self.screen.focus_next()
        else:
            super().action_cursor_down()

    def action_page_down(self) -> None:
        if self._at_last_row():
            self.screen.focus_next()
        else:
            super().action_page_down()

    def action_scroll_end(self) -> None:
        # End: the end of the screen, the summary's last block, not the table's last column.
        self.screen.query_one("#eval-summary").focus(scroll_visible=False)
        body = self.screen.query_one("#eval-body")
        self.call_after_refresh(body.scroll_end, animate=False)


class EvalScreen(Screen):
    NAME = "eval"
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="eval.back"),
        Binding("f9", "run", "Run", id="eval.run"),
    ]
    DEFAULT_CSS = """
    EvalScreen #eval-summary:focus { background: $boost; }
    """

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
            table = EvalTable(id="eval-table", cursor_type="row")
            for label, key, width in (
                ("file", "file", 4), ("agent", "agent", 5), ("kw", "kw", 4), ("score", "score", 5),
                ("marg", "marg", 5), ("verdict", "verdict", 7), ("question", "question", None),
            ):
                table.add_column(label, key=key, width=width)
            yield table
            summary = Static(Text("Enter in the path box (or F9) runs the key against this fleet.", style="dim"),
                             id="eval-summary")
            summary.can_focus = True  # Tab and Down reach it; its scroll container scrolls it into view
            yield summary
        yield Footer(compact=True)

    def on_mount(self) -> None:
        box = self.query_one("#gold-path", Input)
        if self.app.gold and not box.value:
            box.value = self._shown_path(self.app.gold)
        elif not self.app.gold:
            self.query_one("#eval-summary", Static).update(self._no_key_text())
        box.cursor_blink = not self.app.stable
        box.focus()

    def _no_key_text(self) -> Text:
        t = Text()
        t.append("no answer key: ", style="bold")
        t.append("this fleet has no gold.tsv. Type the path of one in the box above (one question a line, "
                 "a TAB, then agent/path of the note that answers it, or - to decline) and press Enter or F9.")
        return t

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
            self.query_one("#eval-summary", Static).update(self._no_key_text())
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
        from engine.review.evaluate import run_eval

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
        self._fill_table()
        self.query_one("#eval-summary", Static).update(summary_text(r))
        table.focus()

    def _fill_table(self) -> None:
        """One row a question; the question is cut to the width left, ending in an ellipsis
        (a DataTable column clips its cell silently)."""
        r = self.report
        table = self.query_one(DataTable)
        cursor = table.cursor_row
        table.clear()
        fixed = sum(col.width for col in table.columns.values() if col.key.value != "question")
        # 2 for the vertical scrollbar the rows may bring
        flex = max(8, (table.size.width or self.app.size.width) - fixed - 2 * table.cell_padding * len(table.columns) - 2)
        for i, g in enumerate(r.graded):
            answerable = g.gold.answerable
            verdict = "none" if g.verdict == "nothing" else g.verdict
            question = Text(one_line(g.gold.question), no_wrap=True)
            if question.cell_len > flex:
                question.truncate(flex, overflow="ellipsis")
            table.add_row(
                _ok(g.file_ok), _ok(g.agent_ok if answerable else None), _ok(g.keyword_ok if answerable else None),
                Text(f"{g.score:5.1f}", justify="right"), margin_cell(g),
                Text(verdict, style="bold" if g.verdict == "hit" else ""),
                question, key=str(i),
            )
        if r.graded:
            table.move_cursor(row=min(cursor, len(r.graded) - 1))

    def on_resize(self) -> None:
        if self.report is not None:
            self.call_after_refresh(self._fill_table)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        # Enter on a row asks that question on the main screen, to see the whole answer.
        if self.report is not None and event.row_key is not None:
            self.app.ask(self.report.graded[int(event.row_key.value)].gold.question)
